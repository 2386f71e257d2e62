"""Inspect entry point (``[project.entry-points.inspect_ai]``): registers every task.

Importing the task modules registers their ``@task`` functions under the ``conceptcomb/``
prefix, which is what ``inspect eval conceptcomb/<task>`` looks up.
"""

from conceptcomb.common.offline import prime_tiktoken_cache

prime_tiktoken_cache()

from conceptcomb.abspyramid.inspect_tasks import TASKS as ABSPYRAMID_TASKS  # noqa: E402
from conceptcomb.ccpt.inspect_tasks import TASKS as CCPT_TASKS  # noqa: E402
from conceptcomb.cggc.inspect_tasks import TASKS as CGGC_TASKS  # noqa: E402
from conceptcomb.mcrae.inspect_tasks import TASKS as MCRAE_TASKS  # noqa: E402

__all__ = ["ABSPYRAMID_TASKS", "CCPT_TASKS", "CGGC_TASKS", "MCRAE_TASKS"]

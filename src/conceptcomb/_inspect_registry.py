"""Inspect entry point (``[project.entry-points.inspect_ai]``): registers every task.

Importing the task modules registers their ``@task`` functions under the ``conceptcomb/``
prefix, which is what ``inspect eval conceptcomb/<task>`` looks up.
"""

from conceptcomb.common.offline import prime_tiktoken_cache

prime_tiktoken_cache()

from conceptcomb.ccpt.inspect_tasks import TASKS as CCPT_TASKS  # noqa: E402
from conceptcomb.cggc.inspect_tasks import TASKS as CGGC_TASKS  # noqa: E402

__all__ = ["CCPT_TASKS", "CGGC_TASKS"]

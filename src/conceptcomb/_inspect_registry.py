"""Inspect entry point (``[project.entry-points.inspect_ai]``): registers every task.

Importing each registered benchmark's ``inspect_tasks`` module (`conceptcomb.benchmarks`)
registers its ``@task`` functions under the ``conceptcomb/`` prefix, which is what ``inspect
eval conceptcomb/<task>`` looks up.
"""

import importlib

from conceptcomb.benchmarks import benchmarks
from conceptcomb.common.offline import prime_tiktoken_cache

prime_tiktoken_cache()

for _benchmark in benchmarks():
    importlib.import_module(_benchmark.inspect_tasks)

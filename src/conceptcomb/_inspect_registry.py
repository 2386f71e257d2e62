"""Inspect entry point (``[project.entry-points.inspect_ai]``): registers every task.

Importing each registered benchmark's ``inspect_tasks`` module (`conceptcomb.benchmarks`)
registers its ``@task`` functions under the ``conceptcomb/`` prefix, which is what ``inspect
eval conceptcomb/<task>`` looks up. Importing it writes nothing: Inspect imports every
package's entry point, whichever task runs (tiktoken's offline file is written when one of
our tasks is built, `conceptcomb.frameworks.inspect_tasks.build_task`).
"""

import importlib

from conceptcomb.benchmarks import benchmarks

for _benchmark in benchmarks():
    importlib.import_module(_benchmark.inspect_tasks)

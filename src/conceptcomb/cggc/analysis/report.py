"""``conceptcomb cggc report``: Table 4 (id, ood and the gap) from lm-eval or Inspect results.

The same values and gap as the report's CGGC Table 4 (`conceptcomb.cggc.tables`), as text.
Reads lm-eval ``results_*.json`` files (or folders holding them), Inspect logs and
``conceptcomb score`` outputs with `conceptcomb.common.results_reader` (as ``conceptcomb
report`` does), finds the CGGC tasks in them, and prints one row per task plus the gap
(id minus ood) for every id/ood pair of the same framework and variant (``cggc_id`` /
``cggc_ood``, ``cggc_id_script`` / ``cggc_ood_script``, ``cggc_id_test_typeA`` /
``cggc_ood_test_typeA``). A task run with ``test_type`` or ``packaging`` options is named
with them (``cggc_id [test_type=A]``). Inspect rows are marked "(inspect)", rescored ones
"(conceptcomb score)"; ``conceptcomb report`` gives Tables 6 and 7 and Fig. 4 in full.

Under the values: Table 4's gap (id - ood) and Table 7's levels (against the easy level) and
orders (easy-to-hard against hard-to-easy) as paired differences on the same test items,
with 95% intervals and Holm-adjusted p, where the runs kept per-item scores (lm-eval
``--log_samples``, Inspect logs, bundles). They are computed by the leaderboard's
statistics, which this benchmark's layer cannot import: the ``conceptcomb`` command hands
them in (``args.table_differences``, `conceptcomb.leaderboard.report.variants.text_report`).
"""

from __future__ import annotations

import argparse
import math
from functools import lru_cache
from pathlib import Path

from conceptcomb.cggc.metrics import METRICS
from conceptcomb.cggc.tables import cggc_gap, cggc_table4, cggc_table7, placement
from conceptcomb.cggc.tasks import all_specs, verified_specs
from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.results_reader import read_runs
from conceptcomb.common.runs import INSPECT, LM_EVAL, RESCORED, Run, TaskRun
from conceptcomb.common.tables import Cell

Scores = dict[str, float]


# Rows of the same task from another framework carry its name, as the table shows them.
_FRAMEWORK_SUFFIX = {LM_EVAL: "", INSPECT: " (inspect)", RESCORED: " (conceptcomb score)"}


@lru_cache(maxsize=1)
def _task_names() -> frozenset[str]:
    return frozenset(spec.name for spec in all_specs() + verified_specs()) | {"cggc"}


def _cggc_only(task: str) -> str | None:
    return "cggc" if task in _task_names() else None


def collect(paths: list[Path]) -> dict[str, Scores]:
    """Table 4's values per task, read as ``conceptcomb report`` reads results."""
    return values(read_runs(paths, _cggc_only))


def values(runs: list[Run]) -> dict[str, Scores]:
    """Table 4's values per task of the runs."""
    found: dict[str, Scores] = {}
    for run in runs:
        suffix = _FRAMEWORK_SUFFIX.get(run.framework, f" ({run.framework})")
        for result in run.tasks.values():
            found[_label(result) + suffix] = {
                info.name: math.nan if metric.value is None else metric.value
                for info in METRICS
                if (metric := result.metrics.get(info.name)) is not None
            }
    return found


def _label(result: TaskRun) -> str:
    """The task's name, plus the options that change what it measured (a ``cggc_id`` run
    with ``test_type=A`` is not Table 4's cggc_id)."""
    where = placement(result)
    name = result.task
    if where is not None and where.test_type and "test_type" not in name:
        name += f" [test_type={where.test_type}]"
    if where is not None and where.packaging and not name.endswith(("_d13", "_d22")):
        name += f" [packaging={where.packaging}]"
    return name


def _cells(scores: Scores) -> dict[str, Cell]:
    return {name: Cell(value) for name, value in scores.items()}


def _cell(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.2f}"


def table4(found: dict[str, Scores]) -> str:
    header = f"{'task':<32}" + "".join(f"{info.title:>10}" for info in METRICS)
    lines = [header]
    for task in sorted(found):
        lines.append(
            f"{task:<32}" + "".join(f"{_cell(found[task].get(i.name)):>10}" for i in METRICS)
        )
    for task in sorted(found):
        if not task.startswith("cggc_id"):
            continue
        partner = "cggc_ood" + task.removeprefix("cggc_id")
        if partner in found:
            gap = cggc_gap(_cells(found[task]), _cells(found[partner]))  # as the report's
            values = [gap[i.name].value if i.name in gap else None for i in METRICS]
            name = f"gap{task.removeprefix('cggc_id')} (id - ood)"
            lines.append(f"{name:<32}" + "".join(f"{_cell(value):>10}" for value in values))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", type=Path, help="lm-eval output folders/files, Inspect logs"
    )


def run(args: argparse.Namespace) -> int:
    runs = read_runs(args.results, _cggc_only)
    found = values(runs)
    if not found:
        raise DataFormatError("no CGGC task results in " + ", ".join(map(str, args.results)))
    print(table4(found))
    differences = getattr(args, "table_differences", None)
    if differences is not None:
        for line in differences([cggc_table4(runs), cggc_table7(runs)]):
            print(line)
    return 0

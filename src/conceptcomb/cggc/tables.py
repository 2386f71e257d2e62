"""CGGC's leaderboard tables in the paper's layouts: Table 4 (id, ood, gap), Table 6 (the
gap per structure type, with t-tests), Table 7 and Fig. 4 (packaging).

A run's task is placed by what it ran, not by its name alone: `placement` reads the task's
name and its options (lm-eval ``--metadata``, Inspect ``-T``), so ``cggc_id`` run with
``test_type=A`` is a Table 6 row, never a Table 4 one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from conceptcomb.cggc.analysis.per_item import dataset_sha256, gap_ttests
from conceptcomb.cggc.published import (
    CGGC_FIG4,
    CGGC_TABLE4,
    CGGC_TABLE6,
    CGGC_TABLE7,
    CGGC_TABLE7_TASKS,
    published,
)
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.runs import Run, TaskRun
from conceptcomb.common.tables import (
    Cell,
    Column,
    PlotSpec,
    Table,
    metric_cell,
    our_row,
    published_rows,
)


@dataclass(frozen=True)
class Placement:
    """What a task run measured: its name's variant, and the options that move it to
    another table (the test items' type, the packaging of the demonstrations)."""

    base: str  # the task's name without test_type / packaging (cggc_id, cggc_ood_script, ...)
    test_type: str | None
    packaging: str | None  # "1&3" / "2&2"


def placement(task: TaskRun) -> Placement | None:
    """The task's placement, or None when it is not a CGGC task we know."""
    from conceptcomb.cggc.demos import parse_packaging
    from conceptcomb.cggc.tasks import spec_by_name

    try:
        spec = spec_by_name(task.task)
        packing = parse_packaging(task.options.get("packaging"))
    except ConfigError:
        return None
    test_type = spec.test_type or str(task.options.get("test_type") or "").upper() or None
    packaging = spec.packaging or ("&".join(map(str, packing)) if packing else None)
    base = replace(spec, test_type=None, packaging=None).name
    return Placement(base, test_type, packaging)


def dataset_note(run: Run, tasks: list[TaskRun]) -> str:
    """Which CGGC dataset the run's tasks read (by the sha256 the runs recorded)."""
    from conceptcomb.cggc.data import PACKAGED_SHA256

    shas = sorted({sha or "not recorded" for sha in map(dataset_sha256, tasks)})
    named = [f"{sha[:12]} (shipped)" if sha == PACKAGED_SHA256 else sha[:12] for sha in shas]
    return f"{run.model.label} ({run.framework}): CGGC dataset sha256 {', '.join(named)}"


def _note_datasets(table: Table, run: Run, shown: list[TaskRun]) -> None:
    """A note naming the dataset of the run's rows in the table (if it has rows)."""
    if shown:
        table.notes.append(dataset_note(run, shown))


def _add_our_rows(
    table: Table,
    runs: Iterable[Run],
    rows: dict[str, tuple[str, dict[str, str]]],
    references: dict[str, str] | None = None,
) -> None:
    """Per run, a row per label whose task (name, options) it ran, paired with the row its
    ``references`` name where the run has it; then its datasets' note."""
    for run in runs:
        shown: list[TaskRun] = []
        for label, (task_name, options) in rows.items():
            tasks, cells = _find(run, shown, task_name, **options)
            if tasks:
                reference = (references or {}).get(label)
                versus = (label, reference) if reference else None
                table.rows.append(our_row(run, label, tasks, cells, versus=versus))
        _note_datasets(table, run, shown)


def _find(
    run: Run,
    shown: list[TaskRun],
    base: str,
    test_type: str | None = None,
    packaging: str | None = None,
) -> tuple[list[TaskRun], dict[str, Cell]]:
    """The run's task placed at (base, test_type, packaging), with its cells, if it ran
    (added to ``shown``)."""
    from conceptcomb.cggc.metrics import METRIC_NAMES

    wanted = Placement(base, test_type, packaging)
    for task in run.tasks.values():
        if placement(task) == wanted:
            cells = {
                m: c
                for m in METRIC_NAMES
                if (c := metric_cell(task.metrics.get(m), (task.task, m)))
            }
            shown.append(task)
            return [task], cells
    return [], {}


def _cggc_table(key: str, title: str) -> Table:
    """An empty table of CGGC's metrics, in the paper's order and precision."""
    from conceptcomb.cggc.metrics import METRICS

    columns = [Column(info.name, info.title, "", True) for info in METRICS]
    return Table(key, "cggc", title, columns, digits=2)


def cggc_gap(id_cells: dict[str, Cell], ood_cells: dict[str, Cell]) -> dict[str, Cell]:
    """Table 4's gap row: id - ood, per metric both have."""
    return {
        name: Cell(id_cells[name].value - ood_cells[name].value)  # type: ignore[operator]
        for name in id_cells.keys() & ood_cells.keys()
        if id_cells[name].value is not None and ood_cells[name].value is not None
    }


def cggc_table4(runs: Iterable[Run]) -> Table:
    table = _cggc_table(
        CGGC_TABLE4,
        "CGGC in-distribution vs compositional generalization (Fu and Frank 2024, Table 4)",
    )
    for run in runs:
        shown: list[TaskRun] = []
        for suffix, style in (("", ""), ("_script", " (authors' script prompt)")):
            id_tasks, id_cells = _find(run, shown, f"cggc_id{suffix}")
            ood_tasks, ood_cells = _find(run, shown, f"cggc_ood{suffix}")
            if id_tasks:
                table.rows.append(our_row(run, "id" + style, id_tasks, id_cells))
            if ood_tasks:
                table.rows.append(our_row(run, "ood" + style, ood_tasks, ood_cells))
            if id_tasks and ood_tasks:
                gap = cggc_gap(id_cells, ood_cells)
                versus = ("id" + style, "ood" + style)  # paired on the same test items
                row = our_row(run, "gap" + style, id_tasks + ood_tasks, gap, versus=versus)
                table.rows.append(row)
        _note_datasets(table, run, shown)
    table.rows += published_rows(published(), CGGC_TABLE4)
    table.notes += [
        "Scores are x100 (CIDEr x10), as CommonGen reports them; gap = id - ood (smaller is "
        "better).",
        "Our datasets are built with the paper's method (conceptcomb cggc build), not the "
        "authors' unpublished files: compare trends, not the second decimal.",
    ]
    return table


def cggc_table6(runs: Iterable[Run]) -> Table:
    """id, ood and their gap on the test items of each structure type, and whether the
    types' gaps differ (Welch's t-test on the per-item gaps, 5%)."""
    from conceptcomb.cggc.graphs import STRUCTURE_TYPES

    table = _cggc_table(
        CGGC_TABLE6, "CGGC gap per structure type of the test items (Fu and Frank 2024, Table 6)"
    )
    for run in runs:
        shown, per_type = [], {}
        for kind in STRUCTURE_TYPES:
            id_tasks, id_cells = _find(run, shown, "cggc_id", test_type=kind)
            ood_tasks, ood_cells = _find(run, shown, "cggc_ood", test_type=kind)
            for setting, tasks, cells in (
                ("id", id_tasks, id_cells),
                ("ood", ood_tasks, ood_cells),
            ):
                if tasks:
                    table.rows.append(our_row(run, f"{setting} (type {kind})", tasks, cells))
            if id_tasks and ood_tasks:
                gap = cggc_gap(id_cells, ood_cells)
                tasks = id_tasks + ood_tasks
                table.rows.append(our_row(run, f"gap (type {kind})", tasks, gap))
                per_type[kind] = (id_tasks[0], ood_tasks[0])
        if len(per_type) >= 2:
            table.notes.append(f"{run.model.label} ({run.framework}): {gap_ttests(per_type)}")
        _note_datasets(table, run, shown)
    table.rows += published_rows(published(), CGGC_TABLE6)
    table.notes.insert(
        0,
        "The gap is id - ood on the same items of one type (cggc_id_test_typeX, "
        "cggc_ood_test_typeX, or test_type=X). t-tests: Welch's, two-sided, on the per-item "
        "gaps of two types (the paper's pairwise t-test at 5% ran over 3 seeds); * = "
        "significant at 5%. They need the per-item scores: lm-eval --log_samples, or an "
        "Inspect log.",
    )
    return table


def cggc_table7(runs: Iterable[Run]) -> Table:
    table = _cggc_table(
        CGGC_TABLE7, "CGGC difficulty-based demonstrations, ood (Fu and Frank 2024, Table 7)"
    )
    rows = {f"{setting} ({name})": (name, {}) for setting, name in CGGC_TABLE7_TASKS.items()}
    labels = list(rows)  # easy, medium, hard; easy-to-hard, hard-to-easy
    # Paired on the same ood test items: each level against the easy one, and the orders.
    references = {labels[1]: labels[0], labels[2]: labels[0], labels[3]: labels[4]}
    _add_our_rows(table, runs, rows, references)
    table.rows += published_rows(published(), CGGC_TABLE7)
    return table


def cggc_fig4(runs: Iterable[Run]) -> Table:
    table = _cggc_table(
        CGGC_FIG4, "CGGC packaging of the primitives in the demonstrations, ood (Fig. 4)"
    )
    rows = {f"D{packing}": ("cggc_ood", {"packaging": packing}) for packing in ("1&3", "2&2")}
    _add_our_rows(table, runs, rows)
    table.notes.append(
        "Items whose label has another number of primitive relations than 4 are left out; the "
        "paper prints Fig. 4 as a plot only, so there is no published row."
    )
    return table


def plots() -> dict[str, list[PlotSpec]]:
    """Table key -> its plots (drawn only when the report asks: matplotlib is optional)."""
    from conceptcomb.common.plots import gap_plot

    return {
        CGGC_TABLE4: [("gap", gap_plot, "id vs ood per model and metric: the gap is the distance.")]
    }


def tables(runs: list[Run]) -> list[Table]:
    """Every leaderboard table of the benchmark, built from the runs (papers' rows after)."""
    return [cggc_table4(runs), cggc_table6(runs), cggc_table7(runs), cggc_fig4(runs)]

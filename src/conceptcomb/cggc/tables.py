"""CGGC's leaderboard tables in the paper's layouts: Table 4 (id, ood, gap) and Table 7."""

from __future__ import annotations

from collections.abc import Iterable

from conceptcomb.cggc.published import (
    CGGC_TABLE4,
    CGGC_TABLE7,
    CGGC_TABLE7_TASKS,
    published,
)
from conceptcomb.common.runs import Run
from conceptcomb.common.tables import (
    Cell,
    Column,
    PlotSpec,
    Table,
    collect,
    our_row,
    published_rows,
)


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
    from conceptcomb.cggc.metrics import METRIC_NAMES

    table = _cggc_table(
        CGGC_TABLE4,
        "CGGC in-distribution vs compositional generalization (Fu and Frank 2024, Table 4)",
    )
    for run in runs:
        for suffix, style in (("", ""), ("_script", " (authors' script prompt)")):
            id_tasks, id_cells = collect(run, {f"cggc_id{suffix}": ("", list(METRIC_NAMES))})
            ood_tasks, ood_cells = collect(run, {f"cggc_ood{suffix}": ("", list(METRIC_NAMES))})
            if id_tasks:
                table.rows.append(our_row(run, "id" + style, id_tasks, id_cells))
            if ood_tasks:
                table.rows.append(our_row(run, "ood" + style, ood_tasks, ood_cells))
            if id_tasks and ood_tasks:
                gap = cggc_gap(id_cells, ood_cells)
                table.rows.append(our_row(run, "gap" + style, id_tasks + ood_tasks, gap))
    table.rows += published_rows(published(), CGGC_TABLE4)
    table.notes += [
        "x100, CIDEr x10, as CommonGen reports them. gap = id - ood (smaller is better).",
        "Our datasets are built with the paper's method (conceptcomb cggc build), not the "
        "authors' unpublished files: compare trends, not the second decimal.",
    ]
    return table


def cggc_table7(runs: Iterable[Run]) -> Table:
    from conceptcomb.cggc.metrics import METRIC_NAMES

    table = _cggc_table(
        CGGC_TABLE7, "CGGC difficulty-based demonstrations, ood (Fu and Frank 2024, Table 7)"
    )
    for run in runs:
        for setting, task_name in CGGC_TABLE7_TASKS.items():
            tasks, cells = collect(run, {task_name: ("", list(METRIC_NAMES))})
            if tasks:
                table.rows.append(our_row(run, f"{setting} ({task_name})", tasks, cells))
    table.rows += published_rows(published(), CGGC_TABLE7)
    return table


def plots() -> dict[str, list[PlotSpec]]:
    """Table key -> its plots (drawn only when the report asks: matplotlib is optional)."""
    from conceptcomb.common.plots import gap_plot

    return {
        CGGC_TABLE4: [("gap", gap_plot, "id vs ood per model and metric: the gap is the distance.")]
    }


def tables(runs: list[Run]) -> list[Table]:
    """Every leaderboard table of the benchmark, built from the runs (papers' rows after)."""
    return [cggc_table4(runs), cggc_table7(runs)]

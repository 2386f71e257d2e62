"""The papers' comparison tables with their tests: each row a benchmark's table pairs with
another (``Row.versus``: a variant against the paper's reference variant, CGGC's gap) gets,
per column, the paired difference of the two rows' runs on the items both hold, its 95%
interval and its p-value adjusted by Holm's method over the table's differences.

The benchmark says which rows are compared (its ``tables.py``); the per-item scores are read
as ``conceptcomb compare`` reads them (`conceptcomb.leaderboard.compare.items`) and compared
as it compares them (`conceptcomb.leaderboard.compare.comparison.compare_pairing`): paired t
(clustered by the items' unit), exact McNemar, or the paired bootstrap of a corpus metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.runs import TaskRun
from conceptcomb.common.tables import OURS, PairedDifference, Row, Table
from conceptcomb.leaderboard.compare.comparison import Distributions, compare_pairing
from conceptcomb.leaderboard.compare.items import TaskItems, read_argument
from conceptcomb.leaderboard.statistics import stats


@dataclass
class ItemReader:
    """Each results file's per-item scores, read once (a file holds many tasks)."""

    data_dir: str | None = None
    found: dict[Path, list[TaskItems]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def items(self, task: TaskRun) -> TaskItems | None:
        if task.source not in self.found:
            try:
                what = read_argument(task.source, self.data_dir)
            except (ConceptcombError, OSError) as err:
                self.notes.append(f"{task.source}: no per-item scores ({err})")
                what = None
            self.found[task.source] = [] if what is None else what.items
        return next((i for i in self.found[task.source] if i.task == task.task), None)


def _row(table: Table, like: Row, setting: str) -> Row | None:
    """The row of ``setting`` of the same model and framework as ``like``."""
    return next(
        (
            row
            for row in table.rows
            if row.origin == OURS
            and row.setting == setting
            and (row.model, row.framework) == (like.model, like.framework)
        ),
        None,
    )


def _task(row: Row, name: str) -> TaskRun | None:
    return next((task for task in row.tasks if task.task == name), None)


def row_differences(
    table: Table, row: Row, reader: ItemReader, distributions: Distributions
) -> list[PairedDifference]:
    """The row's paired differences, column by column (p not yet adjusted)."""
    assert row.versus is not None
    first, second = (_row(table, row, setting) for setting in row.versus)
    if first is None or second is None:
        return []
    wanted: dict[tuple[int, int], tuple[TaskRun, TaskRun, dict[str, str]]] = {}
    for column in table.columns:
        cell_a, cell_b = first.cells.get(column.key), second.cells.get(column.key)
        if cell_a is None or cell_b is None or cell_a.origin is None or cell_b.origin is None:
            continue
        (task_a, metric_a), (task_b, metric_b) = cell_a.origin, cell_b.origin
        run_a, run_b = _task(first, task_a), _task(second, task_b)
        if run_a is None or run_b is None or metric_a != metric_b:
            continue
        key = (id(run_a), id(run_b))
        wanted.setdefault(key, (run_a, run_b, {}))[2][metric_a] = column.key
    found = []
    for run_a, run_b, columns in wanted.values():
        items_a, items_b = reader.items(run_a), reader.items(run_b)
        if items_a is None or items_b is None:
            continue
        compared, notes = compare_pairing(items_a, items_b, distributions, set(columns))
        pair = f"{row.model}, {row.versus[0]} − {row.versus[1]}"
        reader.notes += [f"{pair}: {note.replace(' A - B:', ':')}" for note in notes]
        for metric, result in compared:
            found.append(
                PairedDifference(
                    row.model,
                    row.framework,
                    row.setting,
                    *row.versus,
                    columns[metric],
                    result.a,
                    result.b,
                    result.difference,
                    result.lower,
                    result.upper,
                    result.p,
                    result.p,
                    result.n,
                    result.method,
                )
            )
    order = [column.key for column in table.columns]  # the table's column order
    return sorted(found, key=lambda d: order.index(d.column))


def add_differences(tables: Iterable[Table], data_dir: str | None = None) -> list[str]:
    """Every paired row's differences into its table (``Table.differences``), Holm-adjusted
    over each table's; returns the notes (rows whose items could not be read or paired)."""
    reader = ItemReader(data_dir)
    distributions = Distributions(stats.N_RESAMPLES, stats.SEED)
    for table in tables:
        found = []
        for row in table.ours():
            if row.versus is not None:
                found += row_differences(table, row, reader, distributions)
        adjusted = stats.holm([d.p for d in found])
        table.differences = [replace(d, p_holm=p) for d, p in zip(found, adjusted, strict=True)]
    return list(dict.fromkeys(reader.notes))


# --- writing them -------------------------------------------------------------------------------
SIGNIFICANT = 0.05  # Holm's adjusted p below this: blue in the figure
HEADER = ("model", "framework", "A - B", "metric", "A", "B", "A - B [95% CI]", "p Holm", "n")
LEGEND = (
    "A - B: the paired difference on the items both rows' runs hold (their ids and data "
    "equal), with its 95% interval; p Holm: adjusted over this table's {count} differences; "
    "methods as `conceptcomb compare` (docs/comparing.md)."
)


def _number(value: float, digits: int, sign: bool = False) -> str:
    from conceptcomb.leaderboard.compare.cli import number_text

    return number_text(value, digits, sign)


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def difference_cells(table: Table, d: PairedDifference) -> list[str]:
    titles = {column.key: column.flat_title for column in table.columns}
    digits = table.digits
    return [
        d.model,
        d.framework,
        f"{d.a} − {d.b}",
        titles.get(d.column, d.column),
        _number(d.value_a, digits),
        _number(d.value_b, digits),
        f"{_number(d.difference, digits, True)} [{_number(d.lower, digits, True)}, "
        f"{_number(d.upper, digits, True)}]",
        _p(d.p_holm),
        str(d.n),
    ]


def text_lines(table: Table) -> list[str]:
    """The table's differences as aligned text (``conceptcomb cggc report``); none: []."""
    if not table.differences:
        return []
    body = [difference_cells(table, d) for d in table.differences]
    widths = [max(len(c) for c in column) for column in zip(HEADER, *body, strict=True)]
    lines = [f"Paired differences: {table.title}"]
    for cells in [list(HEADER), *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    lines.append(LEGEND.format(count=len(table.differences)))
    return lines


def markdown(table: Table) -> str:
    """The table's differences as a Markdown table under it ("" without)."""
    if not table.differences:
        return ""
    lines = [f"#### Paired differences: {table.title}", ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|---|---|---|---|" + "---:|" * (len(HEADER) - 4))
    for d in table.differences:
        cells = [c.replace("|", "\\|") for c in difference_cells(table, d)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", LEGEND.format(count=len(table.differences))]
    return "\n".join(lines) + "\n"


def html_table(table: Table) -> str:
    """The table's differences as an HTML table ("" without)."""
    import html

    if not table.differences:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{html.escape(c)}</td>' if i >= 4 else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(difference_cells(table, d))
        )
        + "</tr>"
        for d in table.differences
    )
    legend = html.escape(LEGEND.format(count=len(table.differences)))
    return (
        f"<h3>Paired differences: {html.escape(table.title)}</h3>"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
        f'</table></div><ul class="notes"><li>{legend}</li></ul>'
    )


def differences_plot(table: Table, path: Path) -> tuple[Path, str]:
    """A forest plot of the table's paired differences with their 95% intervals; (its
    path, caption). Blue: Holm's adjusted p < 0.05."""
    from conceptcomb.common.plots import pyplot

    plt = pyplot()
    shown = list(reversed(table.differences))
    figure, axes = plt.subplots(figsize=(10, 1.2 + 0.36 * len(shown)), dpi=110)
    for y, d in enumerate(shown):
        color = "#1f77b4" if d.p_holm < SIGNIFICANT else "#b0b0b0"
        axes.plot([d.lower, d.upper], [y, y], color=color, linewidth=6, solid_capstyle="butt")
        axes.plot([d.difference], [y], "o", color="#222", markersize=7)
    axes.axvline(0.0, color="#444", linewidth=1)
    titles = {column.key: column.flat_title for column in table.columns}
    axes.set_yticks(range(len(shown)))
    axes.set_yticklabels(
        [f"{d.model}: {d.a} − {d.b}, {titles.get(d.column, d.column)}" for d in shown],
        fontsize=8,
    )
    axes.set_xlabel("paired difference, 95% interval", fontsize=10)
    axes.set_title(f"{table.title}: paired differences", fontsize=10)
    axes.grid(axis="x", color="#e5e5e5")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    caption = (
        f"{table.title}: each variant's paired difference from its reference on the same "
        "items (dot) and its 95% interval (bar: blue where Holm's adjusted p < 0.05)"
    )
    return path, caption


def write_csv(table: Table, path: Path) -> None:
    """One line per difference (every field)."""
    import csv

    fields = list(PairedDifference.__dataclass_fields__)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["table", *fields])
        for d in table.differences:
            writer.writerow([table.key, *(getattr(d, name) for name in fields)])


def text_report(tables: list[Table], data_dir: str | None = None) -> list[str]:
    """The tables' paired differences and their notes as text lines (a benchmark's own
    report command prints them: ``conceptcomb cggc report``)."""
    notes = add_differences(tables, data_dir)
    lines = []
    for table in tables:
        if table.differences:
            lines += ["", *text_lines(table)]
    return lines + [f"note: {note}" for note in notes]

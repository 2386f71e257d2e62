"""Leaderboard tables, in one shape for every benchmark: `Table` of `Row`s of `Cell`s.

Each benchmark builds its own tables (``<benchmark>/tables.py``: the papers' layouts) from
the runs read by `conceptcomb.common.runs`, with the helpers here, and keeps the papers' rows
in ``<benchmark>/paper_tables/`` as text files read by `parse_block`. The report writes any
`Table` as Markdown, CSV, HTML and plots without knowing which benchmark it comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conceptcomb.common.runs import Metric, Run, TaskRun

if TYPE_CHECKING:  # importlib.resources.abc is new in Python 3.11
    from importlib.resources.abc import Traversable

OURS, PUBLISHED = "ours", "published"
# A row's verification state (`conceptcomb.leaderboard.checks.verify`), worst first: a row of
# several tasks takes the worst of their states.
VERIFIED, PARTIAL, UNVERIFIED = "verified", "partial", "unverified"
STATES = (UNVERIFIED, PARTIAL, VERIFIED)


def worst(states: list[str]) -> str:
    return min(states, key=STATES.index) if states else UNVERIFIED


@dataclass(frozen=True)
class Cell:
    value: float | None
    stderr: float | None = None
    # Ours: (task, metric) the value is, so that the report can pair its items with another
    # row's (`Row.versus`); None for computed and published cells.
    origin: tuple[str, str] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PublishedRow:
    table: str  # the report table it belongs to (see conceptcomb.leaderboard.report.tables)
    source: str  # paper and table, e.g. "Song et al. (NAACL 2025), Table 3"
    model: str  # as printed
    setting: str  # method / configuration, as the paper names it
    cells: dict[str, Cell] = field(default_factory=dict)
    note: str = ""
    judge: str = ""  # the judge the paper names for the table ("" where none decides)


def parse_cells(columns: Sequence[str], text: str) -> dict[str, Cell]:
    """``"42.2±1.8 - 81.4"`` in the order of ``columns`` -> cells (empty cells left out)."""
    tokens = text.split()
    if len(tokens) != len(columns):
        raise ValueError(f"{len(tokens)} cells for {len(columns)} columns: {text!r}")
    cells: dict[str, Cell] = {}
    for column, token in zip(columns, tokens, strict=True):
        if token == "-":
            continue
        value, _, stderr = token.partition("±")
        cells[column] = Cell(float(value), float(stderr) if stderr else None)
    return cells


def _note(text: str, notes: Mapping[str, str]) -> str:
    """``"[oracle] [sonnet]"`` -> those of ``notes`` joined; free text stays as it is."""
    tags = text.split()
    if tags and all(t.startswith("[") and t.endswith("]") for t in tags):
        return "; ".join(notes[t[1:-1]] for t in tags)
    return text


def parse_block(
    table: str,
    source: str,
    columns: Sequence[str],
    block: str | Traversable,
    notes: Mapping[str, str] | None = None,
    judge: str = "",
) -> tuple[PublishedRow, ...]:
    """A paper's table, as text or a file (``<benchmark>/paper_tables/*.txt``), -> its rows.

    A row a line, ``model | setting | cells | note``: the values as printed, in the paper's
    column order (``columns``), ``42.2±1.8`` a value with its printed ± term, ``-`` an empty
    cell; a note in brackets (``[oracle]``) names one of ``notes``, other text stays as it
    is. Lines starting with ``#`` (the source table, the format) and blank lines are skipped.
    ``judge``: the judge the paper names for the table's scores, on every row.
    Where the paper prints something odd the row keeps it as printed and says so in its
    note; ``tests/leaderboard/report/test_published.py`` re-reads every row from the paper's text.
    """
    text = block if isinstance(block, str) else block.read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        model, setting, cells, *note = (part.strip() for part in line.split("|"))
        rows.append(
            PublishedRow(
                table,
                source,
                model,
                setting,
                parse_cells(columns, cells),
                _note(" ".join(note), notes or {}),
                judge,
            )
        )
    return tuple(rows)


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    group: str = ""  # spanning header in HTML
    higher_is_better: bool | None = None
    tag: str = ""  # the group, shortened, for one-line headers (Markdown, CSV)

    @property
    def flat_title(self) -> str:
        return f"{self.tag} {self.title}".strip()


@dataclass
class Row:
    model: str
    setting: str
    origin: str  # OURS or PUBLISHED
    framework: str  # "lm-eval 0.4.13", "inspect 0.3.285", or the paper and table
    cells: dict[str, Cell]
    items: str = ""  # items evaluated per task ("3/200" when partial)
    source: str = ""  # results file(s), or the paper and table
    note: str = ""
    # Ours: verified / partial / unverified (`conceptcomb.leaderboard.checks.verify`); papers'
    # rows: "".
    verification: str = ""
    # Ours: the version of the tasks the row ran ("1.1"; per task, in the order of `items`,
    # when they differ; "?" where a result did not record it); papers' rows: "".
    version: str = ""
    # A judged table's: the judge whose ratings decide the row's values (ours: as its runs
    # record it; the papers': as the paper names it).
    judge: str = ""
    # Ours: the task runs the row shows (the report pairs their items).
    tasks: list[TaskRun] = field(default_factory=list, repr=False, compare=False)
    # Ours: (setting A, setting B) of the same model's rows in this table whose paired
    # difference A - B on the same items this row is (a variant against the paper's
    # reference variant: (its own setting, "Base"); CGGC's gap: ("id", "ood")).
    versus: tuple[str, str] | None = None

    @property
    def partial(self) -> bool:
        return "/" in self.items


@dataclass(frozen=True)
class PairedDifference:
    """A row's paired difference A - B in one column, on the items both settings' runs hold:
    the report computes them (`conceptcomb.leaderboard.report.variants`) for rows with
    ``versus``; its p is Holm-adjusted over the table's differences."""

    model: str
    framework: str
    setting: str  # the row's
    a: str  # the settings compared, A - B
    b: str
    column: str  # the column's key
    value_a: float
    value_b: float
    difference: float
    lower: float
    upper: float
    p: float
    p_holm: float
    n: int
    method: str


@dataclass
class Table:
    key: str
    benchmark: str
    title: str
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 1
    judged: bool = False  # a judge's ratings decide its values: it has a judge column
    differences: list[PairedDifference] = field(default_factory=list)

    def ours(self) -> list[Row]:
        return [row for row in self.rows if row.origin == OURS]


# A plot of a table: (file name part, function drawing the table to a PNG path, caption).
PlotSpec = tuple[str, Callable[[Table, Path], Path], str]


def metric_cell(metric: Metric | None, origin: tuple[str, str] | None = None) -> Cell | None:
    return None if metric is None else Cell(metric.value, metric.stderr, origin)


def our_row(
    run: Run,
    setting: str,
    tasks: list[TaskRun],
    cells: dict[str, Cell],
    note: str = "",
    judge: str = "",
    versus: tuple[str, str] | None = None,
) -> Row:
    items = " · ".join(task.items_text() for task in tasks)
    sources = sorted({task.source.name for task in tasks})
    verification = worst([task.verification or UNVERIFIED for task in tasks])
    return Row(
        run.model.label,
        setting,
        OURS,
        run.framework_text,
        cells,
        items,
        ", ".join(sources),
        note,
        verification,
        task_versions(tasks),
        judge,
        list(tasks),
        versus,
    )


def task_versions(tasks: list[TaskRun]) -> str:
    """The tasks' version, once when they share it, else per task (" · "-joined like the
    items); "" when no task recorded one."""
    versions = [task.version or "?" for task in tasks]
    if not tasks or all(task.version is None for task in tasks):
        return ""
    return versions[0] if len(set(versions)) == 1 else " · ".join(versions)


def published_rows(rows: Iterable[PublishedRow], table: str) -> list[Row]:
    """The papers' rows of one table, as table rows."""
    return [
        Row(
            r.model,
            r.setting,
            PUBLISHED,
            r.source,
            dict(r.cells),
            "",
            r.source,
            r.note,
            judge=r.judge,
        )
        for r in rows
        if r.table == table
    ]


def collect(run: Run, task_metrics: dict[str, tuple[str, list[str]]]) -> tuple[list, dict]:
    """{task: (column prefix, metric names)} -> (task runs found, cells)."""
    found, cells = [], {}
    for task_name, (prefix, metrics) in task_metrics.items():
        task = run.tasks.get(task_name)
        if task is None:
            continue
        found.append(task)
        for metric in metrics:
            cell = metric_cell(task.metrics.get(metric), (task_name, metric))
            if cell is not None:
                cells[f"{prefix}{metric}"] = cell
    return found, cells


def arrow(higher: bool | None) -> str:
    return "" if higher is None else (" ↑" if higher else " ↓")

"""``conceptcomb report RESULTS... --out DIR``: tables, plots and pages for every benchmark.

For each benchmark the runs touch it writes, into ``DIR``:

* ``<table>.csv`` per table (values and standard errors in separate columns),
* ``<benchmark>.md`` with every table of the benchmark,
* ``<benchmark>_<plot>.png`` (matplotlib) and
* ``<benchmark>.html``: the tables and the plots in one page with no external resource;
* under each table whose rows a variant and its reference of one model share (CGGC's id
  and ood, CCPT's methods and Base, AbsPyramid's formats), their paired differences with
  95% intervals and Holm-adjusted p (`conceptcomb.leaderboard.report.variants`), also as
  ``<table>_differences.csv`` and ``<table>_differences.png``;
* per task that two runs hold: its runs ranked with confidence (rank intervals, values with
  95% intervals; one ranking per judge where a judge decides the headline metric) and
  ``<task>_differences.png`` (``<task>_judgeN_differences.png``), the pairwise differences
  (`conceptcomb.leaderboard.report.ranking`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conceptcomb.benchmarks import benchmarks, get
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.common.runs import Run
from conceptcomb.common.tables import Table
from conceptcomb.leaderboard.report import render
from conceptcomb.leaderboard.report.runs import nothing_usable, read_runs
from conceptcomb.leaderboard.report.tables import benchmark_tables

if TYPE_CHECKING:
    from conceptcomb.leaderboard.report.ranking import TaskRanking


@dataclass
class Written:
    files: list[Path] = field(default_factory=list)
    markdown: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _plots(table: Table, out: Path, written: Written) -> list[str]:
    """Draw the table's plots; HTML figures for the page."""
    try:
        specs = get(table.benchmark).plots().get(table.key, [])
        figures = []
        for name, draw, caption in specs:
            path = draw(table, out / f"{table.benchmark}_{name}.png")
            written.files.append(path)
            figures.append(render.html_figure(path, caption))
        return figures
    except ConfigError as err:  # matplotlib missing: tables still come out
        written.warnings.append(str(err))
        return []


def _sources(runs: list[Run], benchmark: str) -> list[str]:
    """The results files the benchmark's rows come from."""
    tasks = [task for run in runs for task in run.tasks.values() if task.benchmark == benchmark]
    return sorted({str(task.source) for task in tasks})


def write_report(
    runs: list[Run],
    out: Path,
    with_published: bool = True,
    with_plots: bool = True,
    paths: list[Path] | None = None,
    data_dir: str | None = None,
) -> Written:
    """The pages; with the results' ``paths``, each task's runs ranked with confidence too
    (`conceptcomb.leaderboard.report.ranking`: they need the per-item scores)."""
    found = benchmark_tables(runs, with_published)
    if not found:
        raise DataFormatError(
            "none of the results is from a conceptcomb task ("
            + ", ".join(f"{b.key}_*" for b in benchmarks())
            + ")."
        )
    out.mkdir(parents=True, exist_ok=True)
    written = Written()
    from conceptcomb.leaderboard.report import variants

    written.warnings += variants.add_differences(
        [table for tables in found.values() for table in tables], data_dir
    )
    rankings = _rankings(runs, paths, data_dir)
    explorer = _explorer(paths, out, data_dir, written)
    explored = [view["name"] for view in explorer["views"]] if explorer else []
    if explorer:
        link_rankings(rankings, explorer)
    for benchmark, tables in found.items():
        sections, markdown = [], [f"## {get(benchmark).title}\n"]
        for table in tables:
            csv_path = out / f"{table.key}.csv"
            render.write_csv(table, csv_path)
            written.files.append(csv_path)
            markdown.append(render.markdown(table))
            sections.append(render.html_table(table))
            if with_plots:
                sections += _plots(table, out, written)
            if table.differences:
                _differences(table, out, written, markdown, sections, with_plots)
        texts, parts, files, warnings = ranking_sections(rankings, benchmark, out, with_plots)
        markdown += texts
        sections += parts + _explorer_links(explored, benchmark)
        written.files += files
        written.warnings += warnings
        text = "\n".join(markdown)
        (out / f"{benchmark}.md").write_text(text, encoding="utf-8")
        page = render.html_page(get(benchmark).title, sections, _sources(runs, benchmark))
        (out / f"{benchmark}.html").write_text(page, encoding="utf-8")
        written.files += [out / f"{benchmark}.md", out / f"{benchmark}.html"]
        written.markdown[benchmark] = text
    for run in runs:
        written.warnings += run.notes
    return written


def _explorer(
    paths: list[Path] | None, out: Path, data_dir: str | None, written: Written
) -> dict[str, Any] | None:
    """The item explorer of the runs (`conceptcomb.leaderboard.explore`) beside the pages:
    its data (views named by task, columns with the files they were read from), linked
    from each benchmark's page; None where it was not written."""
    if not paths:
        return None
    from conceptcomb.leaderboard.explore import data, page

    try:
        found = data.gather(paths, data_dir)
    except Exception as err:  # the report stands without it: said, not hidden
        written.warnings.append(f"the item explorer was not written ({type(err).__name__}: {err})")
        return None
    if not found["views"]:
        return None
    written.files.append(page.write(found, out))
    return found


def link_rankings(rankings: list[TaskRanking], explorer: dict[str, Any]) -> None:
    """Each ranking row to its run in the explorer (``a`` alone) and each paired comparison
    to its two runs (``a`` and ``b``), on the ranking's metric. The ranking's letters are its
    own (one side per model and judge over all the report's files); the explorer's columns
    are found by the files their runs were read from (`explore.data.column_of`). A row whose
    run the explorer does not show is left unlinked."""
    from conceptcomb.leaderboard.explore.data import column_of

    for ranking in rankings:
        letters: dict[str, str] = {}
        for row in ranking.rows:
            runs = row.side.tasks.get(ranking.task, [])
            letter = column_of(explorer, ranking.task, [items.source for items in runs])
            if letter is None:
                continue
            letters[row.side.letter] = letter
            row.explore = page_link(ranking.task, a=letter, metric=ranking.metric)
        for comparison in ranking.comparisons:
            a, b = letters.get(comparison.a), letters.get(comparison.b)
            if a and b and a != b:
                ranking.pair_links[(comparison.a, comparison.b)] = page_link(
                    ranking.task, a, b, ranking.metric
                )


def _explorer_links(explored: list[str], benchmark: str) -> list[str]:
    """Links from a benchmark's page to each of its tasks in the explorer."""
    from html import escape

    from conceptcomb.benchmarks import known_tasks

    mine = [name for name in explored if known_tasks().get(name) == benchmark]
    if not mine:
        return []
    items = "".join(f'<li><a href="{page_link(name)}">{escape(name)}</a></li>' for name in mine)
    return [
        "<h2>The items behind these numbers</h2><p>Every run's reply to each item, beside "
        f"compare's paired statistics (explore.html, offline):</p><ul>{items}</ul>"
    ]


def page_link(
    view: str, a: str | None = None, b: str | None = None, metric: str | None = None
) -> str:
    """explore.html opened on a view (and run A, and B, by letter; and a metric), escaped
    for an HTML attribute."""
    from html import escape
    from urllib.parse import quote

    link = f"explore.html#task={quote(view, safe='')}"
    for key, value in (("a", a), ("b", b), ("metric", metric)):
        if value:
            link += f"&{key}={quote(value, safe='')}"
    return escape(link)


def _differences(
    table: Table,
    out: Path,
    written: Written,
    markdown: list[str],
    sections: list[str],
    with_plots: bool,
) -> None:
    """The table's paired differences: Markdown and HTML under it, a CSV and a figure."""
    from conceptcomb.leaderboard.report import variants

    markdown.append(variants.markdown(table))
    sections.append(variants.html_table(table))
    csv_path = out / f"{table.key}_differences.csv"
    variants.write_csv(table, csv_path)
    written.files.append(csv_path)
    if not with_plots:
        return
    try:
        path, caption = variants.differences_plot(table, out / f"{table.key}_differences.png")
    except ConfigError as err:  # matplotlib missing: the tables still come out
        written.warnings.append(str(err))
        return
    written.files.append(path)
    sections.append(render.html_figure(path, caption))


def _rankings(runs: list[Run], paths: list[Path] | None, data_dir: str | None) -> list[TaskRanking]:
    # Ranking reads every item (and builds corpus metrics): only where a task has two runs.
    held = Counter(task.task for run in runs for task in run.tasks.values())
    if not paths or max(held.values(), default=0) < 2:
        return []
    from conceptcomb.leaderboard.report.ranking import rank

    return rank(paths, data_dir)


def ranking_sections(
    rankings: list[TaskRanking], benchmark: str, out: Path, with_plots: bool
) -> tuple[list[str], list[str], list[Path], list[str]]:
    """(Markdown, HTML, files, warnings) of the benchmark's rankings (none without)."""
    from conceptcomb.leaderboard.report.ranking import sections

    return sections(rankings, benchmark, out, with_plots) if rankings else ([], [], [], [])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        help="lm-eval output folders or results_*.json (samples beside them), Inspect logs "
        "(.eval or .json) or their folders, `conceptcomb score --output` files; runs of the same "
        "model in the same framework are merged",
    )
    parser.add_argument("--out", type=Path, default=Path("report"), help="output folder (report/)")
    parser.add_argument(
        "--no-published", action="store_true", help="leave out the papers' published rows"
    )
    parser.add_argument("--no-plots", action="store_true", help="tables only")
    parser.add_argument(
        "--data-dir",
        help="folder with the benchmarks' files, to verify bundles' rows as validate-bundle "
        "--data-dir does (default: CONCEPTCOMB_DATA_DIR or the cache)",
    )
    add_recheck(parser)


def add_recheck(parser: argparse.ArgumentParser) -> None:
    """``report`` and ``export``: a verdict remembered is reused unless ``--recheck``."""
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="check every bundle again, even one whose verdict is remembered (a bundle "
        "validate-bundle, submit-bundle, export or report found valid, with the same content "
        "sha256 and package: its verdict is reused, under the cache folder's verdicts/)",
    )


def run(args: argparse.Namespace) -> int:
    runs = read_runs(args.results, args.data_dir, reuse_verdicts=not args.recheck)
    if not any(run.tasks for run in runs):
        for note in dict.fromkeys(note for run in runs for note in run.notes):
            print(f"note: {note}")
        print(f"conceptcomb: error: {nothing_usable(args.results, runs)}", file=sys.stderr)
        return 1
    written = write_report(
        runs, args.out, not args.no_published, not args.no_plots, args.results, args.data_dir
    )
    for text in written.markdown.values():
        print(text)
    for warning in dict.fromkeys(written.warnings):
        print(f"note: {warning}")
    print(f"written to {args.out}: " + ", ".join(p.name for p in written.files))
    return 0

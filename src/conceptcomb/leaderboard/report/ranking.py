"""Ranking with confidence, for `conceptcomb report`: per task, its headline metric's value
with its 95% interval for each run, a rank interval, and a figure of the pairwise
differences.

A run's rank interval runs from 1 + the number of runs that beat it to the number of runs
minus those it beats, where "beats" is a paired comparison
(`conceptcomb.leaderboard.compare.comparison`) whose Holm-adjusted p (over the task's
comparisons) is below 5%: rows that no comparison separates share their ranks (Chatbot Arena
ranks with confidence the same way, from intervals). The papers' published rows have no
items: they are shown in the benchmark's tables and never ranked.

A task whose headline metric a judge decides (CCPT's E and C) is ranked once per judge:
runs scored by different judges measure different things, so each judge's runs are ranked
together, under a heading naming the judge (`conceptcomb.scorers.judge_identity`); a run
whose judge is not recorded is ranked alone.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

from conceptcomb.benchmarks import get, known_tasks
from conceptcomb.leaderboard.compare.comparison import Row, Side, compare, same_judges, sides
from conceptcomb.leaderboard.compare.items import Found, TaskItems, read_argument
from conceptcomb.leaderboard.statistics import stats
from conceptcomb.scorers import judge_identity
from conceptcomb.scorers.judge_identity import JudgeRecord

SIGNIFICANT = stats.ALPHA  # Holm-adjusted p below this separates two rows
MOST_PAIRS = 28  # all pairs of up to 8 runs in a figure; beyond, neighbours in the ranking
BEATS_COLOR, TIED_COLOR, DOT_COLOR = "#1f5fa8", "#9a9a9a", "#c0392b"
PUBLISHED_NOTE = (
    "The papers' published rows (in the tables above) have no per-item scores: they are "
    "shown there and never ranked by a test."
)
JUDGE_NOTE = (
    "A judge's ratings decide this metric: only runs of this judge are ranked here (its "
    "model, decoding, prompt and rating protocol; not where it was served). Runs of another "
    "judge have their own ranking; `conceptcomb compare` prints the command that re-scores a "
    "run with another judge."
)


@dataclass
class Ranked:
    side: Side
    interval: stats.Interval | None
    low: int  # rank interval
    high: int
    explore: str | None = None  # its link into the item explorer (`build.link_rankings`)

    @property
    def rank(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}–{self.high}"


@dataclass
class TaskRanking:
    task: str
    benchmark: str
    metric: str
    higher_is_better: bool
    rows: list[Ranked] = field(default_factory=list)
    comparisons: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    judge: str | None = None  # a judged metric's: the judge of every run ranked (one line)
    part: str = ""  # the ranking's name part where a task has one per judge ("" alone)
    # (letter A, letter B) of a comparison -> its link into the item explorer (escaped)
    pair_links: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The task, and which of its rankings (its plot's file name part)."""
        return f"{self.task}_{self.part}" if self.part else self.task


def _headline(benchmark: str, task: str) -> tuple[str, bool] | None:
    bench = get(benchmark)
    card = bench.card.tasks.get(task) if bench.has_card else None
    infos = {info.name: info for info in bench.tasks().get(task, [])}
    metric = card.headline_metric if card else next(iter(infos), None)
    if metric is None or metric not in infos:
        return None
    return metric, infos[metric].higher_is_better


def own_interval(items: TaskItems, metric: str) -> stats.Interval | None:
    """A run's interval of one metric on all its items (as its bundle records it)."""
    if metric in items.scores:
        return stats.mean_interval(items.scores[metric], items.units, items.unit)
    if metric in items.corpus:
        measure = items.corpus[metric]
        values = stats.bootstrap_distribution(measure, measure.n)
        return stats.bootstrap_interval(measure.value(), values, measure.n)
    return None


def _ranks(ranking: TaskRanking) -> None:
    beats: dict[str, set[str]] = {row.side.letter: set() for row in ranking.rows}
    for row in ranking.comparisons:
        if row.p_holm is None or row.p_holm >= SIGNIFICANT:
            continue
        a_wins = (row.result.difference > 0) == ranking.higher_is_better
        winner, loser = (row.a, row.b) if a_wins else (row.b, row.a)
        beats[winner].add(loser)
    total = len(ranking.rows)
    for ranked in ranking.rows:
        letter = ranked.side.letter
        beaten_by = sum(letter in beaten for beaten in beats.values())
        ranked.low, ranked.high = 1 + beaten_by, total - len(beats[letter])


def rank(paths: list[Path], data_dir: str | None = None) -> list[TaskRanking]:
    """Every task of ours that two runs hold, ranked by its headline metric (runs of one
    model in one framework by one judge are one row, averaged per item; another judge's,
    another row, labelled with its key);
    once per judge where a judge decides the metric (`by_judge`)."""
    merged = Found()
    for path in paths:
        found = read_argument(Path(path), data_dir)
        merged.items += [items for items in found.items if items.task in known_tasks()]
        merged.notes += found.notes
    everyone = sides([Path("report")], [merged], judges_apart=True)
    rankings = []
    for task in dict.fromkeys(items.task for items in merged.items):
        holding = [side for side in everyone if task in side.tasks]
        benchmark = known_tasks()[task]
        headline = _headline(benchmark, task)
        if len(holding) < 2 or headline is None:
            continue
        metric, higher = headline
        groups = by_judge(holding, task, metric)
        for number, (judge, group) in enumerate(groups):
            part = f"judge{number + 1}" if len(groups) > 1 else ""
            rankings.append(_ranking(task, benchmark, metric, higher, group, judge, part))
    return rankings


def by_judge(holding: list[Side], task: str, metric: str) -> list[tuple[str | None, list[Side]]]:
    """The sides in groups of one judge where ``metric`` is a judge's (its description,
    the group; runs without a recorded judge alone), else all together (None)."""
    if not any(metric in side.task(task).judged for side in holding):
        return [(None, holding)]
    groups: list[tuple[str | None, list[Side]]] = []
    for side in holding:
        records = side.task(task).judge
        for _, group in groups:
            if same_judges(group[0].task(task).judge, records):
                group.append(side)
                break
        else:
            groups.append((judge_heading(records), [side]))
    return groups


def judge_heading(records: list[JudgeRecord]) -> str:
    if not records:
        return "not recorded (ranked alone)"
    return " + ".join(
        f"{judge_identity.describe(r)}, key {judge_identity.key(r)[:8]}" for r in records
    )


def _ranking(
    task: str,
    benchmark: str,
    metric: str,
    higher: bool,
    group: list[Side],
    judge: str | None,
    part: str,
) -> TaskRanking:
    """One ranking of the sides of ``group`` (one judge's, where the metric has one)."""
    if len(group) > 1:
        result = compare(group, only=lambda t, m: m == metric)
        ranking = TaskRanking(task, benchmark, metric, higher, notes=result.notes)
        ranking.comparisons = result.rows
    else:
        ranking = TaskRanking(task, benchmark, metric, higher)
    ranking.judge, ranking.part = judge, part
    for side in group:
        ranking.rows.append(Ranked(side, own_interval(side.task(task), metric), 1, 1))
    _ranks(ranking)
    sign = -1.0 if higher else 1.0
    ranking.rows.sort(key=lambda r: (r.low, sign * _value(r)))
    return ranking


def _value(ranked: Ranked) -> float:
    return ranked.interval.value if ranked.interval is not None else math.nan


# --- writing ---------------------------------------------------------------------------------
def _number(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.2f}"


def value_text(interval: stats.Interval | None) -> str:
    if interval is None:
        return "–"
    return f"{_number(interval.value)} [{_number(interval.lower)}, {_number(interval.upper)}]"


def _title(ranking: TaskRanking) -> str:
    arrow = "↑" if ranking.higher_is_better else "↓"
    title = f"{ranking.task}: ranked by {ranking.metric} {arrow}, with 95% intervals"
    return title + (f"; judge: {ranking.judge}" if ranking.judge else "")


def _legend(ranking: TaskRanking) -> list[str]:
    return [
        "rank: the rank interval; rows no paired comparison separates (Holm-adjusted p < 0.05 "
        "over this task's comparisons, `conceptcomb compare`) share ranks.",
        PUBLISHED_NOTE,
        *([JUDGE_NOTE] if ranking.judge else []),
        *[note.rstrip(".") + "." for note in ranking.notes],
    ]


def markdown(ranking: TaskRanking) -> str:
    lines = [f"### {_title(ranking)}", "", "| rank | run | value [95% CI] | items | interval |"]
    lines.append("|---:|---|---:|---:|---|")
    for row in ranking.rows:
        interval = row.interval
        method = stats_method(interval)
        items = str(interval.n) if interval else "–"
        label = row.side.label.replace("|", "\\|")
        lines.append(f"| {row.rank} | {label} | {value_text(interval)} | {items} | {method} |")
    lines += ["", *(f"- {note}" for note in _legend(ranking))]
    return "\n".join(lines) + "\n"


def stats_method(interval: stats.Interval | None) -> str:
    if interval is None:
        return "–"
    if interval.clusters:
        return f"{interval.method} by {interval.unit} ({interval.clusters})"
    return interval.method


def _run_cell(row: Ranked) -> str:
    label = html.escape(row.side.label)
    if row.explore:
        label = f'<a class="explore-run" href="{row.explore}">{label}</a>'
    return f'<td class="name">{label}</td>'


def html_table(ranking: TaskRanking) -> str:
    rows = "".join(
        f'<tr class="ours"><td class="num">{row.rank}</td>{_run_cell(row)}'
        f'<td class="num">{html.escape(value_text(row.interval))}</td>'
        f'<td class="num">{row.interval.n if row.interval else "–"}</td>'
        f"<td>{html.escape(stats_method(row.interval))}</td></tr>"
        for row in ranking.rows
    )
    from conceptcomb.leaderboard.report.render import inline_html

    notes = "".join(f"<li>{inline_html(note)}</li>" for note in _legend(ranking))
    return (
        f"<h2>{html.escape(_title(ranking))}</h2>"
        '<div class="scroll"><table><thead><tr><th>rank</th><th class="name">run</th>'
        "<th>value [95% CI]</th><th>items</th><th>interval</th></tr></thead>"
        f'<tbody>{rows}</tbody></table></div><ul class="notes">{notes}</ul>' + pairs_html(ranking)
    )


def pairs_html(ranking: TaskRanking) -> str:
    """The ranking's paired comparisons, each linked to its items in the explorer (only
    where the report wrote the explorer and linked them: `build.link_rankings`)."""
    if not ranking.pair_links:
        return ""
    labels = {row.side.letter: row.side.label for row in ranking.rows}
    rows = []
    for row in ranking.comparisons:
        link = ranking.pair_links.get((row.a, row.b))
        if link is None:
            continue
        r = row.result
        what = html.escape(f"{labels.get(row.a, row.a)} − {labels.get(row.b, row.b)}")
        rows.append(
            f'<tr class="ours"><td class="name"><a class="explore-pair" href="{link}">{what}</a>'
            f'</td><td class="num">{_signed(r.difference)} [{_signed(r.lower)}, '
            f'{_signed(r.upper)}]</td><td class="num">{_p(row.p_holm)}</td>'
            f'<td class="num">{r.n}</td></tr>'
        )
    if not rows:
        return ""
    return (
        f"<h3>{html.escape(ranking.task)}: each pair's items in the explorer</h3>"
        '<div class="scroll"><table><thead><tr><th class="name">A − B</th>'
        f"<th>{html.escape(ranking.metric)} difference [95% CI]</th><th>p Holm</th>"
        f"<th>items</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _signed(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.2f}"


def _p(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _oriented(ranking: TaskRanking) -> list[tuple[str, str, float, float, float, bool]]:
    """The pairs a figure shows, the better-ranked run first (its difference's sign and
    interval turned with it), in ranking order: all pairs for up to 8 runs, else each run
    against the next."""
    order = [row.side.letter for row in ranking.rows]
    labels = {row.side.letter: row.side.label for row in ranking.rows}
    shown = []
    for row in ranking.comparisons:
        r, first = row.result, order.index(row.a) <= order.index(row.b)
        a, b = (row.a, row.b) if first else (row.b, row.a)
        diff, low, high = (
            (r.difference, r.lower, r.upper) if first else (-r.difference, -r.upper, -r.lower)
        )
        separated = row.p_holm is not None and row.p_holm < SIGNIFICANT
        shown.append(
            (order.index(a), order.index(b), labels[a], labels[b], diff, low, high, separated)
        )
    shown.sort()
    if len(shown) > MOST_PAIRS:
        shown = [pair for pair in shown if pair[1] == pair[0] + 1]
    return [pair[2:] for pair in shown]


def differences_plot(ranking: TaskRanking, path: Path) -> tuple[Path, str]:
    """A forest plot of the pairwise differences with their 95% intervals, the better-ranked
    run of each pair first; (its path, caption). Blue: separated (Holm p < 0.05)."""
    from conceptcomb.common.plots import pyplot

    plt = pyplot()
    shown = _oriented(ranking)
    figure, axes = plt.subplots(figsize=(10, 1.2 + 0.42 * len(shown)), dpi=110)
    for y, (_, _, diff, low, high, separated) in enumerate(reversed(shown)):
        color = BEATS_COLOR if separated else TIED_COLOR
        axes.plot([low, high], [y, y], color=color, linewidth=6, solid_capstyle="butt")
        axes.plot([diff], [y], "o", color=DOT_COLOR, markersize=9)
    axes.axvline(0.0, color="#444", linewidth=1)
    axes.set_yticks(range(len(shown)))
    axes.set_yticklabels([f"{a}  −  {b}" for a, b, *_ in reversed(shown)], fontsize=9)
    axes.set_xlabel(f"difference in {ranking.metric}, 95% interval", fontsize=10)
    axes.set_title(f"{ranking.task}: pairwise differences in {ranking.metric}", fontsize=11)
    axes.grid(axis="x", color="#e5e5e5")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    caption = (
        f"{ranking.task}: each pair's difference in {ranking.metric} (dot; the better-ranked "
        "run first) and its 95% interval (bar: blue where Holm's adjusted p < 0.05 separates "
        "the two, grey where it does not)"
    )
    if len(shown) < len(ranking.comparisons):
        caption += f"; {len(shown)} of {len(ranking.comparisons)} pairs: neighbours in the ranking"
    return path, caption


def sections(
    rankings: list[TaskRanking], benchmark: str, out: Path, with_plots: bool
) -> tuple[list[str], list[str], list[Path], list[str]]:
    """(Markdown parts, HTML parts, files written, warnings) of one benchmark's rankings."""
    from conceptcomb.common.errors import ConfigError
    from conceptcomb.leaderboard.report import render

    texts: list[str] = []
    parts: list[str] = []
    files: list[Path] = []
    warnings: list[str] = []
    for ranking in [r for r in rankings if r.benchmark == benchmark]:
        texts.append(markdown(ranking))
        parts.append(html_table(ranking))
        if not with_plots or not ranking.comparisons:
            continue
        try:
            path, caption = differences_plot(ranking, out / f"{ranking.name}_differences.png")
        except ConfigError as err:  # matplotlib missing: the table still comes out
            warnings.append(str(err))
            continue
        files.append(path)
        parts.append(render.html_figure(path, caption))
    return texts, parts, files, warnings

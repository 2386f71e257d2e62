"""``conceptcomb compare RUN RUN [RUN...]``: is model A better than model B on the same items?

Prints a table (task, metric, A, B, A - B [95% CI], p, p Holm, n, MDD, method), or JSON or
CSV for machines; the unpaired items of each pair and why any pair or metric was not
compared follow it. Exit 0 when something was compared; 1, with one line, when no task is
held by two runs.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

from conceptcomb.leaderboard.compare import largest
from conceptcomb.leaderboard.compare.comparison import (
    MOST_LISTED,
    Comparison,
    Side,
    compare,
    compare_variants,
    sides,
)
from conceptcomb.leaderboard.compare.items import Found, metric_scale, read_argument
from conceptcomb.leaderboard.compare.judge_signs import judge_signs, sign_lines
from conceptcomb.leaderboard.statistics import stats

RUN_HELP = (
    "an lm-eval --output_path folder run with --log_samples (or its results_*.json), an "
    "Inspect log or log folder, a `conceptcomb score --output` file, a *.bundle.json, an "
    "`export --to eee` folder, or a folder of several (each model and framework in it is one "
    "run; several runs of one model in one RUN are averaged per item)"
)
VARIANTS_COLUMN = "what differs (A vs B)"
COLUMNS = ("task", "metric", "A", "B", "A - B [95% CI]", "p", "p Holm", "n", "MDD", "method")
CSV_FIELDS = (
    "task", "metric", "run_a", "run_b", "a", "b", "difference", "lower", "upper", "stderr", "p",
    "p_holm", "n", "mdd", "correlation", "method", "clusters", "unit", "resamples", "label",
    "differs",
)  # fmt: skip


def add_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "compare",
        help="is run A better than run B on the same items? paired differences with 95%% "
        "intervals, p-values (Holm-adjusted) and the smallest difference the items can detect",
        description="Pairs the runs' items by id and compares every metric of every task two "
        "runs hold: paired t intervals (clustered by the items' unit where they share one: "
        "CCPT's noun phrase, CGGC's concept set), exact McNemar for right/wrong items, a seeded "
        "paired bootstrap for corpus metrics (BLEU, CIDEr, macro-F1). Works on this package's "
        "tasks and on any lm-eval or Inspect task. Formulas and sources: docs/comparing.md.",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help=RUN_HELP)
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON instead of the table")
    output.add_argument("--csv", action="store_true", help="print CSV instead of the table")
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=stats.N_RESAMPLES,
        help=f"bootstrap resamples for corpus metrics (default {stats.N_RESAMPLES:,})",
    )
    parser.add_argument(
        "--seed", type=int, default=stats.SEED, help="the bootstrap's seed (fixed by default)"
    )
    parser.add_argument(
        "--allow-different-prompts",
        action="store_true",
        help="compare runs of a task whose prompts differ (templates, chat layout, options); "
        "their rows are labelled. Runs of different task versions or data are never paired",
    )
    parser.add_argument(
        "--allow-different-judges",
        action="store_true",
        help="compare the metrics a judge decides (CCPT's E, C, R_HMP, R_NP; CGGC's _verified "
        "metrics) across runs scored by different judges; their rows are labelled. Without "
        "it they are paired only when both runs name the same judge (model, decoding, prompt, "
        "rating protocol; not its endpoint), and a line says how to re-score one run",
    )
    parser.add_argument(
        "--variants",
        nargs="*",
        metavar="TASK_A=TASK_B",
        default=None,
        help="compare variants of one task within each model instead of models: every two "
        "runs of one model whose task names (of one benchmark: cggc_ood_easy2hard and "
        "cggc_ood_hard2easy, ccpt_pi_emergent and ccpt_pi_emergent_cot), options, seeds or "
        "generation settings differ, on the items both hold; each row says what differs. "
        "TASK_A=TASK_B pairs two tasks the names do not tie (capitals_zeroshot=capitals_fewshot)",
    )
    parser.add_argument(
        "--target-difference",
        type=float,
        metavar="D",
        help="plan the items: how many items (and units, where items share them) a paired "
        "test needs to find a true difference D (in the metric's units, e.g. 5 for five "
        "points of a percentage) with 80%% power at 5%%, from these runs' spread and "
        "correlation; says when the task has fewer items than that",
    )
    parser.add_argument(
        "--cluster",
        metavar="FIELD",
        help="for tasks that are not this package's: the doc field (lm-eval) or sample "
        "metadata key (Inspect) whose items share a unit, for clustered standard errors",
    )
    parser.add_argument(
        "--data-dir",
        help="folder with the benchmarks' files (corpus metrics need the test items' "
        "references; default: CONCEPTCOMB_DATA_DIR or the cache)",
    )
    parser.add_argument(
        "--items",
        metavar="K",
        help="under each row, the K paired items with the largest |A - B| of its metric: "
        "each item's id, both values and both replies cut to one line (table and --json)",
    )
    parser.set_defaults(run=run)
    _one_line_errors(parser)


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """argparse's own refusals (a number that is not one, --json with --csv) in one line:
    its usage block would bury the line naming the option."""

    def error(message: str) -> NoReturn:
        parser.exit(2, f"conceptcomb: error: compare: {message} (conceptcomb compare --help)\n")

    parser.error = error  # type: ignore[method-assign]


def option_problem(args: argparse.Namespace) -> str | None:
    """The first option whose value cannot work, as one line naming it; None when all can."""
    if args.n_resamples < 100:
        return "--n-resamples: at least 100"
    if args.seed < 0:
        return f"--seed {args.seed}: a seed is a whole number from 0 up"
    target = getattr(args, "target_difference", None)
    if target is not None and not (math.isfinite(target) and target > 0):
        return (
            "--target-difference: a positive difference in the metric's units (5 for five "
            "points of a percentage, 0.05 for five points of a 0-1 metric)"
        )
    try:
        largest.parse_count(getattr(args, "items", None))
    except ValueError:
        return f"--items {args.items}: a whole number of items from 1 up (--items 5)"
    if getattr(args, "items", None) is not None and args.csv:
        return "--items: the table and --json show the items; --csv has a row per comparison"
    if args.data_dir is not None and not Path(args.data_dir).is_dir():
        return f"--data-dir {args.data_dir}: no such folder"
    if variant_pairs(getattr(args, "variants", None)) is None:
        return "--variants: pairs are written TASK_A=TASK_B (capitals_zeroshot=capitals_fewshot)"
    return None


def run(args: argparse.Namespace) -> int:
    problem = option_problem(args)
    if problem:
        print(f"conceptcomb: error: {problem}", file=sys.stderr)
        return 2
    target = getattr(args, "target_difference", None)
    named = variant_pairs(getattr(args, "variants", None)) or []
    found = [read_argument(path, args.data_dir, args.cluster) for path in args.runs]
    problem = cluster_problem(args.cluster, found) or scale_problem(target, found)
    if problem:  # before the comparison: its bootstrap takes a while
        print(f"conceptcomb: error: {problem}", file=sys.stderr)
        return 2
    all_sides = sides(args.runs, found)
    notes = [note for what in found for note in what.notes]
    if args.variants is not None:
        return _report(args, compare_variants(all_sides, named, args.n_resamples, args.seed),
                       notes, target)  # fmt: skip
    if len(all_sides) < 2:
        _print_notes(notes, sys.stderr)
        print(
            f"conceptcomb: error: compare needs two runs with per-item scores; found "
            f"{len(all_sides)}: {held_by_argument(args.runs, all_sides)}",
            file=sys.stderr,
        )
        return 1
    result = compare(
        all_sides,
        args.n_resamples,
        args.seed,
        args.allow_different_prompts,
        allow_different_judges=args.allow_different_judges,
    )
    return _report(args, result, notes, target)


def cluster_problem(cluster: str | None, found: list[Found]) -> str | None:
    """``--cluster FIELD`` that no task of another package's runs holds on every item (this
    package's tasks cluster by their own unit, and take no FIELD)."""
    if not cluster:
        return None
    foreign = [items for what in found for items in what.items if not items.benchmark]
    if not foreign or any(items.unit == cluster for items in foreign):
        return None
    tasks = ", ".join(sorted({items.task for items in foreign}))
    return (
        f"--cluster {cluster}: no item of {tasks} has that field (an lm-eval doc field or an "
        "Inspect sample metadata key every item holds)"
    )


def scale_problem(target: float | None, found: list[Found]) -> str | None:
    """A ``--target-difference`` no metric of the runs can show: as large as every known
    metric's whole scale (10 on a 0-1 metric), said with the scales; None where some metric
    could (its rows plan; the others say the target cannot occur)."""
    if target is None:
        return None
    scales: dict[str, str] = {}
    for what in found:
        for items in what.items:
            for metric in items.metrics:
                scale = metric_scale(items, metric)
                if scale is None or target < scale.high - scale.low:
                    return None  # a metric the target fits, or one of unknown scale
                scales[f"{items.task} {metric}"] = scale_text(scale)
    if not scales:
        return None
    listed = sorted(set(scales.values()))
    example = "; ".join(f"{name}: {text}" for name, text in list(scales.items())[:3])
    return (
        f"--target-difference {target:g}: as large as the whole scale of every "
        f"metric compared ({example}{', …' if len(scales) > 3 else ''}): give a difference "
        f"on the metric's scale ({'; '.join(listed)}; 0.1 is ten points of a 0-1 metric)"
    )


def scale_text(scale: Any) -> str:
    """ "0-1 (its items' values)", "0-100 (percent)"."""
    return f"{number_text(scale.low, 0)}-{number_text(scale.high, 0)} ({scale.unit})"


def variant_pairs(values: list[str] | None) -> list[tuple[str, str]] | None:
    """``--variants a=b c=d`` -> [(a, b), (c, d)]; None for a value that is not a pair."""
    pairs = []
    for value in values or []:
        first, sep, second = value.partition("=")
        if not sep or not first.strip() or not second.strip():
            return None
        pairs.append((first.strip(), second.strip()))
    return pairs


def nothing_compared(result: Comparison, variants: bool) -> str:
    """Why no row came out, without contradiction: the pairs that were refused say why in
    the notes; else what each run holds."""
    if variants:
        return (
            "--variants found no two variants of one task within a model on the same items "
            "(runs of one model whose task names of one benchmark, options, seeds or "
            "generation settings differ; TASK_A=TASK_B names a pair)"
        )
    refused = [note for note in result.notes if "not paired" in note]
    if refused:
        return (
            f"no two runs could be compared: {len(refused)} "
            + ("pair differs" if len(refused) == 1 else "pairs differ")
            + " (the notes above name each difference and the option that compares them)"
        )
    held = "; ".join(f"{s.letter}: {', '.join(sorted(s.tasks))}" for s in result.sides)
    return f"no task is held by two of the runs with comparable items ({held})"


def _report(
    args: argparse.Namespace, result: Comparison, notes: list[str], target: float | None
) -> int:
    result.notes = notes + result.notes
    if not result.rows:
        _print_notes(result.notes, sys.stderr)
        reason = nothing_compared(result, args.variants is not None)
        print(f"conceptcomb: error: {reason}", file=sys.stderr)
        return 1
    plans = planned(result, target) if target is not None else None
    count = largest.parse_count(getattr(args, "items", None))
    if args.json:
        found = to_json(result)
        if plans is not None:
            for entry, plan, row in zip(found["comparisons"], plans, result.rows, strict=True):
                entry["items_needed"] = (
                    _clean(plan.to_json())
                    if plan
                    else {"beyond_scale": scale_text(row_scale(result, row))}
                )
            found["target_difference"] = target
        if count is not None:
            for entry, row in zip(found["comparisons"], result.rows, strict=True):
                entry["largest_differences"] = _largest_json(largest.largest(row, count))
        print(json.dumps(found, indent=2, allow_nan=False))
    elif args.csv:
        print(to_csv(result), end="")
    else:
        print(table(result, count))
        if plans is not None:
            print("\n".join(planning_lines(result, plans)))
    return 0


def _largest_json(found: largest.Largest) -> dict[str, Any]:
    if found.why:
        return {"why": found.why}
    return _clean({"differing": found.differing, "items": [item.to_json() for item in found.items]})


# --- planning the items ----------------------------------------------------------------------
def planned(result: Comparison, target: float) -> list[stats.ItemsNeeded | None]:
    """Each row's items needed to detect ``target`` (`stats.items_needed`); None for a row
    whose metric's scale the target does not fit (`row_scale`)."""
    return [
        None if _beyond(row_scale(result, row), target) else stats.items_needed(row.result, target)
        for row in result.rows
    ]


def _beyond(scale: Any, target: float) -> bool:
    return scale is not None and target >= scale.high - scale.low


def row_scale(result: Comparison, row: Any) -> Any:
    """The scale of a row's metric (its A run's task: `metric_scale`)."""
    if row.pairing is not None:
        return metric_scale(row.pairing.a, row.metric)
    return None


def task_size(result: Comparison, task: str) -> int | None:
    """The items of a task of this package (its card's ``dataset_samples``), else None."""
    from conceptcomb.benchmarks import get

    for side in result.sides:
        for items in side.tasks.get(task, []):
            if items.benchmark:
                card = get(items.benchmark).card
                return card.tasks[task].dataset_samples if task in card.tasks else None
    return None


def planning_lines(result: Comparison, plans: list[stats.ItemsNeeded | None]) -> list[str]:
    """One line per row: the items (and units) needed, and whether the task has them."""
    if not plans:
        return []
    target = f"{next(p.target for p in plans if p is not None):g}"
    lines = [
        "",
        f"Items needed to find a true difference of {target} with 80% power at 5% "
        "(two-sided), from these runs' spread and correlation:",
    ]
    for row, plan in zip(result.rows, plans, strict=True):
        where = f"  {row.task} {row.metric}" + (
            f" ({row.a} - {row.b})" if len(result.sides) > 2 else ""
        )
        if plan is None:
            scale = scale_text(row_scale(result, row))
            lines.append(f"{where}: a difference of {target} cannot occur on its {scale} scale")
            continue
        if plan.items is None:
            lines.append(f"{where}: no spread in the paired differences to plan from")
            continue
        text = f"{where}: {plan.items:,} items"
        if plan.units is not None:
            text += f" ({plan.units:,} {plan.unit or 'units'}; design effect "
            text += f"{plan.design_effect:.2f})"
        text += f" [{plan.method}; paired now: {row.result.n:,}]"
        size = task_size(result, row.task)
        if size is not None and plan.items > size:
            text += f"; the task has {size:,} items: fewer than needed"
        elif size is not None:
            text += f"; the task has {size:,}"
        lines.append(text)
    return lines


def held_by_argument(arguments: list[Path], all_sides: list[Side]) -> str:
    """What each RUN argument holds, named: "out/a: 1 run (smollm2 (lm-eval)); out/b: none
    (no per-item scores of any task in it)"."""
    parts = []
    for argument in arguments:
        mine = [side.label for side in all_sides if side.argument == str(argument)]
        if mine:
            runs = "1 run" if len(mine) == 1 else f"{len(mine)} runs"
            parts.append(f"{argument}: {runs} ({', '.join(mine)})")
        else:
            parts.append(f"{argument}: none (no per-item scores of any task in it)")
    return "; ".join(parts)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def to_json(result: Comparison) -> dict[str, Any]:
    return _clean(
        {
            "runs": [
                {
                    "run": s.letter,
                    "label": s.label,
                    "argument": s.argument,
                    "tasks": sorted(s.tasks),
                    "judges": _judges(s),
                }
                for s in result.sides
            ],
            "comparisons": [row.to_json() for row in result.rows],
            "unpaired": [
                {
                    "task": u.task,
                    "run_a": u.a,
                    "run_b": u.b,
                    "paired": u.paired,
                    "only_a": u.only_a,
                    "only_b": u.only_b,
                    "data_differs": u.data_differs,
                }
                for u in result.unpaired
            ],
            "judge_signs": [signs.to_json() for signs in judge_signs(result)],
            "notes": result.notes,
            "level": stats.LEVEL,
            "power": stats.POWER,
            "alpha": stats.ALPHA,
            "n_resamples": result.n_resamples,
            "seed": result.seed,
        }
    )


def _judges(side: Side) -> dict[str, list[dict[str, Any]]]:
    """Task -> the records of the judges that scored the side's judged tasks."""
    return {
        task: [record.as_dict() for record in side.task(task).judge]
        for task in sorted(side.tasks)
        if side.task(task).judged
    }


def to_csv(result: Comparison) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in result.rows:
        writer.writerow(_clean({**row.to_json(), "differs": "; ".join(row.differs)}))
    return out.getvalue()


# --- the table -------------------------------------------------------------------------------
# Below this a value is the float noise of a corpus metric (BLEU of no match is ~1e-15): 0.
NOISE = 1e-9


def number_text(value: float | None, digits: int = 2, sign: bool = False) -> str:
    """The table's number: ``digits`` decimals; a value those decimals would show as 0 (a
    BLEU-4 of 2e-7 on 0-1) in scientific notation, so that a difference the table calls
    significant is never printed as +0.00."""
    if value is None or not math.isfinite(value):
        return "–"
    plus = "+" if sign else ""
    if abs(value) < NOISE:
        value = 0.0
    elif abs(value) < 0.5 * 10**-digits:
        return f"{value:{plus}.1e}"
    return f"{value:{plus}.{digits}f}"


def _p(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def method_text(result: stats.Difference) -> str:
    text = result.method
    if result.clusters:
        text += f" by {result.unit or 'unit'} ({result.clusters})"
    if result.resamples:
        text += f" ({result.resamples:,} resamples)"
    return text


def table(result: Comparison, items: int | None = None) -> str:
    """The comparison as a table; ``items``: under each row, its items of largest |A - B|."""
    lines = ["Runs:"]
    lines += [
        f"  {s.letter} = {s.label}" + ("" if s.argument in s.label else f": {s.argument}")
        for s in result.sides
    ]
    variants = any(row.differs for row in result.rows)
    several = len(result.sides) > 2 or (variants and len(result.sides) > 1)
    header = [*COLUMNS]
    if variants:
        header.insert(2, VARIANTS_COLUMN)
    if several:
        header.insert(2, "runs")
    body = []
    for row in result.rows:
        r = row.result
        cells = [
            row.task,
            row.metric + (f" ({row.label})" if row.label else ""),
            number_text(r.a),
            number_text(r.b),
            f"{number_text(r.difference, sign=True)} [{number_text(r.lower, sign=True)}, "
            f"{number_text(r.upper, sign=True)}]",
            _p(r.p),
            _p(row.p_holm),
            str(r.n),
            number_text(r.mdd),
            method_text(r),
        ]
        if variants:
            cells.insert(2, "; ".join(row.differs))
        if several:
            cells.insert(2, f"{row.a} - {row.b}")
        body.append(cells)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *body, strict=True)]
    numeric = {
        i
        for i, name in enumerate(header)
        if name not in ("task", "metric", "method", "runs", VARIANTS_COLUMN)
    }
    for number, cells in enumerate([header, *body]):
        parts = [
            c.rjust(w) if i in numeric and cells is not header else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
        if items is not None and number > 0:
            row = result.rows[number - 1]
            found = largest.largest(row, items)
            lines += largest.lines(found, row.metric, (row.a, row.b), readable)
    lines.append("")
    lines.append(
        f"A - B: on the items both runs hold; 95% intervals; p Holm: adjusted over the "
        f"{len(result.rows)} comparisons; MDD: the smallest difference these items detect with "
        "80% power at 5% (two-sided). Methods: docs/comparing.md."
    )
    lines += _unpaired_lines(result)
    lines += sign_lines(result)  # models scored by several judges: does A - B keep its sign?
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


# A stable id: the pinned file's sha256, then the item's key ("test.jsonl:1234").
_STABLE_ID = re.compile(r"^[0-9a-f]{64}:(.+)$")


def readable(item: str) -> str:
    """An item's key as a reader finds it in the data (the file and its id), without the
    file's sha256 its stable id starts with; other ids as they are."""
    match = _STABLE_ID.match(item)
    return match.group(1) if match else item


def _listed(ids: list[str]) -> str:
    shown = ", ".join(readable(i) for i in ids[:MOST_LISTED])
    return shown + (
        f", … ({len(ids) - MOST_LISTED} more: --json lists all)" if len(ids) > MOST_LISTED else ""
    )


def _unpaired_lines(result: Comparison) -> list[str]:
    lines = []
    for u in result.unpaired:
        if not u.count:
            continue
        parts = []
        if u.only_a:
            parts.append(f"{len(u.only_a)} only in {u.a} ({_listed(u.only_a)})")
        if u.only_b:
            parts.append(f"{len(u.only_b)} only in {u.b} ({_listed(u.only_b)})")
        if u.data_differs:
            parts.append(f"{len(u.data_differs)} whose data differ ({_listed(u.data_differs)})")
        lines.append(
            f"unpaired: {u.task} {u.a} - {u.b}: {u.paired} items paired; not paired: "
            + "; ".join(parts)
        )
    return lines


def _print_notes(notes: list[str], stream: Any) -> None:
    for note in dict.fromkeys(notes):
        print(f"note: {note}", file=stream)

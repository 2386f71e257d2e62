"""What the item explorer's page holds, gathered in Python from what `compare` reads.

The runs are read by `conceptcomb.leaderboard.compare.items.read_argument` and grouped into
`compare`'s sides; the comparisons in the page are `compare`'s (or `compare_variants`') rows,
computed once here for every pair of runs of a task, so that the page's header equals
``conceptcomb compare RUN... --json`` and needs nothing but itself. Each row keeps the two
runs it paired (`Row.pairing`): the page's columns are exactly those runs.

Strings that many runs share (prompts, references, replies that repeat) are stored once in
``strings`` and named by their index. A benchmark's own fields (CCPT's property type,
CGGC's structure type...) come from its evidence adapter (`explorer_fields`), read from the
pinned test item the evidence's id names; the judge's questions of an item, each with its
rating and the judge's raw answer, from the adapter too (`explorer_questions`), read from
the item's evidence.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.evidence import JudgeAnswers
from conceptcomb.leaderboard.compare.cli import readable, to_json
from conceptcomb.leaderboard.compare.comparison import (
    Comparison,
    Row,
    Side,
    compare,
    compare_variants,
    judge_text,
    same_judges,
    sides,
)
from conceptcomb.leaderboard.compare.items import TaskItems, read_argument
from conceptcomb.leaderboard.statistics import stats

FORMAT = "conceptcomb-explorer/1"
# A reply longer than this is cut in the page (its length said): a 1 MB reply is evidence
# of something, but not something to put in every row of a table.
MOST_CHARS = 20_000


@dataclass
class Strings:
    """Every text of the page once, by index (-1: none).

    A text is cleaned (`_clean_text`) the first time it is added, not each time: a prompt's
    instruction or a reply that many items or runs share is added once per item and run.
    Two texts that clean to the same text still share one index."""

    texts: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)  # cleaned text -> its index
    seen: dict[str, int] = field(default_factory=dict)  # text as added -> its index

    def add(self, value: Any) -> int:
        if value is None:
            return -1
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        found = self.seen.get(text)
        if found is None:
            clean = _clean_text(text)
            found = self.index.get(clean)
            if found is None:
                found = self.index[clean] = len(self.texts)
                self.texts.append(clean)
            self.seen[text] = found
        return found


def _clean_text(text: str) -> str:
    """Text any browser shows: lone surrogates (invalid UTF-8 read with surrogateescape)
    replaced, and cut at `MOST_CHARS` with the length said."""
    if len(text) > MOST_CHARS:
        text = text[:MOST_CHARS] + f" … [cut: {len(text):,} characters in all]"
    return text.encode("utf-8", "replace").decode("utf-8")


@dataclass
class Column:
    """One run of one view: a side (a model in a framework) or, with --variants, one way a
    model ran a task."""

    items: TaskItems
    letter: str
    label: str
    # The files its items were read from (several where a side's runs are averaged): what
    # `column_of` finds a run of another reader (the report's ranking) by.
    sources: list[str] = field(default_factory=list)


def gather(
    paths: Sequence[Path],
    data_dir: str | None = None,
    variants: list[tuple[str, str]] | None = None,
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
) -> dict[str, Any]:
    """The page's data: the runs, each task's view (items, columns, comparisons), notes
    (gathered with the garbage collector paused: `collector_paused`)."""
    with collector_paused():
        return _gather(paths, data_dir, variants, n_resamples, seed)


def _gather(
    paths: Sequence[Path],
    data_dir: str | None,
    variants: list[tuple[str, str]] | None,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    found = [read_argument(path, data_dir) for path in paths]
    all_sides = sides(list(paths), found)
    if variants is not None:
        result = compare_variants(all_sides, variants, n_resamples, seed)
    else:
        result = compare(all_sides, n_resamples, seed)
    result.notes = [note for what in found for note in what.notes] + result.notes
    strings = Strings()
    views = [
        _view(name, columns, rows, strings, data_dir)
        for name, columns, rows in _views(result, all_sides, variants is not None)
    ]
    compared = to_json(result)
    return {
        "format": FORMAT,
        "runs": compared["runs"],
        "notes": compared["notes"],
        "variants": variants is not None,
        "views": views,
        "strings": strings.texts,
    }


def _views(
    result: Comparison, all_sides: list[Side], variants: bool
) -> list[tuple[str, list[Column], list[tuple[int, Row]]]]:
    """(view name, its columns, its rows with their index in ``compare --json``): a task's
    view shows every side holding it; a variants view the variants its rows pair."""
    found: dict[str, tuple[list[Column], list[tuple[int, Row]]]] = {}
    if not variants:
        for task in dict.fromkeys(t for side in all_sides for t in side.tasks):
            columns = [
                Column(side.task(task), side.letter, side.label,
                       [items.source for items in side.tasks[task]])
                for side in all_sides
                if task in side.tasks
            ]  # fmt: skip
            found[task] = (columns, [])
    for number, row in enumerate(result.rows):
        pairing = row.pairing
        if pairing is None:
            continue
        columns, rows = found.setdefault(row.task, ([], []))
        for items, letter in ((pairing.a, row.a), (pairing.b, row.b)):
            if not any(column.items is items for column in columns):
                label = _side_label(all_sides, letter)
                if variants:
                    label = f"{label}: {items.task}" + "".join(
                        f"; {key}={value}" for key, value in sorted(items.settings.items())
                    )
                columns.append(Column(items, letter, label, items.source.split(", ")))
        rows.append((number, row))
    return [(name, columns, rows) for name, (columns, rows) in found.items()]


def column_of(data: dict[str, Any], task: str, sources: Sequence[str]) -> str | None:
    """The letter of the column of view ``task`` in the page's ``data`` (`gather`) that holds
    a run read from any of ``sources`` (a `TaskItems.source`, or a side's): how another
    reader of the same files (the report's ranking, whose letters are its own) links a run
    to the explorer. None where no column of the view came from those files."""
    wanted = set(sources)
    for view in data["views"]:
        if view["name"] != task:
            continue
        for column in view["columns"]:
            if wanted & set(column["sources"]):
                return str(column["letter"])
    return None


def _side_label(all_sides: list[Side], letter: str) -> str:
    return next((side.label for side in all_sides if side.letter == letter), letter)


def _view(
    name: str,
    columns: list[Column],
    rows: list[tuple[int, Row]],
    strings: Strings,
    data_dir: str | None,
) -> dict[str, Any]:
    """One view: its items (id, fields, prompt, references) and each column's replies,
    values and judge ratings, aligned with the items."""
    ids = list(dict.fromkeys(i for column in columns for i in sorted(column.items.ids)))
    first = columns[0].items
    fields, references = _benchmark_fields(first, ids, data_dir)
    metrics = list(dict.fromkeys(m for column in columns for m in column.items.scores))
    names = _field_names(fields)
    items = []
    for number, item_id in enumerate(ids):
        shown = next((c.items.evidence[item_id] for c in columns if item_id in c.items.evidence),
                     {})  # fmt: skip
        refs = references.get(item_id) or _references(first, shown)
        items.append({
            "id": readable(item_id),
            "unit": _unit(columns, item_id),
            "fields": [strings.add(fields.get(item_id, {}).get(f)) for f in names],
            "prompt": [[role, strings.add(text)] for role, text in _prompt_parts(shown)],
            "refs": [strings.add(r) for r in refs],
            "n": number,
        })  # fmt: skip
    index = {item_id: n for n, item_id in enumerate(ids)}
    return {
        "name": name,
        "unit": first.unit,
        "fields": names,
        "metrics": metrics,
        "judged": sorted({m for c in columns for m in c.items.judged}),
        "judge_groups": _judge_groups(columns),
        "items": items,
        "columns": [_column(c, index, metrics, strings) for c in columns],
        "comparisons": [_comparison(number, row, columns) for number, row in rows],
        "agree": _agreements(columns),
    }


def _judge_groups(columns: list[Column]) -> list[int]:
    """Each column's judge as a number: two columns share it only where `compare` pairs
    their judged metrics (`same_judges`: the same judges, named)."""
    groups: list[int] = []
    for n, column in enumerate(columns):
        earlier = (k for k in range(n) if same_judges(columns[k].items.judge, column.items.judge))
        groups.append(next(earlier, n))
    return groups


def _field_names(fields: dict[str, dict[str, str]]) -> list[str]:
    return list(dict.fromkeys(name for values in fields.values() for name in values))


def _benchmark_fields(
    items: TaskItems, ids: list[str], data_dir: str | None
) -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """Item id -> the benchmark's own fields and references (`Explorable`), from the pinned
    test items; nothing for another package's task or a test set that cannot be read."""
    adapter = evidence_adapter(items.benchmark) if items.benchmark else None
    if adapter is None or not hasattr(adapter, "explorer_fields"):
        return {}, {}
    # Without demonstrations where the benchmark can (CGGC: `test_set` draws every item's).
    read = getattr(adapter, "reference_set", adapter.test_set)
    try:
        test_set = read(items.task, items.options, data_dir)
    except Exception:  # the pinned data not here: the page shows the items without fields
        return {}, {}
    fields, references = {}, {}
    for item_id in ids:
        key = item_id.split(":", 1)[-1]
        try:
            item = test_set.items.get(key)
        except Exception:  # an item the options cannot draw
            item = None
        if item is None:
            continue
        fields[item_id] = adapter.explorer_fields(items.task, item)
        references[item_id] = adapter.explorer_references(items.task, item)
    return fields, references


def _references(items: TaskItems, shown: dict[str, Any]) -> list[str]:
    """References the evidence itself holds (another package's target; CGGC's ids)."""
    if "references" in shown and isinstance(shown["references"], list):
        return [str(r) for r in shown["references"]]
    return []


def _prompt_parts(shown: dict[str, Any]) -> list[tuple[str, str]]:
    """The prompt as sent, message by message (role, text): a bundle's ``prompt`` ([key,
    epoch, [[role, text], ...]] or lm-eval's [doc_id, arguments]), or another task's text.
    Each message is a string of its own: the instruction and the demonstrations that many
    items share are stored once."""
    if "prompt_text" in shown:
        return [("", str(shown["prompt_text"]))]
    prompt = shown.get("prompt")
    if not isinstance(prompt, list) or len(prompt) < 2:
        return []
    messages = prompt[-1]
    if isinstance(messages, list) and all(isinstance(m, list) and len(m) == 2 for m in messages):
        return [(str(role), str(text)) for role, text in messages]
    return [("", json.dumps(messages, ensure_ascii=False))]


def _unit(columns: list[Column], item_id: str) -> str | None:
    for column in columns:
        items = column.items
        if items.units is not None and item_id in items.evidence:
            unit = items.evidence[item_id].get("unit")
            if isinstance(unit, str):
                return unit
    return None


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _column(
    column: Column, index: dict[str, int], metrics: list[str], strings: Strings
) -> dict[str, Any]:
    """A run's replies, values of each metric and judge ratings, in the view's item order
    (null where the run does not hold the item); ``questions``: per item its judge's
    questions as [question, rating, answer] string indices (null where it has none)."""
    items = column.items
    n = len(index)
    replies, judged = [-1] * n, [-1] * n
    questions: list[list[list[int]] | None] = [None] * n
    adapter = _questions_adapter(items)
    values: dict[str, list[float | None]] = {m: [None] * n for m in metrics}
    for row, item_id in enumerate(items.ids):
        at = index[item_id]
        shown = items.evidence.get(item_id, {})
        reply = shown.get("reply")
        if reply is None and isinstance(shown.get("replies"), list):
            reply = "\n---\n".join(str(r) for r in shown["replies"])
        replies[at] = strings.add(reply)
        judged[at] = strings.add(_judged_text(shown))
        if adapter is not None:
            questions[at] = _questions(adapter, items.task, shown, strings)
        for metric in metrics:
            if metric in items.scores:
                values[metric][at] = _number(float(items.scores[metric][row]))
    return {
        "letter": column.letter,
        "label": column.label,
        "task": items.task,
        "framework": items.framework,
        "judge": judge_text(items.judge) if items.judged else None,
        "sources": column.sources,
        "replies": replies,
        "values": values,
        "judged": judged,
        "questions": questions,
    }


def _questions_adapter(items: TaskItems) -> JudgeAnswers | None:
    """The benchmark's adapter where its items hold a judge's questions (`JudgeAnswers`)."""
    if not (items.judged and items.benchmark):
        return None
    adapter = evidence_adapter(items.benchmark)
    return cast(JudgeAnswers, adapter) if hasattr(adapter, "explorer_questions") else None


def _questions(
    adapter: JudgeAnswers, task: str, shown: dict[str, Any], strings: Strings
) -> list[list[int]] | None:
    """The item's judge questions as [question, rating, answer] string indices (answer -1
    where the bundle holds none); None where it has none, or its evidence cannot say."""
    try:
        found = adapter.explorer_questions(task, shown)
    except Exception:  # evidence the adapter cannot read: the judged text still shows it
        return None
    return [
        [strings.add(q.question), strings.add(q.rating), strings.add(q.answer)] for q in found
    ] or None


# Evidence entries that hold what a judge decided (CCPT's questions and ratings, CGGC's
# relation verification) and its failures.
JUDGE_KEYS = ("judged", "verified", "verification", "errors", "judge")


def _judged_text(shown: dict[str, Any]) -> str | None:
    found = {key: shown[key] for key in JUDGE_KEYS if shown.get(key)}
    return json.dumps(found, ensure_ascii=False, indent=1) if found else None


def _comparison(number: int, row: Row, columns: list[Column]) -> dict[str, Any]:
    """``compare --json``'s row (its index there) and the view's two columns it pairs."""
    assert row.pairing is not None
    a = next(n for n, c in enumerate(columns) if c.items is row.pairing.a)
    b = next(n for n, c in enumerate(columns) if c.items is row.pairing.b)
    entry = to_json_row(row)
    return {"index": number, "a": a, "b": b, "row": entry}


def to_json_row(row: Row) -> dict[str, Any]:
    """The row as ``compare --json`` prints it (NaN and infinities as null)."""
    from conceptcomb.leaderboard.compare.cli import _clean

    return _clean(row.to_json())


def _agreements(columns: list[Column]) -> list[dict[str, Any]]:
    """Two runs of a judged task with the same replies scored by different judges (a
    submission and its re-score): ``judge agree``'s figures of the two."""
    from conceptcomb.leaderboard.checks.agreement import agree, lines

    found = []
    for i, x in enumerate(columns):
        for y in columns[i + 1 :]:
            a, b = x.items, y.items
            if not (a.judged and b.judged) or same_judges(a.judge, b.judge):
                continue
            if _replies(a) != _replies(b):
                continue
            try:
                results = agree(Path(a.source.split(", ")[0]), Path(b.source.split(", ")[0]))
            except Exception as err:  # a run agree cannot read alone: said, not hidden
                found.append({"a": x.letter, "b": y.letter, "lines": [f"judge agree: {err}"]})
                continue
            text = [line for r in results if r.task == a.task for line in lines(r)]
            found.append({"a": x.letter, "b": y.letter, "lines": text})
    return found


def _replies(items: TaskItems) -> dict[str, Any]:
    return {i: e.get("reply", e.get("replies")) for i, e in items.evidence.items()}

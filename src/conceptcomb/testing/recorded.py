"""The CCPT authors' recorded answers, for dry runs without a model or a paid judge.

The CCPT files hold each item's own answer (the property, or the noun phrase and modifier)
and GPT-4o's relevance ratings of its noun phrase, head and modifier with the property
(``meta.*_gpt-4o_relevance``, stored as (rating - 1) / 9). Replies that give the item's own
answer, judged by a loopback server replaying those ratings, are what the paper's judge
said about the dataset's answers: a full-size run in seconds (benchmarks, tests).
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.ccpt.data import CCPT_DATASET, CcptItem, load_items
from conceptcomb.ccpt.tasks import NPC_EMERGENT, TYPE_PREDICTION, CcptTaskSpec, default_specs
from conceptcomb.common.datafiles import resolve_files
from conceptcomb.testing.judge_server import LoopbackServer

MODEL_NAME = "ccpt-recorded-answers"

RECORDED_COLUMNS = {
    "combination": "meta.combination_gpt-4o_relevance",
    "root": "meta.root_gpt-4o_relevance",
    "modifier": "meta.modifier_gpt-4o_relevance",
}


def gold_reply(spec: CcptTaskSpec, item: CcptItem) -> str:
    """The item's own answer, in the dictionary format the task asks for."""
    if spec.kind == NPC_EMERGENT:
        return json.dumps({"combination": item.combination, "modifier": item.modifier})
    if spec.kind == TYPE_PREDICTION:
        return json.dumps({"property_type": item.label})
    return json.dumps({"property": item.property})


def write_gold_predictions(
    spec: CcptTaskSpec, path: Path, data_dir: str | os.PathLike[str] | None = None
) -> list[CcptItem]:
    """A ``conceptcomb score`` JSONL of the task's items with their own answers."""
    items = load_items(spec, data_dir)
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            line = {"doc": item.as_doc(), "response": gold_reply(spec, item)}
            handle.write(json.dumps(line) + "\n")
    return items


def recorded_ratings(
    items: list[CcptItem], data_dir: str | os.PathLike[str] | None = None
) -> dict[tuple[str, str], int]:
    """GPT-4o's 1-10 ratings the files record for the items' (concept, property) pairs,
    lower-cased as the loopback server looks them up (the first rating of a pair wins)."""
    rows: dict[str, list[dict[str, str]]] = {}
    ratings: dict[tuple[str, str], int] = {}
    for item in items:
        stem, _, position = item.item_id.partition(":")
        if stem not in rows:
            name = f"{stem}.csv"
            path = resolve_files(CCPT_DATASET, [name], data_dir)[name]
            with path.open(newline="", encoding="utf-8") as handle:
                rows[stem] = list(csv.DictReader(handle))
        row = rows[stem][int(position)]
        for concept, column in RECORDED_COLUMNS.items():
            if row.get(column):
                key = (row[concept].strip().lower(), row["property"].strip().lower())
                ratings.setdefault(key, round(1 + 9 * float(row[column])))
    return ratings


def submit_bundle(results: list[str], out: Path) -> Path:
    """``conceptcomb submit-bundle`` of these results into ``out/bundles``: the one bundle."""
    _cli("submit-bundle", *results, "--out", str(out / "bundles"))
    (bundle,) = (out / "bundles").glob("*.bundle.json")
    return bundle


def score_predictions(
    out: Path, task: str, predictions: Path, model_name: str, *options: str
) -> str:
    """``conceptcomb score`` of saved replies into ``out/<task>.results.json`` (and its
    samples beside it), with the judge ``options``; the results' path."""
    result = out / f"{task}.results.json"
    _cli(
        "score", task, "--predictions", str(predictions), *options,
        "--output", str(result),
        "--samples-output", str(out / f"{task}.samples.jsonl"),
        "--model-name", model_name,
    )  # fmt: skip
    return str(result)


def _cli(*args: str) -> None:
    from conceptcomb.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    if code != 0:
        raise RuntimeError(f"conceptcomb {' '.join(args[:2])} failed ({code})")


def build_group_bundle(out: Path, data_dir: str | None = None) -> Path:
    """The four tasks of the ``ccpt`` group on all 1,534 test items, scored with the
    recorded answers by ``conceptcomb score --samples-output``, in one bundle; its path."""
    out.mkdir(parents=True, exist_ok=True)
    specs = default_specs()
    written = {spec: out / f"{spec.name}.jsonl" for spec in specs}
    items = {spec: write_gold_predictions(spec, path, data_dir) for spec, path in written.items()}
    generative = [item for spec in specs if spec.generative for item in items[spec]]
    ratings = recorded_ratings(generative, data_dir)
    results = []
    with LoopbackServer(ratings=ratings) as server:
        for spec, predictions in written.items():
            judge = ["--judge-base-url", server.base_url, "--judge-model", "gpt-4o",
                     "--judge-cache", str(out / "judge.sqlite")]  # fmt: skip
            # the recorded ratings are for the annotated modifiers as written
            npc = ["--npc-modifier", "surface"] if spec.kind == NPC_EMERGENT else []
            results.append(score_predictions(out, spec.name, predictions, MODEL_NAME, *judge, *npc))
    return submit_bundle(results, out)


# --- the authors' recorded noun phrase completions (results/npc_emergent_*.csv) -----------
@dataclass(frozen=True)
class Recorded:
    """One reply of the authors' results and what they judged for it."""

    position: int  # row = item of the NPC test subset
    reply: str
    root: str
    prop: str
    combination: str  # as judged
    modifier: str  # as judged
    ratings: tuple[int, int, int]  # GPT-4o's 1-10: noun phrase, modifier, head


def csv_rows(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _replies(cell: str) -> list[str]:
    """The list of replies the authors stored as its Python repr (some rewritten in place
    by their format checker, which no longer parse: then the cell is the reply)."""
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        return [cell]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _rating(relevance: str) -> int:
    return round(1 + 9 * float(relevance))


def recorded_replies(path: Path, run: str | None = None) -> Iterator[Recorded]:
    """Every judged reply of a results file (``run``: one column prefix, e.g. gpt-4o_naive_0)."""
    rows = csv_rows(path)
    for column in [c for c in rows[0] if c.endswith("_modifier") and not c.startswith("meta.")]:
        prefix = column.removesuffix("_modifier")  # model_method_seed[_i]
        if run is not None and prefix != run:
            continue
        model, method, seed, *draw = prefix.split("_")
        for position, row in enumerate(rows):
            replies = _replies(row[f"{model}_{method}_{seed}_generated_"])
            reply = replies[min(int(draw[0]), len(replies) - 1)] if draw else replies[-1]
            ratings = (
                _rating(row[f"{prefix}_combination_relevance"]),
                _rating(row[f"{prefix}_modifier_relevance"]),
                _rating(row["meta.root_gpt-4o_relevance"]),
            )
            yield Recorded(
                position,
                reply,
                row["root"],
                row["property"],
                row[f"{prefix}_combination"],
                row[column],
                ratings,
            )


def replay_table(
    recorded: list[Recorded],
) -> tuple[dict[tuple[str, str], int], set[tuple[str, str]]]:
    """The recorded ratings as a loopback judge's table ((concept, property) lower-cased ->
    1-10), and the pairs rated twice with different values (the first rating is kept)."""
    table: dict[tuple[str, str], int] = {}
    twice: set[tuple[str, str]] = set()
    for r in recorded:
        prop = r.prop.strip().lower()
        for concept, rating in zip((r.combination, r.modifier, r.root), r.ratings, strict=True):
            key = (concept.strip().lower(), prop)
            if table.setdefault(key, rating) != rating:
                twice.add(key)
    return table, twice

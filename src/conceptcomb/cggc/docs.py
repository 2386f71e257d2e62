"""CGGC items -> docs: the (test item, demonstrations) pairs a task serves, as documents.

One place for both frameworks: lm-eval's dataset hook and Inspect's samples take the pairs
of `task_pairs` (the test items the pool can serve, the demonstrations each is shown, drawn
by `conceptcomb.cggc.demos`) and render each with `item_doc`; the evidence of a bundle
recomputes them the same way. `conceptcomb.cggc.tasks` holds the names and options.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import sys
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.cggc.data import CggcDataset, CggcItem, load_dataset
from conceptcomb.cggc.demos import DemoIndex, DemoSpec, cggc_demonstrations
from conceptcomb.cggc.prompts import (
    PromptStyle,
    chat_turns,
    question,
    remember_questions,
    style_named,
)
from conceptcomb.cggc.tasks import CggcTaskSpec, TaskOptions
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.datafiles import cache_root, write_cached_json
from conceptcomb.common.demonstrations import OrderedDemonstrations
from conceptcomb.common.errors import DataUnavailableError

log = logging.getLogger("conceptcomb")


def demonstration_pool(dataset: CggcDataset, setting: str) -> tuple[CggcItem, ...]:
    """Where demonstrations come from: the other test items (id) or the pool (ood)."""
    return dataset.test if setting == "id" else dataset.pool


# A dataset's few-shot candidates as docs, per (setting, prompt style, seed): every task of
# those builds the same ~22k (ood) docs, ~0.5 s of rendering and copying each time. The
# dataset hashes by identity, and `load_dataset` gives a new one when a file changes.
@lru_cache(maxsize=8)
@collector_paused()  # a large build (common.collector)
def demonstration_docs(
    dataset: CggcDataset, setting: str, style: PromptStyle, seed: int
) -> tuple[dict[str, Any], ...]:
    """The docs of a setting's demonstration candidates (`demonstration_pool`), each with its
    block rendered in ``style``. Shared by every caller: copy a doc before changing it."""
    prime_questions(dataset, "test" if setting == "id" else "train", style, seed)
    return tuple(
        {**item.as_doc(), "prompt": question(item, style, seed)}
        for item in demonstration_pool(dataset, setting)
    )


@lru_cache(maxsize=16)  # CggcDataset hashes by identity
def _index(dataset: CggcDataset, setting: str) -> DemoIndex:
    return DemoIndex(demonstration_pool(dataset, setting))


@lru_cache(maxsize=32)  # one per (dataset, options): remembers each item's draw
def demonstration_source(dataset: CggcDataset, demo_spec: DemoSpec) -> OrderedDemonstrations:
    return cggc_demonstrations(_index(dataset, demo_spec.setting), demo_spec)


def evaluated_items(
    spec: CggcTaskSpec, options: TaskOptions, dataset: CggcDataset
) -> list[CggcItem]:
    """The test items a task evaluates (typed ones for the order / type variants)."""
    options = options.for_spec(spec)
    items = list(dataset.test)
    if spec.order != "random" or spec.structure is not None:
        items = [item for item in items if item.structure is not None]
    if options.test_type:
        items = [item for item in items if item.structure == options.test_type]
    return items


def demonstrations(
    item: CggcItem, spec: CggcTaskSpec, options: TaskOptions, dataset: CggcDataset
) -> list[CggcItem] | None:
    return demonstration_source(dataset, options.demo_spec(spec)).choose(item.item_id, item)


def paired_spec(spec: CggcTaskSpec, options: TaskOptions) -> CggcTaskSpec | None:
    """The other setting of a task whose id - ood gap is reported (Tables 4 and 6): such a
    task scores only the test items both settings can serve, so the gap compares the same
    items. None for the ood-only variants (order, structure, packaging: Table 7, Fig. 4)."""
    packed = options.for_spec(spec).packaging is not None
    if spec.order != "random" or spec.structure is not None or packed:
        return None
    return replace(spec, setting="ood" if spec.setting == "id" else "id", verify=False)


@collector_paused()  # a large build (common.collector)
def task_pairs(
    spec: CggcTaskSpec, options: TaskOptions, announce: bool = True
) -> list[tuple[CggcItem, list[CggcItem]]]:
    """(test item, demonstrations) for every test item the pool can serve (and, for id and
    ood, the other setting's pool too: `paired_spec`), drawn once per machine and then read
    from the cache (`cached_pairs_path`). When items are left out, a run (``announce``) says
    so once per process, in terms of its numbers (`left_out_notice`)."""
    dataset = load_dataset(options.data_dir)
    partner = paired_spec(spec, options)
    path = cached_pairs_path(pairs_key(spec, options, dataset))
    drawn = _cached_pairs(path, spec, dataset)
    if drawn is None:
        drawn = _draw_pairs(spec, options, dataset, partner)
        if drawn.pairs:
            write_cached_json(path, drawn.as_json())
    if not drawn.pairs:
        raise DataUnavailableError(
            f"{spec.name}: no test item of {dataset.folder} can get {options.k} valid "
            "demonstrations; build a larger dataset (drop --limit) or lower the number of "
            "demonstrations."
        )
    notice = left_out_notice(
        spec, options.k, len(drawn.pairs), drawn.skipped, drawn.unpaired, partner
    )
    key = (spec.name, dataset.sha256, options.k, options.test_type, options.packaging)
    if notice and announce and key not in _ANNOUNCED:
        _ANNOUNCED.add(key)
        log.warning(notice)
    return drawn.pairs


@dataclass(frozen=True)
class DrawnPairs:
    """A task's pairs, and how many test items it left out: without demonstrations
    (``skipped``), or served by its own setting's pool but not the other's (``unpaired``)."""

    pairs: list[tuple[CggcItem, list[CggcItem]]]
    skipped: int
    unpaired: int

    def as_json(self) -> dict[str, Any]:
        return {
            "pairs": [[item.item_id, [d.item_id for d in demos]] for item, demos in self.pairs],
            "skipped": self.skipped,
            "unpaired": self.unpaired,
        }


def _draw_pairs(
    spec: CggcTaskSpec, options: TaskOptions, dataset: CggcDataset, partner: CggcTaskSpec | None
) -> DrawnPairs:
    # Each source looked up once, not per item: 32,334 lookups for cggc_ood otherwise.
    source = demonstration_source(dataset, options.demo_spec(spec))
    other = demonstration_source(dataset, options.demo_spec(partner)) if partner else None
    pairs, skipped, unpaired = [], 0, 0
    for item in evaluated_items(spec, options, dataset):
        demos = source.choose(item.item_id, item)
        if demos is None:
            skipped += 1
        elif other is not None and other.choose(item.item_id, item) is None:
            unpaired += 1
        else:
            pairs.append((item, demos))
    return DrawnPairs(pairs, skipped, unpaired)


# The pairs of a task, by item id, kept in the user cache: drawing every test item's
# demonstrations (32,334 draws for cggc_ood, ~2.5 s of CPU) was paid by every process that
# builds a CGGC task, each lm_eval and inspect run; read back, they take a fraction of a
# second. The key holds all that decides the draw: the dataset's sha256, the task's items
# and demonstration rules (`pairs_key`), and the source of the code that draws them
# (`DRAWING_CODE`), so a changed rule or file is drawn again. lm-eval's sampler draws each
# item's demonstrations once more as it builds the prompt and stops on any difference
# (`lm_eval_hooks.CggcSampler.choose`).
_PAIRS_FORMAT = 1
DRAWING_CODE = (
    "conceptcomb.cggc.data",
    "conceptcomb.cggc.demos",
    "conceptcomb.cggc.docs",
    "conceptcomb.cggc.graphs",
    "conceptcomb.cggc.relations",
    "conceptcomb.cggc.tasks",
    "conceptcomb.common.demonstrations",
    "conceptcomb.common.errors",
)


@cache
def drawing_code_sha256() -> str:
    """The sha256 of `DRAWING_CODE`'s source files, with the cache's format and Python's
    version (whose `random` draws the demonstrations)."""
    return _source_sha256(DRAWING_CODE, _PAIRS_FORMAT)


def _source_sha256(modules: tuple[str, ...], cache_format: int) -> str:
    """The sha256 of ``modules``' source files, a cache's format and Python's version."""
    digest = hashlib.sha256(f"{cache_format}|{sys.version_info[:2]}".encode())
    for name in modules:
        digest.update(Path(str(importlib.import_module(name).__file__)).read_bytes())
    return digest.hexdigest()


def pairs_key(spec: CggcTaskSpec, options: TaskOptions, dataset: CggcDataset) -> str:
    """What decides `task_pairs`: the items `evaluated_items` takes and the draws of the
    task's setting and of its partner's, on this dataset, by this code."""
    fixed = options.for_spec(spec)
    partner = paired_spec(spec, options)
    decides = (
        dataset.sha256,
        drawing_code_sha256(),
        spec.order,
        spec.structure,
        fixed.test_type,
        fixed.demo_spec(spec),
        fixed.demo_spec(partner) if partner else None,
    )
    return hashlib.sha256(repr(decides).encode()).hexdigest()


def cached_pairs_path(key: str) -> Path:
    return cache_root() / "cggc" / f"pairs-{key[:24]}.json"


def _cached_pairs(path: Path, spec: CggcTaskSpec, dataset: CggcDataset) -> DrawnPairs | None:
    try:
        stored = json.loads(path.read_bytes())
        tests, pool = _by_id(dataset, "id"), _by_id(dataset, spec.setting)
        pairs = [(tests[item], [pool[d] for d in demos]) for item, demos in stored["pairs"]]
        return DrawnPairs(pairs, int(stored["skipped"]), int(stored["unpaired"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none yet, or not one we wrote: draw them


# Every item's block (`prompts.question`) of a split in a style and seed, kept in the user
# cache beside the pairs: an lm-eval CGGC build wants the blocks of the test items and of
# the few-shot candidates (~38k for cggc_ood, ~1.7 s of CPU of a 5.1 s build to render),
# Inspect's those of the test items, paid by every process that builds a CGGC task; read
# back, a fraction of that. The key holds the dataset's sha256, the split, the style, the
# seed and the source of the code that renders them (`QUESTION_CODE`).
_QUESTIONS_FORMAT = 1
QUESTION_CODE = (
    "conceptcomb.cggc.data",
    "conceptcomb.cggc.graphs",
    "conceptcomb.cggc.prompts",
    "conceptcomb.common.conceptnet",
)


@cache
def question_code_sha256() -> str:
    """The sha256 of `QUESTION_CODE`'s source files, with the cache's format and Python's
    version (whose `random` shuffles each graph's edges)."""
    return _source_sha256(QUESTION_CODE, _QUESTIONS_FORMAT)


def questions_key(dataset: CggcDataset, split: str, style: PromptStyle, seed: int) -> str:
    decides = (dataset.sha256, question_code_sha256(), split, repr(style), seed)
    return hashlib.sha256(repr(decides).encode()).hexdigest()


def cached_questions_path(key: str) -> Path:
    return cache_root() / "cggc" / f"questions-{key[:24]}.json"


@lru_cache(maxsize=16)  # CggcDataset hashes by identity: once per dataset, split, style, seed
@collector_paused()  # a large build (common.collector)
def prime_questions(dataset: CggcDataset, split: str, style: PromptStyle, seed: int) -> None:
    """The blocks of every item of one split of ``dataset`` (``test``, or ``train``: the
    few-shot pool) in ``style`` and ``seed``, read from the cache (or rendered and written
    there), for `prompts.question` to answer without rendering."""
    items = dataset.test if split == "test" else dataset.pool
    key = questions_key(dataset, split, style, seed)
    path = cached_questions_path(key)
    texts = _cached_questions(path, key, len(items))
    if texts is None:
        texts = [question(item, style, seed) for item in items]
        write_cached_json(path, {"key": key, "questions": texts})
    remember_questions(style, seed, items, texts)


def _cached_questions(path: Path, key: str, count: int) -> list[str] | None:
    try:
        stored = json.loads(path.read_bytes())
        texts = stored["questions"]
        if stored["key"] != key or len(texts) != count:
            return None
        if not all(isinstance(text, str) for text in texts):
            return None
        return texts
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none yet, or not one we wrote: render them


@lru_cache(maxsize=8)  # CggcDataset hashes by identity
def _by_id(dataset: CggcDataset, setting: str) -> dict[str, CggcItem]:
    """The items demonstrations of ``setting`` come from, by id: the test items for id."""
    return {item.item_id: item for item in demonstration_pool(dataset, setting)}


def _partner_serves(
    item: CggcItem, partner: CggcTaskSpec | None, options: TaskOptions, dataset: CggcDataset
) -> bool:
    return partner is None or demonstrations(item, partner, options, dataset) is not None


@lru_cache(maxsize=16)  # CggcDataset hashes by identity
def _evaluated_by_id(
    spec: CggcTaskSpec, options: TaskOptions, dataset: CggcDataset
) -> dict[str, CggcItem]:
    return {item.item_id: item for item in evaluated_items(spec, options, dataset)}


def task_pair(
    spec: CggcTaskSpec, options: TaskOptions, item_id: str
) -> tuple[CggcItem, list[CggcItem]] | None:
    """The pair `task_pairs` holds for one test item, None where it holds none, without
    drawing every other item's demonstrations: an item's draw depends on that item alone
    (`conceptcomb.common.demonstrations.item_rng`). Checking a bundle of 20 `cggc_ood`
    items draws 40 demonstration sets where `task_pairs` draws 32,334 (2.4 s of CPU at
    load 10 on 2 cores, 2026-12-06; 19.9 s before the indexes of `demos.Candidates`)."""
    dataset = load_dataset(options.data_dir)
    item = _evaluated_by_id(spec, options, dataset).get(item_id)
    if item is None:
        return None
    demos = demonstrations(item, spec, options, dataset)
    if demos is None or not _partner_serves(item, paired_spec(spec, options), options, dataset):
        return None
    return item, demos


# What this process has said about left-out items already: (task, dataset, options).
_ANNOUNCED: set[tuple[object, ...]] = set()


def left_out_notice(
    spec: CggcTaskSpec,
    k: int,
    scored: int,
    skipped: int,
    unpaired: int,
    partner: CggcTaskSpec | None,
) -> str | None:
    """One line on the test items a task leaves out and what that means for its numbers."""
    if not skipped and not unpaired:
        return None
    reasons = []
    if skipped:
        reasons.append(
            f"{skipped:,} the pool cannot give {k} valid demonstrations (the authors' script "
            "leaves such items out too)"
        )
    if unpaired:
        assert partner is not None
        reasons.append(
            f"{unpaired:,} that {partner.name} cannot serve, so that both settings score the "
            "same items and their gap compares like with like"
        )
    total = scored + skipped + unpaired
    return (
        f"{spec.name} scores {scored:,} of the {total:,} test items, leaving out "
        f"{' and '.join(reasons)}: its metrics and item counts are over those {scored:,} "
        "items. Nothing to do; this is the task's design, the same in every run."
    )


def dataset_fields(dataset: CggcDataset) -> dict[str, Any]:
    """What names the data in every doc (a run's logged samples, a bundle's item ids): the
    dataset's identity and its files' sha256, never the folder it was read from, which
    differs between installs and machines."""
    return {"dataset_sha256": dataset.sha256, "dataset_files": dataset.file_sha256}


def item_doc(
    item: CggcItem, demos: list[CggcItem], spec: CggcTaskSpec, options: TaskOptions
) -> dict[str, Any]:
    """A test item as a document: its fields, the prompt block and its demonstrations."""
    return {
        **item.as_doc(),
        **_task_fields(spec, options),
        "prompt": question(item, spec.prompt_style, options.seed),
        "demonstration_ids": [d.item_id for d in demos],
        "demonstration_labels": [d.graph_label for d in demos],
        "demonstration_types": [d.structure or "" for d in demos],
    }


@lru_cache(maxsize=64)  # the same in every doc of a task: worked out once, only spread
def _task_fields(spec: CggcTaskSpec, options: TaskOptions) -> dict[str, Any]:
    return {**options.as_doc_fields(spec), "instruction": spec.prompt_style.description}


@lru_cache(maxsize=8)  # CggcDataset hashes by identity
def _by_id(dataset: CggcDataset, setting: str) -> dict[str, CggcItem]:
    return {item.item_id: item for item in demonstration_pool(dataset, setting)}


def chat_messages(
    task: str, doc: dict[str, Any], options: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The chat the task sends for a doc (`item_doc`), as both frameworks send it: the
    instruction, each demonstration a user block answered by its sentence, then the item
    (`conceptcomb.cggc.prompts.chat_turns`); the demonstrations are read, by their ids, from
    the dataset the run read (the doc's ``data_dir``, else ``options``', else the shipped)."""
    item = CggcItem.from_doc(doc)
    data_dir = doc.get("data_dir") or (options or {}).get("data_dir") or None
    pool = _by_id(load_dataset(data_dir), str(doc.get("setting") or "ood"))
    try:
        demos = [pool[str(name)] for name in doc.get("demonstration_ids") or []]
    except KeyError as err:
        raise DataUnavailableError(
            f"{task} item {item.item_id}: demonstration {err} is not in the dataset at "
            f"{data_dir or 'the shipped folder'}: name the dataset the run read (--data-dir)."
        ) from None
    style = style_named(str(doc.get("prompt_style") or "paper"))
    return chat_turns(item, demos, style, int(doc.get("seed") or 0))

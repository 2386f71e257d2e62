"""``conceptcomb cggc build``: CGGC from CommonGen and ConceptNet (paper section 4, App. A).

1. CommonGen v1.1 train + valid (the paper's "train and dev"); one item per reference.
2. ConceptNet triples of the 13 relations (merged as Table 9), verbalized by templates.
3. SBERT embeddings of triples, references and node names (cached on disk).
4. Per reference: triple weights (1 - cos) / 2, Dijkstra shortest paths between all
   concept pairs, their union, SBERT pruning (paths.py), graph label, structure type
   (graphs.py).
5. Compositional labels and the pool / test split (splits.py), written as
   compos_train.jsonl / compos_test.jsonl plus graphs.jsonl (every built graph) and
   build_info.json (inputs with sha256, options, statistics, timings).

An item is built only if all its concepts are ConceptNet nodes joined by paths: with
CN-100K about a third of CommonGen's references cannot be (the paper used full ConceptNet).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.cggc.data import POOL_FILE, TEST_FILE, CggcItem, records_of, write_jsonl
from conceptcomb.cggc.dataset_build import stats
from conceptcomb.cggc.dataset_build.embeddings import BATCH_SIZE, PACKAGED_MODEL, Encoder
from conceptcomb.cggc.dataset_build.paths import KnowledgeBase, prune
from conceptcomb.cggc.dataset_build.sources import (
    COMMONGEN_DATASET,
    Reference,
    pinned_commongen_dir,
    read_commongen,
    read_conceptnet,
)
from conceptcomb.cggc.dataset_build.splits import (
    MIN_LABEL_ITEMS,
    TEST_FRACTION,
    check_compositional,
    split_items,
)
from conceptcomb.cggc.graphs import GraphEdge, nodes_of, structure_type
from conceptcomb.cggc.relations import make_label
from conceptcomb.common.conceptnet import (
    CN100K_DATASET,
    CN100K_FILES,
    concept_uri,
    pinned_cn100k_dir,
)
from conceptcomb.common.datafiles import sha256_of
from conceptcomb.common.errors import ConfigError

CHUNK = 512  # references whose similarities are computed in one matrix product


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    commongen: Path | None = None
    conceptnet: Path | None = None
    data_dir: str | None = None
    splits: tuple[str, ...] = ("train", "valid")
    seed: int = 0
    limit: int | None = None
    test_fraction: float = TEST_FRACTION
    min_label_items: int = MIN_LABEL_ITEMS
    sbert_model: str = PACKAGED_MODEL
    device: str | None = None
    batch_size: int = BATCH_SIZE
    workers: int | None = None  # processes of the graphs stage; None: one per core


class Timer:
    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self._start = time.perf_counter()

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        self.stages[name] = round(now - self._start, 1)
        print(f"[cggc build] {name}: {self.stages[name]:.1f} s", flush=True)
        self._start = now


def official_edge(edge: GraphEdge) -> list[str]:
    return [concept_uri(edge.head), concept_uri(edge.tail), f"/r/{edge.relation}", "left"]


def _limit_sets(refs: list[Reference], limit: int | None) -> list[Reference]:
    """The references of the first ``limit`` concept sets of each split."""
    if limit is None:
        return refs
    return [ref for ref in refs if ref.concept_set_idx < limit]


def _inputs(options: BuildOptions) -> tuple[Path, Path, dict[str, Any]]:
    commongen = options.commongen or pinned_commongen_dir(options.data_dir, options.splits)
    conceptnet = options.conceptnet or pinned_cn100k_dir(options.data_dir)
    pinned = {f.name.split("/")[-1]: f.sha256 for f in COMMONGEN_DATASET.files}
    pinned_cn = {f.name.split("/")[-1]: f.sha256 for f in CN100K_DATASET.files}
    files: dict[str, Any] = {}
    for split in options.splits:
        for kind in ("src", "trg"):
            path = commongen / f"{split}_{kind}.txt"
            if path.is_file():
                files[str(path)] = _describe(path, pinned.get(path.name))
    cn_files = [conceptnet] if conceptnet.is_file() else [conceptnet / n for n in CN100K_FILES]
    cn_files = [path for path in cn_files if path.is_file()]  # exactly what read_conceptnet reads
    for path in cn_files:
        files[str(path)] = _describe(path, pinned_cn.get(path.name))
    return commongen, conceptnet, files


def _describe(path: Path, pinned: str | None) -> dict[str, Any]:
    digest = sha256_of(path)
    return {"sha256": digest, "matches_pinned_release": pinned == digest if pinned else None}


def build(options: BuildOptions) -> dict[str, Any]:
    """Build the dataset into ``options.out``; returns build_info (also written there)."""
    timer = Timer()
    commongen, conceptnet, input_files = _inputs(options)
    refs = _limit_sets(read_commongen(commongen, options.splits), options.limit)
    triples = read_conceptnet(conceptnet)
    print(
        f"[cggc build] {len(refs):,} references of {len({r.set_key for r in refs}):,} concept "
        f"sets; {len(triples):,} ConceptNet triples of the 13 relations",
        flush=True,
    )
    kb = KnowledgeBase(
        [t.head for t in triples],
        [t.relation for t in triples],
        [t.tail for t in triples],
        protected={c for ref in refs for c in ref.concepts},
    )
    candidates = [r for r in refs if all(c in kb.index for c in r.concepts)]
    print(
        f"[cggc build] searchable graph: {len(kb.names):,} nodes, {len(kb.pair_starts):,} "
        f"edges, {kb.triple_count:,} triples; {len(candidates):,} references have all "
        "concepts in it",
        flush=True,
    )
    timer.stage("read inputs")
    encoder = Encoder(options.sbert_model, options.device, options.batch_size)
    triple_emb = encoder.encode(kb.triple_texts(), "triples")
    node_emb = encoder.encode(list(kb.names), "node names")
    texts = sorted({ref.target for ref in candidates})
    text_row = {text: i for i, text in enumerate(texts)}
    ref_emb = encoder.encode(texts, "references")
    del encoder  # the model is not needed by the graphs stage (nor by its forked workers)
    timer.stage("embeddings")
    graphs: dict[str, dict[str, Any]] = {}
    items: list[CggcItem] = []
    shared = _Shared(kb, candidates, triple_emb, node_emb, ref_emb, text_row, CHUNK)
    for ref, item, record in _build_items(shared, options.workers or _cores()):
        items.append(item)
        graphs[ref.item_id] = record
    timer.stage("graphs")
    split = split_items(items, options.seed, options.test_fraction, options.min_label_items)
    problems = check_compositional(split.pool, split.test)
    if problems:  # a bug, never the data: the split must hold the constraint
        raise AssertionError("compositional constraint violated: " + "; ".join(problems[:5]))
    info = _write(options, split, items, graphs, refs, candidates, input_files, kb)
    tables = info.pop("_tables")
    timer.stage("split and write")
    info["timings_s"] = {**timer.stages, "total": round(sum(timer.stages.values()), 1)}
    (options.out / "build_info.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"{tables}\n\n[cggc build] total: {info['timings_s']['total']:.1f} s", flush=True)
    return info


@dataclass(frozen=True)
class _Shared:
    """What every chunk of the graphs stage reads (shared copy-on-write by forked workers)."""

    kb: KnowledgeBase
    refs: list[Reference]
    triple_emb: np.ndarray
    node_emb: np.ndarray
    ref_emb: np.ndarray
    text_row: dict[str, int]
    chunk: int  # references per task (CHUNK)


def _build_items(
    shared: _Shared, workers: int = 1
) -> Iterator[tuple[Reference, CggcItem, dict[str, Any]]]:
    """Every buildable reference's (reference, item, graph record), in reference order.

    Work is cut into the same slices of ``shared.chunk`` references whatever ``workers`` is,
    and a pool's results are taken in order (imap): the files do not depend on the workers.
    """
    from tqdm import tqdm

    starts = range(0, len(shared.refs), shared.chunk)
    workers = max(1, min(workers, len(starts)))
    with tqdm(total=len(shared.refs), desc="reasoning graphs", unit="ref") as progress:
        if workers == 1:
            for start in starts:
                yield from _with_refs(shared, _chunk_results(shared, start))
                progress.update(len(shared.refs[start : start + shared.chunk]))
            return
        with _pool(shared, workers) as pool:
            for start, results in zip(starts, pool.imap(_worker_chunk, starts), strict=True):
                yield from _with_refs(shared, results)
                progress.update(len(shared.refs[start : start + shared.chunk]))


ChunkResults = list[tuple[int, CggcItem, dict[str, Any]]]  # (reference index, item, record)


def _with_refs(
    shared: _Shared, results: ChunkResults
) -> Iterator[tuple[Reference, CggcItem, dict[str, Any]]]:
    return ((shared.refs[i], item, record) for i, item, record in results)


def _chunk_results(shared: _Shared, start: int) -> ChunkResults:
    """The buildable references among ``refs[start : start + chunk]``, with their graphs."""
    chunk = shared.refs[start : start + shared.chunk]
    vectors = shared.ref_emb[[shared.text_row[ref.target] for ref in chunk]]
    triple_cos = vectors @ shared.triple_emb.T  # chunk x triples
    results: ChunkResults = []
    for row, ref in enumerate(chunk):
        built = _build_one(shared.kb, ref, triple_cos[row], shared.node_emb, vectors[row])
        if built is not None:
            results.append((start + row, *built))
    return results


def _cores() -> int:
    """The CPU cores this process may run on (fewer than the machine's under taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_WORKER_SHARED: _Shared | None = None  # set in each pool worker by _init_worker


def _pool(shared: _Shared, workers: int) -> Any:
    """A process pool holding ``shared``: forked where possible (no copy), else pickled once."""
    # A fork inherits the parent's tokenizers state; saying so silences their warning.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return context.Pool(workers, initializer=_init_worker, initargs=(shared,))


def _init_worker(shared: _Shared) -> None:
    global _WORKER_SHARED
    _WORKER_SHARED = shared
    from threadpoolctl import threadpool_limits  # the cggc-build extra

    threadpool_limits(1)  # one BLAS thread per worker: the workers already fill the cores


def _worker_chunk(start: int) -> ChunkResults:
    assert _WORKER_SHARED is not None, "called outside a pool made by _pool"
    return _chunk_results(_WORKER_SHARED, start)


def _build_one(
    kb: KnowledgeBase,
    ref: Reference,
    triple_cos: np.ndarray,
    node_emb: np.ndarray,
    vector: np.ndarray,
) -> tuple[CggcItem, dict[str, Any]] | None:
    union = kb.shortest_path_union(ref.concepts, triple_cos)
    if union is None:
        return None
    nodes = nodes_of(union)
    similarity = dict(
        zip(nodes, (node_emb[[kb.index[n] for n in nodes]] @ vector).tolist(), strict=True)
    )
    kept, removed = prune(union, ref.concepts, similarity)
    item = CggcItem(
        item_id=ref.item_id,
        concept_set_idx=ref.set_key,
        concepts=ref.concepts,
        target=ref.target,
        graph_label=make_label([edge.relation for edge in kept]),
        edges=tuple(tuple(official_edge(edge)) for edge in kept),  # type: ignore[misc]
        structure=structure_type(ref.concepts, kept),
    )
    record = {
        "graph": [[concept_uri(n) for n in nodes], [official_edge(e) for e in union]],
        "pruned": [official_edge(e) for e in removed],
        "source": f"commongen_v1.1/{ref.split}",
    }
    return item, record


def _write(
    options: BuildOptions,
    split: Any,
    items: list[CggcItem],
    graphs: dict[str, dict[str, Any]],
    refs: list[Reference],
    candidates: list[Reference],
    input_files: dict[str, Any],
    kb: KnowledgeBase,
) -> dict[str, Any]:
    options.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(options.out / f"{POOL_FILE}.jsonl", records_of(split.pool, graphs))
    write_jsonl(options.out / f"{TEST_FILE}.jsonl", records_of(split.test, graphs))
    write_jsonl(options.out / "graphs.jsonl", records_of(items, graphs))
    text, tables = stats.report(split.pool, split.test)
    return {
        "format": "cggc-build/1",
        "seed": options.seed,
        "options": {
            "splits": list(options.splits),
            "limit_concept_sets": options.limit,
            "test_fraction": options.test_fraction,
            "min_label_items": options.min_label_items,
            "sbert_model": options.sbert_model,
        },
        "inputs": input_files,
        "counts": {
            "references": len(refs),
            "references_with_all_concepts_in_conceptnet": len(candidates),
            "graphs_built": len(items),
            "compositional_items": split.compositional_items,
            "dropped_by_split": split.dropped_items,
            "pool_items": len(split.pool),
            "test_items": len(split.test),
            "conceptnet_triples": kb.total_triples,
            "searchable_triples": kb.triple_count,
        },
        "statistics": tables,
        "_tables": text,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, help="folder for the built files")
    parser.add_argument("--commongen", type=Path, help="CommonGen v1.1 folder (*_src/_trg.txt)")
    parser.add_argument(
        "--conceptnet", type=Path, help="CN-100K file or folder, or conceptnet-assertions csv[.gz]"
    )
    parser.add_argument(
        "--data-dir", help="folder holding the pinned inputs (default: CONCEPTCOMB_DATA_DIR)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the pool/test split")
    parser.add_argument("--splits", default="train,valid", help="CommonGen splits to use")
    parser.add_argument("--limit", type=int, help="only the first N concept sets of each split")
    parser.add_argument(
        "--test-fraction",
        type=float,
        default=TEST_FRACTION,
        help=f"share of the compositional items that go to the test set ({TEST_FRACTION}, "
        "Table 12's)",
    )
    parser.add_argument(
        "--min-label-items",
        type=int,
        default=MIN_LABEL_ITEMS,
        help="fewest items a compositional graph label needs to be kept "
        f"({MIN_LABEL_ITEMS}, the paper's)",
    )
    parser.add_argument("--sbert-model", default=PACKAGED_MODEL, help="sentence-transformers model")
    parser.add_argument("--device", help="torch device for SBERT (default: automatic)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=BATCH_SIZE,
        help=f"sentences per SBERT batch ({BATCH_SIZE})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="processes computing the reasoning graphs (default: one per CPU core; "
        "1: in this process); the built files do not depend on it",
    )


def run(args: argparse.Namespace) -> int:
    if not 0.0 < args.test_fraction < 1.0:
        raise ConfigError("--test-fraction must be between 0 and 1.")
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers must be 1 or more (1 builds the graphs in this process).")
    options = BuildOptions(
        out=args.out,
        commongen=args.commongen,
        conceptnet=args.conceptnet,
        data_dir=args.data_dir,
        splits=tuple(s.strip() for s in args.splits.split(",") if s.strip()),
        seed=args.seed,
        limit=args.limit,
        test_fraction=args.test_fraction,
        min_label_items=args.min_label_items,
        sbert_model=args.sbert_model,
        device=args.device,
        batch_size=args.batch_size,
        workers=args.workers,
    )
    build(options)
    print(f"[cggc build] wrote {options.out}", flush=True)
    return 0

"""CGGC items: the record format of the official files, reading and writing, finding them.

A record (one JSON line, the official format of the paper's README) is a concept set with
its references::

    {"concept_set_idx": ..., "concepts": [...],
     "refs": [{"target": ..., "graph": [nodes, edges], "source": ..., "pruned": [...],
               "pruned_graph": [...], "graph_label": "AtLocation&HasA"}, ...]}

An edge is ``[a, b, "/r/Relation", dir]`` with ConceptNet URIs; ``dir == "left"`` means
a -> b, anything else b -> a (the authors' main.py). Flattened records (top-level
``concepts``, ``pruned_graph``, ``target``) are read too. Our builder adds ``item_id`` and
``structure_type`` to each ref; for official files both are derived.

Files: ``compos_train.jsonl`` (the demonstration pool) and ``compos_test.jsonl`` (the
compositional test set), gzipped or not, in the folder named by ``data_dir`` or
``CONCEPTCOMB_DATA_DIR`` (or its ``cggc/`` subfolder); ``.json`` or no extension is accepted
for the official files. When no folder is named (or ``CONCEPTCOMB_DATA_DIR`` holds no CGGC
files), the dataset shipped inside the package is used: the canonical build
(``conceptcomb cggc build``, seed 0, CommonGen v1.1 train + valid, CN-100K), pinned by the
sha256 of its ``SHA256SUMS`` manifest, so that everyone's numbers refer to the same items.

A dataset's identity (``CggcDataset.sha256``) is the sha256 of that manifest: the lines
``<sha256 of the uncompressed file>  <name>.jsonl`` of the pool and test files, sorted by
name, the format of ``sha256sum``. A folder holding the same files, gzipped or not, has the
same identity as the shipped dataset.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.cggc.graphs import GraphEdge, structure_type
from conceptcomb.cggc.relations import make_label, split_label
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.conceptnet import concept_name
from conceptcomb.common.datafiles import DATA_DIR_ENV, cache_root, write_cached_json
from conceptcomb.common.errors import DataFormatError, DataUnavailableError
from conceptcomb.common.jsonl import COLON, read_jsonl

POOL_FILE = "compos_train"
TEST_FILE = "compos_test"
SUFFIXES = (".jsonl", ".jsonl.gz", ".json", "")
MANIFEST = "SHA256SUMS"
BUILD_INFO = "build_info.json"  # what `conceptcomb cggc build` records of a build
# The dataset shipped in the wheel (CC BY-SA 4.0, see its LICENSE.md) and the sha256 of its
# manifest: a damaged or edited copy is refused.
PACKAGED_DIR = Path(__file__).resolve().parent / "packaged_data"
PACKAGED_SHA256 = "6f82341ff8d76ceb0ceef822f08cb4a10c33e402ebcb9531df309421c2cc8bb5"
log = logging.getLogger("conceptcomb")
BUILD_HINT = (
    "Build one with `conceptcomb cggc build --out DIR` (CommonGen v1.1 + CN-100K, downloaded "
    "at pinned revisions, or name them with --commongen/--conceptnet), then pass "
    'data_dir=DIR (lm-eval: --metadata \'{"data_dir": "DIR"}\'; Inspect: -T data_dir=DIR) '
    f"or set {DATA_DIR_ENV}=DIR. The official compos_train/compos_test files work too."
)

Edge = tuple[str, str, str, str]


@dataclass(frozen=True)
class CggcItem:
    """One (concept set, reference, reasoning graph) of CGGC."""

    item_id: str
    concept_set_idx: str
    concepts: tuple[str, ...]
    target: str
    graph_label: str
    edges: tuple[Edge, ...]  # the pruned graph, official edge format
    structure: str | None = None
    split: str = "test"

    @property
    def relations(self) -> tuple[str, ...]:
        return split_label(self.graph_label)

    def kg_edges(self) -> list[GraphEdge]:
        return [edge_from_official(edge) for edge in self.edges]

    def as_doc(self) -> dict[str, Any]:
        """A flat, JSON-able document (lm-eval docs, Inspect metadata)."""
        return {
            "item_id": self.item_id,
            "concept_set_idx": self.concept_set_idx,
            "concepts": list(self.concepts),
            "target": self.target,
            "graph_label": self.graph_label,
            "pruned_graph": [list(edge) for edge in self.edges],
            "structure_type": self.structure or "",
            "split": self.split,
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any], origin: str = "document") -> CggcItem:
        return _item(doc, doc, origin, split=str(doc.get("split") or "test"), position=0)


def edge_from_official(edge: list[Any] | tuple[Any, ...]) -> GraphEdge:
    a, b, relation = concept_name(str(edge[0])), concept_name(str(edge[1])), str(edge[2])
    relation = relation.removeprefix("/r/")
    return (
        GraphEdge(a, relation, b)
        if len(edge) < 4 or edge[3] == "left"
        else GraphEdge(b, relation, a)
    )


def _edges(value: Any, where: str) -> tuple[Edge, ...]:
    if not isinstance(value, list) or not all(
        isinstance(edge, list | tuple) and len(edge) >= 3 for edge in value
    ):
        raise DataFormatError(f"{where}: 'pruned_graph' must be a list of [a, b, relation, dir].")
    return tuple(
        (str(e[0]), str(e[1]), str(e[2]), str(e[3]) if len(e) > 3 else "left") for e in value
    )


def _item(
    record: dict[str, Any], ref: dict[str, Any], where: str, split: str, position: int
) -> CggcItem:
    for key in ("target", "pruned_graph"):
        if key not in ref:
            raise DataFormatError(f"{where}: missing field '{key}'.")
    concepts = record.get("concepts")
    if not isinstance(concepts, list) or not concepts:
        raise DataFormatError(f"{where}: 'concepts' must be a non-empty list.")
    edges = _edges(ref["pruned_graph"], where)
    label = ref.get("graph_label") or make_label([edge_from_official(e).relation for e in edges])
    label = make_label([part.removeprefix("/r/") for part in str(label).split("&") if part])
    set_idx = str(record.get("concept_set_idx", ref.get("concept_set_idx", position)))
    item = CggcItem(
        item_id=str(ref.get("item_id") or f"{set_idx}:{position}"),
        concept_set_idx=set_idx,
        concepts=tuple(str(c) for c in concepts),
        target=str(ref["target"]).strip(),
        graph_label=label,
        edges=edges,
        structure=None,
        split=split,
    )
    stored = ref.get("structure_type")
    if stored is None:
        stored = structure_type(item.concepts, item.kg_edges())
    return replace(item, structure=stored or None)


def read_bytes(path: Path) -> bytes:
    """A data file's content, decompressed when its name ends in ``.gz``."""
    raw = path.read_bytes()
    if path.suffix != ".gz":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError) as err:
        raise DataFormatError(f"{path}: not a valid gzip file ({err}).") from err


@collector_paused()  # a large build (common.collector)
def read_items(path: Path, split: str, content: bytes | None = None) -> list[CggcItem]:
    """Items of a CGGC jsonl file, nested (official / ours) or flattened records."""
    items: list[CggcItem] = []
    content = read_bytes(path) if content is None else content
    for number, record in read_jsonl(path, content):
        where = COLON.at(path, number)
        refs = record.get("refs")
        if refs is None:
            items.append(_item(record, record, where, split, number - 1))
            continue
        if not isinstance(refs, list):
            raise DataFormatError(f"{where}: 'refs' must be a list.")
        items.extend(_item(record, ref, where, split, i) for i, ref in enumerate(refs))
    return items


def records_of(items: Iterable[CggcItem], graphs: dict[str, dict[str, Any]]) -> Iterator[dict]:
    """Nested records (one per concept set, refs in order) for the builder's output."""
    by_set: dict[str, list[CggcItem]] = {}
    for item in items:
        by_set.setdefault(item.concept_set_idx, []).append(item)
    for set_idx, members in by_set.items():
        refs = []
        for item in members:
            built = graphs[item.item_id]
            refs.append(
                {
                    "item_id": item.item_id,
                    "target": item.target,
                    "graph": built["graph"],
                    "source": built["source"],
                    "pruned": built["pruned"],
                    "pruned_graph": [list(edge) for edge in item.edges],
                    "graph_label": item.graph_label,
                    "structure_type": item.structure,
                }
            )
        yield {"concept_set_idx": set_idx, "concepts": list(members[0].concepts), "refs": refs}


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    count = 0
    scratch = path.with_name(path.name + ".part")
    with scratch.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    os.replace(scratch, path)
    return count


def _find_file(folder: Path, stem: str) -> Path | None:
    for suffix in SUFFIXES:
        if (folder / f"{stem}{suffix}").is_file():
            return folder / f"{stem}{suffix}"
    return None


def _dataset_in(folder: Path) -> Path | None:
    """``folder`` or its cggc/ subfolder, whichever holds a pool and a test file."""
    for candidate in (folder, folder / "cggc"):
        if _find_file(candidate, POOL_FILE) and _find_file(candidate, TEST_FILE):
            return candidate.resolve()
    return None


def dataset_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding compos_train/compos_test: the one named by ``data_dir``, else the one
    named by CONCEPTCOMB_DATA_DIR if it holds CGGC files, else the packaged dataset."""
    if data_dir:
        found = _dataset_in(Path(data_dir).expanduser())
        if found is None:
            raise DataUnavailableError(
                f"data_dir={data_dir}: neither it nor its cggc/ subfolder holds {POOL_FILE}.jsonl "
                f"and {TEST_FILE}.jsonl (gzipped or not). Drop data_dir to use the dataset "
                f"shipped with the package, or: {BUILD_HINT}"
            )
        return found
    named = os.environ.get(DATA_DIR_ENV)
    found = _dataset_in(Path(named).expanduser()) if named else None
    if found is not None:
        return found
    if _dataset_in(PACKAGED_DIR) is None:
        raise DataUnavailableError(
            f"The CGGC dataset shipped with the package is missing from {PACKAGED_DIR}: "
            f"reinstall conceptcomb (pip install --force-reinstall conceptcomb), or: {BUILD_HINT}"
        )
    return PACKAGED_DIR


@dataclass(frozen=True, eq=False)  # hashed by identity: the loaded copy is cached
class CggcDataset:
    folder: Path
    pool: tuple[CggcItem, ...]
    test: tuple[CggcItem, ...]
    sha256: str = ""  # of the manifest of the pool and test files (module docstring)
    # (file stem, sha256 of its uncompressed content) of the pool and test files: what the
    # docs carry to name the files (a bundle's item ids), never the folder they were read from
    files: tuple[tuple[str, str], ...] = ()

    @property
    def file_sha256(self) -> dict[str, str]:
        return dict(self.files)

    @property
    def packaged(self) -> bool:
        return self.folder == PACKAGED_DIR

    def describe(self) -> str:
        where = "the dataset shipped with conceptcomb" if self.packaged else str(self.folder)
        return f"{where} (sha256 {self.sha256[:12]}, {len(self.test):,} test items)"


def manifest(digests: dict[str, str]) -> str:
    """``sha256sum`` lines for {file name: sha256 of its uncompressed content}."""
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))


def load_dataset(data_dir: str | os.PathLike[str] | None = None) -> CggcDataset:
    folder = dataset_dir(data_dir)
    pool_path, test_path = _find_file(folder, POOL_FILE), _find_file(folder, TEST_FILE)
    assert pool_path is not None and test_path is not None
    stamp = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in (pool_path, test_path))
    return _load(str(folder), str(pool_path), str(test_path), stamp)


def describe_dataset(data_dir: str | os.PathLike[str] | None = None) -> str:
    """`CggcDataset.describe` of the dataset the tasks read, checked as `load_dataset`
    checks it; the shipped one by its files' sha256 alone (no item parsed: ~0.2 s, not ~9 s
    of CPU), as they are pinned."""
    folder = dataset_dir(data_dir)
    if folder != PACKAGED_DIR:
        return load_dataset(folder).describe()
    pool_path, test_path = _find_file(folder, POOL_FILE), _find_file(folder, TEST_FILE)
    assert pool_path is not None and test_path is not None
    contents = {Path(path): read_bytes(Path(path)) for path in (pool_path, test_path)}
    sha256 = _checked_sha256(folder, _file_sha256(pool_path, test_path, contents))
    try:  # the build's record of the pinned files (a line holds a concept set's items)
        info = json.loads((folder / BUILD_INFO).read_text(encoding="utf-8"))
        items = int(info["counts"]["test_items"])
    except (OSError, ValueError, KeyError, TypeError):
        return load_dataset(folder).describe()
    return f"the dataset shipped with conceptcomb (sha256 {sha256[:12]}, {items:,} test items)"


def _file_sha256(
    pool_path: Path | str, test_path: Path | str, contents: dict[Path, bytes]
) -> dict[str, str]:
    """File stem -> the sha256 of its uncompressed content."""
    return {
        stem: hashlib.sha256(contents[Path(path)]).hexdigest()
        for stem, path in ((POOL_FILE, pool_path), (TEST_FILE, test_path))
    }


def _checked_sha256(folder: Path | str, files: dict[str, str]) -> str:
    """The dataset's identity: the sha256 of the manifest of its files (stem -> sha256,
    `_file_sha256`); the shipped files must be the pinned ones."""
    listed = manifest({f"{stem}.jsonl": sha256 for stem, sha256 in files.items()})
    sha256 = hashlib.sha256(listed.encode()).hexdigest()
    if Path(folder) == PACKAGED_DIR:
        _check_packaged(listed, sha256)
    return sha256


@lru_cache(maxsize=4)
def _load(folder: str, pool_path: str, test_path: str, _stamp: tuple) -> CggcDataset:
    with collector_paused():  # millions of small objects, no cycle (common.collector)
        return _parsed(folder, pool_path, test_path)


def _parsed(folder: str, pool_path: str, test_path: str) -> CggcDataset:
    contents = {Path(path): read_bytes(Path(path)) for path in (pool_path, test_path)}
    files = _file_sha256(pool_path, test_path, contents)
    sha256 = _checked_sha256(folder, files)
    cached = _cached_items(sha256)
    if cached is not None:
        pool, test = cached
    else:
        pool = read_items(Path(pool_path), "train", contents[Path(pool_path)])
        test = read_items(Path(test_path), "test", contents[Path(test_path)])
        if not pool or not test:
            empty = pool_path if not pool else test_path
            raise DataFormatError(f"{empty} holds no item. {BUILD_HINT}")
        _store_items(sha256, pool, test)
    dataset = CggcDataset(Path(folder), tuple(pool), tuple(test), sha256, tuple(files.items()))
    log.info("CGGC: %s", dataset.describe())
    return dataset


# The items of a dataset, as parsed from its files, kept in the user cache under the
# dataset's sha256 (`cached_items_path`): every process that reads CGGC (each lm-eval or
# Inspect run of its tasks, the demo) parsed ~50 MB of JSON for them, ~9 s of CPU; the
# cached ones load in a fraction of a second. The files are hashed as ever (the sha256 is
# the dataset's identity), so a changed file is parsed again.
_ITEMS_FORMAT = 1


def cached_items_path(sha256: str) -> Path:
    return cache_root() / "cggc" / f"items-{sha256[:16]}-v{_ITEMS_FORMAT}.json"


def _cached_items(sha256: str) -> tuple[list[CggcItem], list[CggcItem]] | None:
    try:
        stored = json.loads(cached_items_path(sha256).read_bytes())
        if stored["dataset_sha256"] != sha256:
            return None
        return (
            [_from_row(row, "train") for row in stored["pool"]],
            [_from_row(row, "test") for row in stored["test"]],
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # none yet, or not one we wrote: parse the files


def _store_items(sha256: str, pool: list[CggcItem], test: list[CggcItem]) -> None:
    rows = {"dataset_sha256": sha256, "pool": [*map(_row, pool)], "test": [*map(_row, test)]}
    write_cached_json(cached_items_path(sha256), rows)


def _row(item: CggcItem) -> list[Any]:
    return [item.item_id, item.concept_set_idx, item.concepts, item.target, item.graph_label,
            item.edges, item.structure]  # fmt: skip


def _from_row(row: list[Any], split: str) -> CggcItem:
    item_id, set_idx, concepts, target, label, edges, structure = row
    return CggcItem(item_id, set_idx, tuple(concepts), target, label,
                    tuple(map(tuple, edges)), structure, split)  # fmt: skip


def _check_packaged(listed: str, sha256: str) -> None:
    """The shipped files must be the pinned ones (a damaged install is refused)."""
    if sha256 != PACKAGED_SHA256:
        raise DataFormatError(
            f"{PACKAGED_DIR}: the shipped CGGC files do not match their pinned sha256 "
            f"(manifest sha256 {sha256}, pinned {PACKAGED_SHA256}; files:\n{listed}). The "
            "install is damaged: reinstall conceptcomb."
        )

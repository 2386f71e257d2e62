"""What CGGC is built from: CommonGen v1.1 and ConceptNet (CN-100K or a full assertions dump).

The official CGGC files are only on a OneDrive link; the paper builds them from CommonGen
and ConceptNet (section 4.1), which are pinned here at fixed revisions (sha256 checked) and
downloaded on demand when the user names no folder. Readers accept:

* CommonGen v1.1 flattened: ``{train,valid,test}_src.txt`` (concepts, space separated) and
  ``_trg.txt`` (one reference per line). A concept set's index is the ordinal of its run of
  identical consecutive src lines (the ``concept_set_idx`` of the hub dataset ``common_gen``).
* ConceptNet as CN-100K (``Relation<TAB>head<TAB>tail[<TAB>label]``, a file or the folder
  with train/valid/test.txt; rows labelled 0 are negatives and skipped) or the official
  ``conceptnet-assertions-5.x.csv[.gz]`` (English edges only, POS suffixes dropped).
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from conceptcomb.cggc.relations import canonical_relation
from conceptcomb.common.datafiles import PinnedDataset, PinnedFile, resolve_files
from conceptcomb.common.errors import DataFormatError, DataUnavailableError

COMMONGEN_REVISION = "c4b56a9aa8ae19c8521847165a7a59e18207e686"
CN100K_REVISION = "13f65c11889feb021563e2878275dcb4ae24a645"
_COMMONGEN_RAW = f"https://raw.githubusercontent.com/LHRYANG/CommonGen/{COMMONGEN_REVISION}/data/"
_CN100K_RAW = (
    f"https://raw.githubusercontent.com/DeqingYang/CKBC/{CN100K_REVISION}/data/ConceptNet/"
)
COMMONGEN_DIR = "commongen_v1.1"
CN100K_DIR = "conceptnet100k"

_COMMONGEN_SHA = {
    "train_src.txt": "8a7dd5cbf06c06dff985ca8f69d47f0eed12de482863c141d4bde6317eaad250",
    "train_trg.txt": "4a9582745b70481ff4775c10167ca0a35887518106160eca26755d15a73a1b29",
    "valid_src.txt": "507f847ebd3fb64404b8c9ed0722a092d2c0de7e1296c5c8d48d6dce99d5930f",
    "valid_trg.txt": "42ac03c945fa4bf60d1485ba1d58f0753b2b8aa919998067c439d5d62ab960b9",
    "test_src.txt": "5654cd17947d236ee372ee51ae263991b0c381e3fd5ef58df9ac2a50a8768127",
    "test_trg.txt": "34c9f28c43741a72d1130380b68518103f7a8fc4f66df0db3228dcc01f52390f",
}
_CN100K_SHA = {
    "train.txt": "8fd8b132482fa17837e74084c6d3e0c88c828999990cffe1cf036013de906c16",
    "valid.txt": "109a14c6e165cc523255afa551890f8ea9f809b04c431098e550fa0a82b05ff5",
    "test.txt": "78a042e181118c46f678253cf1243ae190fd2a3511b01671a8b9bc049194bb67",
}
CN100K_FILES = ("train.txt", "valid.txt", "test.txt")

# Both keyed "cggc": a data folder may hold them as cggc/commongen_v1.1/... and
# cggc/conceptnet100k/... (the layout of ../shared/data/cggc).
COMMONGEN_DATASET = PinnedDataset(
    key="cggc",
    title="CommonGen v1.1 (for CGGC)",
    repository="github.com/LHRYANG/CommonGen",
    revision=COMMONGEN_REVISION,
    files=tuple(
        PinnedFile(f"{COMMONGEN_DIR}/{name}", sha, _COMMONGEN_RAW + name)
        for name, sha in _COMMONGEN_SHA.items()
    ),
)
CN100K_DATASET = PinnedDataset(
    key="cggc",
    title="CN-100K ConceptNet (for CGGC)",
    repository="github.com/DeqingYang/CKBC",
    revision=CN100K_REVISION,
    files=tuple(
        PinnedFile(f"{CN100K_DIR}/{name}", sha, _CN100K_RAW + name)
        for name, sha in _CN100K_SHA.items()
    ),
)
COMMONGEN_SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Reference:
    """One (concept set, reference sentence) pair of CommonGen: one CGGC item to build."""

    split: str
    concept_set_idx: int
    ref_index: int
    concepts: tuple[str, ...]
    target: str

    @property
    def item_id(self) -> str:
        return f"{self.split}-{self.concept_set_idx}-{self.ref_index}"

    @property
    def set_key(self) -> str:
        return f"{self.split}-{self.concept_set_idx}"


@dataclass(frozen=True)
class Triple:
    head: str
    relation: str  # one of RELATIONS (merged)
    tail: str


def pinned_commongen_dir(data_dir: str | os.PathLike[str] | None, splits: tuple[str, ...]) -> Path:
    """The pinned CommonGen v1.1 folder: user's data folder, or a checked download."""
    names = [f"{COMMONGEN_DIR}/{split}_{kind}.txt" for split in splits for kind in ("src", "trg")]
    files = resolve_files(COMMONGEN_DATASET, names, data_dir)
    return files[names[0]].parent


def pinned_cn100k_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    names = [f"{CN100K_DIR}/{name}" for name in CN100K_FILES]
    files = resolve_files(CN100K_DATASET, names, data_dir)
    return files[names[0]].parent


def read_commongen(folder: Path, splits: tuple[str, ...]) -> list[Reference]:
    """Every (concept set, reference) of the named splits, in file order."""
    refs: list[Reference] = []
    for split in splits:
        if split not in COMMONGEN_SPLITS:
            raise DataFormatError(f"unknown CommonGen split {split!r}; use {COMMONGEN_SPLITS}")
        src_path, trg_path = folder / f"{split}_src.txt", folder / f"{split}_trg.txt"
        for path in (src_path, trg_path):
            if not path.is_file():
                raise DataUnavailableError(
                    f"{path} is missing: --commongen must name a folder with CommonGen v1.1's "
                    f"flattened files ({split}_src.txt, {split}_trg.txt)."
                )
        refs.extend(_read_split(split, src_path, trg_path))
    return refs


def _read_split(split: str, src_path: Path, trg_path: Path) -> Iterator[Reference]:
    sources = src_path.read_text(encoding="utf-8").splitlines()
    targets = trg_path.read_text(encoding="utf-8").splitlines()
    if len(sources) != len(targets):
        raise DataFormatError(
            f"{src_path} has {len(sources)} lines but {trg_path} has {len(targets)}: "
            "the files must pair line by line."
        )
    set_idx, ref_index, previous = -1, 0, None
    for number, (src, trg) in enumerate(zip(sources, targets, strict=True), start=1):
        concepts = tuple(src.split())
        if not concepts or not trg.strip():
            raise DataFormatError(f"{src_path}:{number}: empty concept set or reference.")
        if src != previous:
            set_idx, ref_index, previous = set_idx + 1, 0, src
        else:
            ref_index += 1
        yield Reference(split, set_idx, ref_index, concepts, trg.strip())


def read_conceptnet(path: Path) -> list[Triple]:
    """The CGGC triples (13 relations after merging) of CN-100K or a ConceptNet 5 dump."""
    if path.is_dir():
        files = [path / name for name in CN100K_FILES if (path / name).is_file()]
        if not files:
            raise DataUnavailableError(
                f"{path} holds none of {', '.join(CN100K_FILES)}: --conceptnet must name a "
                "CN-100K file or folder, or conceptnet-assertions-5.x.csv[.gz]."
            )
    elif path.is_file():
        files = [path]
    else:
        raise DataUnavailableError(f"--conceptnet {path}: no such file or folder.")
    seen: set[Triple] = set()
    triples: list[Triple] = []
    for file in files:
        for triple in _read_triples(file):
            if triple not in seen:
                seen.add(triple)
                triples.append(triple)
    if not triples:
        raise DataFormatError(f"{path}: no triple of the 13 CGGC relations found.")
    return triples


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def _read_triples(path: Path) -> Iterator[Triple]:
    with _open_text(path) as handle:
        first = handle.readline()
        assertions = first.startswith("/a/")
        for number, line in enumerate([first, *handle] if first else [], start=1):
            fields = line.rstrip("\n").split("\t")
            parsed = _assertion(fields) if assertions else _cn100k_row(fields, path, number)
            if parsed is None:
                continue
            head, relation, tail = parsed
            merged = canonical_relation(relation)
            if merged is None or head == tail:
                continue
            name, swap = merged
            yield Triple(tail, name, head) if swap else Triple(head, name, tail)


def _cn100k_row(fields: list[str], path: Path, number: int) -> tuple[str, str, str] | None:
    if fields == [""]:
        return None
    if len(fields) not in (3, 4):
        raise DataFormatError(
            f"{path}:{number}: expected 'Relation<TAB>head<TAB>tail[<TAB>label]' "
            f"(CN-100K) or a ConceptNet assertions line, got {len(fields)} fields."
        )
    if len(fields) == 4 and fields[3].strip() == "0":
        return None  # a negative example of CN-100K's dev files
    return fields[1].strip(), fields[0].strip(), fields[2].strip()


def _assertion(fields: list[str]) -> tuple[str, str, str] | None:
    """(head, relation, tail) of an English ConceptNet 5 edge, names without URI parts."""
    if len(fields) < 4 or not (fields[2].startswith("/c/en/") and fields[3].startswith("/c/en/")):
        return None
    return concept_name(fields[2]), fields[1], concept_name(fields[3])


@lru_cache(
    maxsize=1 << 16
)  # the same nodes recur across the dataset's hundreds of thousands of edges
def concept_name(uri: str) -> str:
    """``/c/en/ice_cream/n`` -> ``ice cream``; a plain name is returned as is."""
    if uri.startswith("/c/"):
        parts = uri.split("/")
        uri = parts[3] if len(parts) > 3 else uri
    return uri.replace("_", " ").strip()


def concept_uri(name: str) -> str:
    """``ice cream`` -> ``/c/en/ice_cream``, the node format of the official CGGC files."""
    return "/c/en/" + name.strip().replace(" ", "_")

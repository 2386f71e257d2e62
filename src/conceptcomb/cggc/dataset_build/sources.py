"""What CGGC is built from: CommonGen v1.1 and ConceptNet (CN-100K or a full assertions dump).

The official CGGC files are only on a OneDrive link; the paper builds them from CommonGen
and ConceptNet (section 4.1), which are pinned at fixed revisions (sha256 checked;
CommonGen here, CN-100K in `conceptcomb.common.conceptnet`) and downloaded on demand when
the user names no folder. Readers accept:

* CommonGen v1.1 flattened: ``{train,valid,test}_src.txt`` (concepts, space separated) and
  ``_trg.txt`` (one reference per line). A concept set's index is the ordinal of its run of
  identical consecutive src lines (the ``concept_set_idx`` of the hub dataset ``common_gen``).
* ConceptNet (read by `conceptcomb.common.conceptnet`) as CN-100K
  (``Relation<TAB>head<TAB>tail[<TAB>label]``, a file or the folder with
  train/valid/test.txt; rows labelled 0 are negatives and skipped) or the official
  ``conceptnet-assertions-5.x.csv[.gz]`` (English edges only, POS suffixes dropped).
  The 13 CGGC relations are kept, merged (`conceptcomb.cggc.relations`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.cggc.relations import canonical_relation
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.conceptnet import CN100K_DATASET as CN100K_DATASET  # re-exported
from conceptcomb.common.conceptnet import CN100K_FILES, read_edges
from conceptcomb.common.datafiles import PinnedDataset, pinned_files, resolve_files
from conceptcomb.common.errors import DataFormatError, DataUnavailableError

COMMONGEN_REVISION = "c4b56a9aa8ae19c8521847165a7a59e18207e686"
_COMMONGEN_RAW = f"https://raw.githubusercontent.com/LHRYANG/CommonGen/{COMMONGEN_REVISION}/data/"
COMMONGEN_DIR = "commongen_v1.1"

_COMMONGEN_SHA = {
    "train_src.txt": "8a7dd5cbf06c06dff985ca8f69d47f0eed12de482863c141d4bde6317eaad250",
    "train_trg.txt": "4a9582745b70481ff4775c10167ca0a35887518106160eca26755d15a73a1b29",
    "valid_src.txt": "507f847ebd3fb64404b8c9ed0722a092d2c0de7e1296c5c8d48d6dce99d5930f",
    "valid_trg.txt": "42ac03c945fa4bf60d1485ba1d58f0753b2b8aa919998067c439d5d62ab960b9",
    "test_src.txt": "5654cd17947d236ee372ee51ae263991b0c381e3fd5ef58df9ac2a50a8768127",
    "test_trg.txt": "34c9f28c43741a72d1130380b68518103f7a8fc4f66df0db3228dcc01f52390f",
}

# Keyed "cggc": a data folder may hold it as cggc/commongen_v1.1/... (the layout of
# ../shared/data/cggc), beside CN-100K (`conceptcomb.common.conceptnet.CN100K_DATASET`).
COMMONGEN_DATASET = PinnedDataset(
    key="cggc",
    title="CommonGen v1.1 (for CGGC)",
    repository="github.com/LHRYANG/CommonGen",
    revision=COMMONGEN_REVISION,
    files=pinned_files(COMMONGEN_DIR, _COMMONGEN_RAW, _COMMONGEN_SHA),
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


@collector_paused()  # a large build (common.collector)
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


def _read_triples(path: Path) -> Iterator[Triple]:
    for head, relation, tail in read_edges(path):
        merged = canonical_relation(relation)
        if merged is None or head == tail:
            continue
        name, swap = merged
        yield Triple(tail, name, head) if swap else Triple(head, name, tail)

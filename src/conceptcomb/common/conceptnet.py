"""ConceptNet, read once for every benchmark: CN-100K (pinned) and ConceptNet 5 dumps.

* CN-100K (``Relation<TAB>head<TAB>tail[<TAB>label]``, the folder with train/valid/test.txt;
  rows labelled 0 are negatives and skipped), pinned at a fixed revision (sha256 checked)
  and downloaded on demand when the user names no folder. CGGC builds its graphs from it;
  CCPT's spreading activation may walk it.
* The official ``conceptnet-assertions-5.x.csv[.gz]`` (English edges only, POS suffixes
  dropped).

`read_edges` yields each positive edge as (head, relation, tail) with plain names; what a
benchmark keeps of them (relations merged, directions) is the benchmark's business.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from conceptcomb.common.datafiles import PinnedDataset, pinned_files, resolve_files
from conceptcomb.common.errors import DataFormatError

CN100K_REVISION = "13f65c11889feb021563e2878275dcb4ae24a645"
_CN100K_RAW = (
    f"https://raw.githubusercontent.com/DeqingYang/CKBC/{CN100K_REVISION}/data/ConceptNet/"
)
CN100K_DIR = "conceptnet100k"
_CN100K_SHA = {
    "train.txt": "8fd8b132482fa17837e74084c6d3e0c88c828999990cffe1cf036013de906c16",
    "valid.txt": "109a14c6e165cc523255afa551890f8ea9f809b04c431098e550fa0a82b05ff5",
    "test.txt": "78a042e181118c46f678253cf1243ae190fd2a3511b01671a8b9bc049194bb67",
}
CN100K_FILES = ("train.txt", "valid.txt", "test.txt")

# Keyed "cggc": a data folder holds it as cggc/conceptnet100k/... (the layout of
# ../shared/data/cggc), beside CGGC's CommonGen files.
CN100K_DATASET = PinnedDataset(
    key="cggc",
    title="CN-100K ConceptNet (for CGGC)",
    repository="github.com/DeqingYang/CKBC",
    revision=CN100K_REVISION,
    files=pinned_files(CN100K_DIR, _CN100K_RAW, _CN100K_SHA),
)


def pinned_cn100k_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    names = [f"{CN100K_DIR}/{name}" for name in CN100K_FILES]
    files = resolve_files(CN100K_DATASET, names, data_dir)
    return files[names[0]].parent


def read_edges(path: Path) -> Iterator[tuple[str, str, str]]:
    """(head, relation, tail) of every positive edge of a CN-100K file or of a ConceptNet 5
    assertions dump (``.gz`` or not), in file order."""
    with _open_text(path) as handle:
        first = handle.readline()
        assertions = first.startswith("/a/")
        for number, line in enumerate([first, *handle] if first else [], start=1):
            fields = line.rstrip("\n").split("\t")
            parsed = _assertion(fields) if assertions else _cn100k_row(fields, path, number)
            if parsed is not None:
                yield parsed


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


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

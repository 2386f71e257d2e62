"""A small CGGC dataset built once per session with the real builder, SBERT and CN-100K.

The knowledge base is the part of CN-100K that can join the concepts of the first 150
concept sets of CommonGen train and valid in one or two steps (triples between their
concepts, and triples to nodes adjacent to two concepts of one set): about 2,800 triples
instead of 100,000, so that the build, from an empty embedding cache, takes under a minute.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest

from conceptcomb.cggc.dataset_build.sources import read_commongen
from tests.conftest import SHARED_DATA, require_shared_data

COMMONGEN = SHARED_DATA / "cggc" / "commongen_v1.1"
CN100K = SHARED_DATA / "cggc" / "conceptnet100k"
LIMIT = 150


def small_conceptnet(target: Path, limit: int = LIMIT) -> Path:
    refs = [r for r in read_commongen(COMMONGEN, ("train", "valid")) if r.concept_set_idx < limit]
    concepts = {c for ref in refs for c in ref.concepts}
    rows = [line.rstrip("\n").split("\t") for line in (CN100K / "train.txt").open(encoding="utf-8")]
    neighbours: dict[str, set[str]] = defaultdict(set)
    for _, head, tail in rows:
        if head in concepts:
            neighbours[tail].add(head)
        if tail in concepts:
            neighbours[head].add(tail)
    sets = {ref.concepts for ref in refs}
    bridges = {n for cs in sets for n, near in neighbours.items() if len(near & set(cs)) >= 2}
    usable = concepts | bridges
    kept = [
        row
        for row in rows
        if (row[1] in concepts or row[2] in concepts) and row[1] in usable and row[2] in usable
    ]
    target.write_text("".join("\t".join(row) + "\n" for row in kept), encoding="utf-8")
    return target


def build_args(out: Path, conceptnet: Path, seed: int = 0) -> list[str]:
    return [
        "cggc", "build",
        "--commongen", str(COMMONGEN),
        "--conceptnet", str(conceptnet),
        "--limit", str(LIMIT),
        "--seed", str(seed),
        "--out", str(out),
    ]  # fmt: skip


@pytest.fixture(scope="session")
def small_cn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_shared_data()  # built from CommonGen and CN-100K
    return small_conceptnet(tmp_path_factory.mktemp("cn") / "cn100k_small.txt")


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, small_cn: Path) -> tuple[Path, str]:
    """(folder, printed output) of `conceptcomb cggc build` on the small inputs. Made once
    per worker, by its first user, with `small_cn` (filtered from CN-100K's train.txt): the
    real builder with SBERT, as the module docstring says. 69 s of setup in test_demos.py's
    test_selection_is_deterministic_and_seeded (on 2 cores at load 4-7, 2026-12-06)."""
    import contextlib
    import io

    from conceptcomb.cli import main

    out = tmp_path_factory.mktemp("cggc") / "built"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(build_args(out, small_cn)) == 0
    return out, printed.getvalue()


@pytest.fixture(scope="session")
def built_dir(built: tuple[Path, str]) -> Path:
    return built[0]


def conceptcomb_modules_run(call: Callable[[], object]) -> set[str]:
    """The conceptcomb modules whose code runs during ``call()``: for the caches keyed on
    the source of the code that computes what they hold (`docs.DRAWING_CODE`,
    `docs.QUESTION_CODE`), which must name every such module."""
    ran: set[str] = set()

    def record(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            ran.add(frame.f_globals.get("__name__", ""))

    sys.setprofile(record)
    try:
        call()
    finally:
        sys.setprofile(None)
    return {name for name in ran if name.startswith("conceptcomb.")} - COMPUTES_NOTHING


# Code that runs while a cached value is computed but decides none of it: the collector's
# pause (`conceptcomb.common.collector`) changes when memory is freed, not what is built.
COMPUTES_NOTHING = {"conceptcomb.common.collector"}

"""The two readings of Fig. 3 (junction, skeleton) and `cggc stats` beside Tables 2 and 10."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest

from conceptcomb.cggc.data import PACKAGED_DIR, load_dataset
from conceptcomb.cggc.dataset_build.stats import (
    PAPER_TABLE2,
    PAPER_TYPES,
    Row,
    TypeTable,
    closeness,
    structure_report,
    type_table,
)
from conceptcomb.cggc.graphs import READINGS, GraphEdge, skeleton_type, structure_type
from conceptcomb.cli import main

CONCEPTS = ("x", "y", "z")  # m and n are intermediate nodes


def graph(*edges: str) -> list[GraphEdge]:
    """``"x IsA m"`` -> GraphEdge("x", "IsA", "m")."""
    return [GraphEdge(*edge.split()) for edge in edges]


# (edges, skeleton reading, junction reading)
CASES = {
    "chain": (("x IsA y", "y UsedFor z"), "A", "A"),
    "common source": (("x HasA y", "x AtLocation z"), "B", "B"),
    "common target": (("y IsA x", "z UsedFor x"), "C", "C"),
    "chain through intermediates": (("x IsA m", "m IsA y", "y HasA n", "n HasA z"), "A", "A"),
    "source through a hub": (("x IsA m", "m HasA y", "m UsedFor z"), "B", None),  # 3 relations
    "target through a hub": (("x IsA m", "y IsA m", "m HasA z"), "C", "A"),  # m: in IsA, out HasA
    "no directed path": (("x IsA m", "y HasA m", "z HasA m"), None, "C"),  # all meet at m
    "one link only": (("x IsA y", "y HasA m", "z HasA m"), None, "A"),  # y; m joins one relation
    "both directions": (("x IsA y", "y HasA x", "y UsedFor z"), None, None),
    "cycle through intermediates": (
        ("x IsA m", "m IsA y", "y HasA n", "n HasA x", "y UsedFor z"),
        None,
        None,
    ),
    # x -> z only through the third concept y: the chain, not a triangle
    "path through the third concept": (("x IsA y", "y IsA m", "m HasA z"), "A", "A"),
    # also x -> n -> z avoiding y: implied by x -> y -> z, still A
    "transitive triangle": (("x IsA y", "y HasA z", "x UsedFor n", "n UsedFor z"), "A", None),
    "one relation type": (("x IsA y", "y IsA z"), "A", None),
    "four relation types": (("x IsA m", "m HasA y", "x Causes n", "n Desires z"), "B", None),
    "concept not in the graph": (("x IsA y", "y HasA m"), None, "A"),
}


@pytest.mark.parametrize("case", CASES)
def test_skeleton_and_junction_readings(case: str) -> None:
    edges, skeleton, junction = CASES[case]
    assert skeleton_type(CONCEPTS, graph(*edges)) == skeleton
    assert structure_type(CONCEPTS, graph(*edges)) == junction  # reading (a) as before
    assert READINGS["skeleton"](CONCEPTS, graph(*edges)) == skeleton
    assert READINGS["junction"](CONCEPTS, graph(*edges)) == junction


def test_skeleton_needs_three_distinct_concepts_and_ignores_order() -> None:
    chain = graph("x IsA y", "y UsedFor z")
    assert skeleton_type(("x", "y"), chain) is None
    assert skeleton_type(("x", "y", "z", "w"), chain) is None
    assert skeleton_type(("x", "y", "y"), chain) is None
    assert skeleton_type(("z", "x", "y"), chain) == "A"
    assert set(READINGS) == {"junction", "skeleton"}


def test_paper_table_10_in_scale_free_numbers() -> None:
    assert PAPER_TYPES.typed == 9911 and round(PAPER_TYPES.typed_share, 3) == 0.232
    assert [round(s, 2) for s in PAPER_TYPES.shares()] == [0.63, 0.17, 0.20]
    a, b, c = (PAPER_TYPES.ratios(r) for r in PAPER_TYPES.types)
    assert [round(v, 2) for v in a] == [1.02, 1.02, 1.00]
    assert [round(v, 2) for v in (*b, *c)] == [1.11, 1.13, 1.07, 1.10, 1.12, 1.07]
    assert closeness(PAPER_TYPES) == {"score": 0.0, "shares": 0.0, "ratios": 0.0}
    assert PAPER_TABLE2[1].sents == 42747


def test_closeness_adds_shares_and_ratios() -> None:
    size3, (a, b, c) = PAPER_TYPES.size3, PAPER_TYPES.types
    no_b = TypeTable(size3, (a, Row(b.name, 0, 0, 0.0, 0.0, 0.0, 0.0), c))
    score = closeness(no_b)
    # B's share 0.171 -> 0, A's and C's rise, the typed share falls; B's ratios 1.11+1.13+1.07
    assert score["ratios"] == round(sum(PAPER_TYPES.ratios(b)), 3)
    assert score["score"] == pytest.approx(score["shares"] + score["ratios"], abs=0.002)
    assert 0.3 < score["shares"] < 0.5 and score["score"] > 3.0


@pytest.fixture(scope="module")
def small_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400 concept sets of each shipped file: a dataset folder of a user's own."""
    folder = tmp_path_factory.mktemp("cggc_small")
    for gz in PACKAGED_DIR.glob("*.jsonl.gz"):
        lines = gzip.decompress(gz.read_bytes()).decode().splitlines(keepends=True)
        (folder / gz.name.removesuffix(".gz")).write_text("".join(lines[:400]))
    return folder


def test_readings_come_from_the_edges_not_the_stored_field(small_folder: Path) -> None:
    dataset = load_dataset(small_folder)
    test = list(dataset.test)
    stored = [sum(i.structure == k for i in test) for k in "ABC"]
    assert [r.sents for r in type_table(test, "junction").types] == stored
    blanked = [dataclasses.replace(i, structure=None) for i in test]
    assert [r.sents for r in type_table(blanked, "junction").types] == stored
    skeleton = type_table(test, "skeleton")
    assert skeleton.typed == sum(skeleton_type(i.concepts, i.kg_edges()) is not None for i in test)


def test_stats_one_reading_on_any_folder(small_folder: Path, capsys) -> None:
    assert main(["cggc", "stats", "--data-dir", str(small_folder), "--reading", "skeleton"]) == 0
    out = capsys.readouterr().out
    assert 'reading "skeleton", test items' in out and 'reading "junction"' not in out
    assert "closer on" not in out and "Table 12" in out and "-size=3   ours" in out


def test_stats_command_on_the_shipped_dataset(capsys) -> None:
    assert main(["cggc", "stats", "--data-dir", str(PACKAGED_DIR)]) == 0
    out = capsys.readouterr().out
    for scope in ("test", "pool", "pool + test"):
        for reading in READINGS:
            assert f'Table 10, reading "{reading}", {scope} items: ours vs the paper' in out
    assert "typed: 3968 of 13370 size-3 items = 29.7% (paper: 9911 of 42747 = 23.2%)" in out
    assert "Type A    ours     1350   2190  0.552" in out  # junction = the stored field
    assert "          paper    3517   6250  0.631    8.49    7.17   4.41" in out
    assert "-size=3   ours     15982   31366" in out and "paper    19684   42747" in out
    assert "closeness to the paper:" in out and "Closeness to the paper's Table 10" in out
    assert 'closer on pool + test: "junction", by 0.400' in out
    assert "compositional constraint: holds" in out


def test_structure_report_data(small_folder: Path) -> None:
    dataset = load_dataset(small_folder)
    _, data = structure_report(list(dataset.pool), list(dataset.test))
    scores = data["closeness"]
    assert set(scores) == set(READINGS) and data["score_scope"] == "pool + test"
    assert data["closer_reading"] == min(READINGS, key=lambda r: scores[r]["pool + test"])
    assert data["table10_paper"]["typed"] == 9911

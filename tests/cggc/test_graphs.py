"""Reasoning-graph construction on hand-made graphs: weights, shortest paths, pruning, types."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from conceptcomb.cggc.dataset_build.paths import KnowledgeBase, is_connected, prune
from conceptcomb.cggc.dataset_build.sources import Triple, read_conceptnet
from conceptcomb.cggc.graphs import GraphEdge, structure_type
from conceptcomb.cggc.relations import canonical_relation, make_label, verbalize

TRIPLES = [  # head, relation, tail
    ("dog", "HasA", "tail"),
    ("tail", "UsedFor", "wag"),
    ("dog", "CapableOf", "wag"),  # a direct edge that competes with the two-step path
    ("dog", "IsA", "pet"),  # pet is a leaf: stripped, it can join nothing
    ("tail", "AtLocation", "dog"),  # a second triple on the dog-tail pair
]


def kb(triples=TRIPLES, protected=("dog", "tail", "wag")) -> KnowledgeBase:
    heads, relations, tails = zip(*[(h, r, t) for h, r, t in triples], strict=True)
    return KnowledgeBase(heads, relations, tails, protected)


def cosines(base: KnowledgeBase, values: dict[tuple[str, str, str], float]) -> np.ndarray:
    """A cosine per searchable triple, in the knowledge base's own order."""
    order = [
        (base.names[h], base.relation_names[r], base.names[t])
        for h, r, t in zip(base.heads, base.rels, base.tails, strict=True)
    ]
    return np.array([values[triple] for triple in order], dtype=np.float32)


def test_unprotected_leaves_are_stripped_exactly() -> None:
    base = kb()
    assert "pet" not in base.index and base.triple_count == 4
    assert kb(protected=("dog", "pet")).index.keys() >= {"dog", "pet"}


def test_weights_pick_the_most_similar_path_and_triple() -> None:
    base = kb()
    similar_path = {
        ("dog", "HasA", "tail"): 0.9,  # weight 0.05
        ("tail", "AtLocation", "dog"): 0.1,  # weight 0.45: the pair keeps HasA
        ("tail", "UsedFor", "wag"): 0.9,  # 0.05
        ("dog", "CapableOf", "wag"): -0.5,  # 0.75 > 0.05 + 0.05
    }
    edges = base.shortest_path_union(["dog", "wag"], cosines(base, similar_path))
    assert edges == [GraphEdge("dog", "HasA", "tail"), GraphEdge("tail", "UsedFor", "wag")]
    direct = {**similar_path, ("dog", "CapableOf", "wag"): 0.95}  # 0.025 < 0.1
    assert base.shortest_path_union(["dog", "wag"], cosines(base, direct)) == [
        GraphEdge("dog", "CapableOf", "wag")
    ]


def test_union_over_all_pairs_and_unreachable_concepts() -> None:
    base = kb()
    cos = cosines(base, dict.fromkeys(((h, r, t) for h, r, t in TRIPLES if t != "pet"), 0.5))
    edges = base.shortest_path_union(["dog", "tail", "wag"], cos)
    assert edges is not None and {e.relation for e in edges} <= {
        "HasA",
        "AtLocation",
        "UsedFor",
        "CapableOf",
    }
    assert is_connected(["dog", "tail", "wag"], edges)
    assert base.shortest_path_union(["dog", "moon"], cos) is None  # not a node


def test_pruning_removes_the_least_similar_redundant_node() -> None:
    edges = [
        GraphEdge("a", "IsA", "x"),
        GraphEdge("x", "IsA", "b"),
        GraphEdge("a", "UsedFor", "y"),
        GraphEdge("y", "UsedFor", "b"),
    ]
    kept, removed = prune(edges, ["a", "b"], {"x": 0.2, "y": 0.7, "a": 0, "b": 0})
    assert kept == edges[2:] and removed == edges[:2]
    chain = [GraphEdge("a", "IsA", "x"), GraphEdge("x", "IsA", "b")]
    assert prune(chain, ["a", "b"], {"x": -1.0}) == (chain, [])  # a separator stays


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ([("dog", "HasA", "tail"), ("tail", "UsedFor", "wag")], "A"),  # dog -> tail -> wag
        ([("pizza", "HasA", "cheese"), ("pizza", "AtLocation", "oven")], "B"),  # common source
        ([("canoe", "IsA", "boat"), ("lake", "UsedFor", "boat")], "C"),  # common target
        ([("a", "IsA", "b"), ("b", "IsA", "c")], None),  # one relation: no composition
        ([("a", "IsA", "b"), ("b", "HasA", "c"), ("d", "HasA", "b")], None),  # A and C: mixed
    ],
)
def test_structure_types_of_figure_3(edges, expected) -> None:
    graph = [GraphEdge(*edge) for edge in edges]
    concepts = sorted({e.head for e in graph} | {e.tail for e in graph})[:3]
    assert structure_type(concepts, graph) == expected


def test_relation_merges_and_templates() -> None:
    assert canonical_relation("/r/PartOf") == ("HasA", True)
    assert canonical_relation("hasfirstsubevent") == ("HasSubevent", False)
    assert canonical_relation("MannerOf") == ("IsA", False)
    assert canonical_relation("RelatedTo") is None
    assert verbalize("tail", "UsedFor", "wag") == "tail is used for wag"
    assert make_label(["HasA", "AtLocation", "HasA"]) == "AtLocation&HasA"


def test_reads_cn100k_rows_and_conceptnet5_assertions(tmp_path: Path) -> None:
    cn100k = tmp_path / "dev.txt"
    cn100k.write_text("PartOf\twheel\tcar\t1\nIsA\tcar\tfruit\t0\nRelatedTo\ta\tb\t1\n")
    assert read_conceptnet(cn100k) == [Triple("car", "HasA", "wheel")]
    dump = tmp_path / "conceptnet-assertions-5.7.0.csv.gz"
    rows = [
        "/a/[/r/HasLastSubevent/,/c/en/eat/v/,/c/en/wash_dishes/]\t/r/HasLastSubevent\t/c/en/eat/v\t/c/en/wash_dishes\t{}",
        "/a/[/r/IsA/,/c/fr/chien/,/c/en/dog/]\t/r/IsA\t/c/fr/chien\t/c/en/dog\t{}",
        "/a/[/r/UsedFor/,/c/en/knife/n/,/c/en/cut/]\t/r/UsedFor\t/c/en/knife/n\t/c/en/cut\t{}",
    ]
    with gzip.open(dump, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(rows) + "\n")
    assert read_conceptnet(dump) == [
        Triple("eat", "HasSubevent", "wash dishes"),
        Triple("knife", "UsedFor", "cut"),
    ]

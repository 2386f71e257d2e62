"""`conceptcomb cggc build` on real CommonGen and a CN-100K subset, with the packaged SBERT."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from conceptcomb.cggc.data import CggcItem, dataset_dir, load_dataset, read_items
from conceptcomb.cggc.dataset_build.paths import is_connected
from conceptcomb.cggc.dataset_build.sources import read_conceptnet
from conceptcomb.cggc.graphs import GraphEdge, nodes_of, structure_type
from conceptcomb.cggc.relations import RELATIONS, make_label
from conceptcomb.cli import main
from conceptcomb.common.errors import DataUnavailableError
from tests.cggc.conftest import build_args


def test_every_test_item_is_an_unseen_composition_of_seen_primitives(built_dir: Path) -> None:
    dataset = load_dataset(built_dir)
    pool, test = list(dataset.pool), list(dataset.test)
    assert len(pool) > 100 and len(test) > 50
    pool_labels = {item.graph_label for item in pool}
    pool_relations = {r for item in pool for r in item.relations}
    test_labels = Counter(item.graph_label for item in test)
    for item in test:
        assert len(set(item.relations)) >= 2, item
        assert item.graph_label not in pool_labels, item
        assert set(item.relations) <= pool_relations, item
        assert test_labels[item.graph_label] >= 5, item
    # concept sets never straddle the split (Table 12 counts sets)
    assert not {i.concept_set_idx for i in pool} & {i.concept_set_idx for i in test}


def test_graphs_are_connected_conceptnet_subgraphs_with_their_label(
    built_dir: Path, small_cn: Path
) -> None:
    triples = {(t.head, t.relation, t.tail) for t in read_conceptnet(small_cn)}
    items = [*load_dataset(built_dir).pool, *load_dataset(built_dir).test]
    for item in items:
        edges = item.kg_edges()
        assert all((e.head, e.relation, e.tail) in triples for e in edges), item.item_id
        assert set(item.concepts) <= set(nodes_of(edges))
        assert is_connected(nodes_of(edges), edges)
        assert item.graph_label == make_label([e.relation for e in edges])
        assert set(item.relations) <= set(RELATIONS)
        assert item.structure == structure_type(item.concepts, edges)


def test_records_keep_the_official_format(built_dir: Path) -> None:
    record = json.loads((built_dir / "compos_test.jsonl").read_text().splitlines()[0])
    assert set(record) == {"concept_set_idx", "concepts", "refs"}
    ref = record["refs"][0]
    assert {"target", "graph", "source", "pruned", "pruned_graph", "graph_label"} <= set(ref)
    nodes, edges = ref["graph"]
    assert all(node.startswith("/c/en/") for node in nodes)
    a, _, relation, direction = ref["pruned_graph"][0]
    assert a.startswith("/c/en/") and relation.startswith("/r/") and direction == "left"
    # pruned edges + kept edges = the shortest-path union
    assert sorted(map(tuple, ref["pruned"] + ref["pruned_graph"])) == sorted(map(tuple, edges))


def test_build_prints_the_papers_statistics(built: tuple[Path, str]) -> None:
    folder, printed = built
    for title in ("Table 2", "Table 10", "Table 12", "#nodes", "Type A", "-size=3"):
        assert title in printed
    info = json.loads((folder / "build_info.json").read_text())
    assert info["statistics"]["table12"]["test"]["items"] == len(load_dataset(folder).test)
    commongen_inputs = [v for k, v in info["inputs"].items() if "commongen" in k]
    assert commongen_inputs and all(v["matches_pinned_release"] for v in commongen_inputs)
    stages = {"read inputs", "embeddings", "graphs", "split and write", "total"}
    assert set(info["timings_s"]) == stages and "_tables" not in info


def test_same_seed_same_dataset_other_seed_other_split(
    built_dir: Path, small_cn: Path, tmp_path: Path
) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # embeddings come from the cache now
        assert main(build_args(tmp_path / "again", small_cn)) == 0
        assert main(build_args(tmp_path / "other", small_cn, seed=7)) == 0
    for name in ("compos_train.jsonl", "compos_test.jsonl", "graphs.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (built_dir / name).read_bytes()
    assert (tmp_path / "other" / "graphs.jsonl").read_bytes() == (
        built_dir / "graphs.jsonl"
    ).read_bytes()
    assert (tmp_path / "other" / "compos_test.jsonl").read_bytes() != (
        built_dir / "compos_test.jsonl"
    ).read_bytes()


def test_reads_official_nested_and_flattened_records(tmp_path: Path) -> None:
    nested = {
        "concept_set_idx": 7,
        "concepts": ["oven", "cheese", "pizza"],
        "refs": [
            {
                "target": "He puts a cheese pizza in an oven.",
                "graph": [[], []],
                "source": "human",
                "pruned": [],
                "pruned_graph": [
                    ["/c/en/pizza", "/c/en/cheese", "/r/HasA", "left"],
                    ["/c/en/oven", "/c/en/pizza", "/r/AtLocation", "right"],
                ],
                "graph_label": "HasA&AtLocation",
            }
        ],
    }
    flat = {"concepts": ["dog", "tail", "wag"], "target": "The dog wags its tail.",
            "pruned_graph": [["/c/en/dog", "/c/en/tail", "/r/HasA", "left"],
                             ["/c/en/tail", "/c/en/wag", "/r/UsedFor", "left"]]}  # fmt: skip
    path = tmp_path / "compos_test.jsonl"
    path.write_text(json.dumps(nested) + "\n" + json.dumps(flat) + "\n")
    pizza, dog = read_items(path, "test")
    assert pizza.graph_label == "AtLocation&HasA" and pizza.concept_set_idx == "7"
    assert pizza.kg_edges()[1] == GraphEdge("pizza", "AtLocation", "oven")  # "right": b -> a
    assert pizza.structure == "B" and dog.structure == "A"
    assert dog.graph_label == "HasA&UsedFor"
    assert CggcItem.from_doc(pizza.as_doc()) == pizza


def test_missing_dataset_says_how_to_build_one(tmp_path: Path, monkeypatch) -> None:
    # No folder named: the packaged dataset (tests/cggc/test_packaged.py); a named folder
    # without the files is an error that says how to build them.
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    with pytest.raises(DataUnavailableError, match="conceptcomb cggc build"):
        dataset_dir(tmp_path)
    with pytest.raises(DataUnavailableError, match=r"compos_train\.jsonl"):
        dataset_dir(tmp_path)


def test_cli_errors_are_one_line(tmp_path: Path, capsys) -> None:
    code = main(["cggc", "build", "--commongen", str(tmp_path), "--out", str(tmp_path / "o"),
                 "--conceptnet", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("conceptcomb: error: ") and "train_src.txt" in err


def test_stats_command_checks_the_constraint(built_dir: Path, capsys) -> None:
    assert main(["cggc", "stats", "--data-dir", str(built_dir)]) == 0
    out = capsys.readouterr().out
    assert "compositional constraint: holds" in out and "Table 12" in out

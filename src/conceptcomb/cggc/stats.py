"""The statistics of the paper's Tables 2, 10 and 12, for a built (or official) dataset.

Columns as in the paper: #set concept sets, #sent items (references), #lens words per
reference (whitespace words without punctuation; the paper does not say how it counts),
#nodes / #edges / #rel of the pruned reasoning graph (#rel: distinct relation types).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from dataclasses import dataclass

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.graphs import STRUCTURE_TYPES, nodes_of

_WORD = re.compile(r"\w[\w'-]*")


@dataclass(frozen=True)
class Row:
    name: str
    sets: int
    sents: int
    lens: float
    nodes: float
    edges: float
    rels: float

    def as_dict(self) -> dict[str, float | int | str]:
        return self.__dict__.copy()


def _mean(values: list[int]) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def row(name: str, items: Iterable[CggcItem]) -> Row:
    items = list(items)
    return Row(
        name=name,
        sets=len({item.concept_set_idx for item in items}),
        sents=len(items),
        lens=_mean([len(_WORD.findall(item.target)) for item in items]),
        nodes=_mean([len(nodes_of(item.kg_edges())) for item in items]),
        edges=_mean([len(item.edges) for item in items]),
        rels=_mean([len(item.relations) for item in items]),
    )


def table2(items: list[CggcItem]) -> list[Row]:
    rows = [row("all", items)]
    for size in sorted({len(item.concepts) for item in items}):
        rows.append(row(f"-size={size}", [i for i in items if len(i.concepts) == size]))
    return rows


def table10(items: list[CggcItem]) -> list[Row]:
    return [
        row(f"Type {kind}", [item for item in items if item.structure == kind])
        for kind in STRUCTURE_TYPES
    ]


def table12(pool: list[CggcItem], test: list[CggcItem]) -> dict[str, dict[str, int]]:
    return {
        name: {
            "sets": len({item.concept_set_idx for item in part}),
            "items": len(part),
            "labels": len({item.graph_label for item in part}),
        }
        for name, part in (("train (pool)", pool), ("test", test))
    }


def render_rows(title: str, rows: list[Row]) -> str:
    lines = [
        title,
        f"{'':<10}{'#set':>8}{'#sent':>8}{'#lens':>8}{'#nodes':>8}{'#edges':>8}{'#rel':>8}",
    ]
    lines += [
        f"{r.name:<10}{r.sets:>8}{r.sents:>8}{r.lens:>8.2f}{r.nodes:>8.2f}{r.edges:>8.2f}{r.rels:>8.2f}"
        for r in rows
    ]
    return "\n".join(lines)


def render_table12(table: dict[str, dict[str, int]]) -> str:
    lines = ["Table 12 (composition split)", f"{'':<14}{'#set':>8}{'#sent':>8}{'#labels':>9}"]
    lines += [
        f"{name:<14}{v['sets']:>8}{v['items']:>8}{v['labels']:>9}" for name, v in table.items()
    ]
    return "\n".join(lines)


def report(pool: list[CggcItem], test: list[CggcItem]) -> tuple[str, dict[str, object]]:
    """The three tables as text and as a JSON-able dict."""
    everything = [*pool, *test]
    t2, t12 = table2(everything), table12(pool, test)
    t10_test, t10_pool = table10(test), table10(pool)
    text = "\n\n".join(
        [
            render_rows("Table 2 (compositional items, pool + test)", t2),
            render_rows("Table 10 (structure types, test items)", t10_test),
            render_rows("Table 10 (structure types, pool items)", t10_pool),
            render_table12(t12),
        ]
    )
    data = {
        "table2": [r.as_dict() for r in t2],
        "table10_test": [r.as_dict() for r in t10_test],
        "table10_pool": [r.as_dict() for r in t10_pool],
        "table12": t12,
        "labels": len({item.graph_label for item in everything}),
    }
    return text, data


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", help="built or official CGGC folder (default: CONCEPTCOMB_DATA_DIR)"
    )


def run(args: argparse.Namespace) -> int:
    from conceptcomb.cggc.data import load_dataset
    from conceptcomb.cggc.splits import check_compositional

    dataset = load_dataset(args.data_dir)
    text, _ = report(list(dataset.pool), list(dataset.test))
    print(f"CGGC dataset in {dataset.folder}\n\n{text}")
    problems = check_compositional(list(dataset.pool), list(dataset.test))
    print(
        f"\ncompositional constraint: {'holds' if not problems else f'{len(problems)} violations'}"
    )
    for problem in problems[:10]:
        print(f"  {problem}")
    return 0

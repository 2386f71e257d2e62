"""The statistics of the paper's Tables 2, 10 and 12, for a built (or official) dataset.

Columns as in the paper: #set concept sets, #sent items (references), #lens words per
reference (whitespace words without punctuation; the paper does not say how it counts),
#nodes / #edges / #rel of the pruned reasoning graph (#rel: distinct relation types).

`conceptcomb cggc stats` sets ours beside the paper's: Table 2 row by row, and Table 10 for
each reading of Fig. 3 (`conceptcomb.cggc.graphs.READINGS`), computed from the items' edges
(never from the stored ``structure`` field). CN-100K graphs are smaller than the paper's, so
Table 10 is compared through scale-free numbers: each type's share of the typed items, the
typed share of the size-3 items, and each type's #nodes / #edges / #rel as a ratio to the
same items' size-3 mean. `closeness` sums their absolute differences from the paper's.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from dataclasses import dataclass

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.graphs import READINGS, STRUCTURE_TYPES, GraphEdge, nodes_of

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


class Measures:
    """Each item's edges (``kg_edges``), node count and word count, computed once and kept."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[CggcItem, list[GraphEdge], int, int]] = {}

    def _entry(self, item: CggcItem) -> tuple[CggcItem, list[GraphEdge], int, int]:
        entry = self._entries.get(id(item))
        if entry is None or entry[0] is not item:
            edges = item.kg_edges()
            words = len(_WORD.findall(item.target))
            entry = self._entries[id(item)] = (item, edges, len(nodes_of(edges)), words)
        return entry

    def edges(self, item: CggcItem) -> list[GraphEdge]:
        return self._entry(item)[1]

    def nodes(self, item: CggcItem) -> int:
        return self._entry(item)[2]

    def words(self, item: CggcItem) -> int:
        return self._entry(item)[3]


def row(name: str, items: Iterable[CggcItem], measures: Measures | None = None) -> Row:
    items = list(items)
    measures = measures or Measures()
    return Row(
        name=name,
        sets=len({item.concept_set_idx for item in items}),
        sents=len(items),
        lens=_mean([measures.words(item) for item in items]),
        nodes=_mean([measures.nodes(item) for item in items]),
        edges=_mean([len(item.edges) for item in items]),
        rels=_mean([len(item.relations) for item in items]),
    )


def table2(items: list[CggcItem], measures: Measures | None = None) -> list[Row]:
    measures = measures or Measures()
    rows = [row("all", items, measures)]
    for size in sorted({len(item.concepts) for item in items}):
        rows.append(row(f"-size={size}", [i for i in items if len(i.concepts) == size], measures))
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


# The paper's Table 2 (compositional items, all splits) and Table 10 (size-3 items of two
# primitives, by Fig. 3 type), as printed; Table 10 has no #lens column.
PAPER_TABLE2 = (
    Row("all", 26819, 55269, 10.68, 9.07, 7.73, 4.63),
    Row("-size=3", 19684, 42747, 10.16, 8.31, 7.01, 4.41),
    Row("-size=4", 3947, 8548, 11.75, 10.85, 9.43, 5.15),
    Row("-size=5", 3188, 3972, 13.89, 13.33, 11.81, 5.76),
)
PAPER_TABLE10 = (
    Row("Type A", 3517, 6250, 0.0, 8.49, 7.17, 4.41),
    Row("Type B", 1037, 1697, 0.0, 9.22, 7.91, 4.72),
    Row("Type C", 1185, 1964, 0.0, 9.12, 7.86, 4.73),
)
SCOPES = ("test", "pool", "pool + test")
SCORE_SCOPE = "pool + test"  # the paper's Table 10 shares and ratios refer to Table 2's items
GRAPH_COLUMNS = ("nodes", "edges", "rels")


@dataclass(frozen=True)
class TypeTable:
    """Table 10 for one reading and one set of items (or the paper's), with its size-3 row."""

    size3: Row  # all size-3 items
    types: tuple[Row, ...]  # Type A, B, C

    @property
    def typed(self) -> int:
        return sum(r.sents for r in self.types)

    @property
    def typed_share(self) -> float:
        return self.typed / self.size3.sents if self.size3.sents else 0.0

    def shares(self) -> list[float]:
        return [r.sents / self.typed if self.typed else 0.0 for r in self.types]

    def ratios(self, r: Row) -> list[float]:
        """#nodes, #edges, #rel of a type row over the size-3 means."""
        return [
            getattr(r, c) / getattr(self.size3, c) if getattr(self.size3, c) else 0.0
            for c in GRAPH_COLUMNS
        ]

    def as_dict(self) -> dict[str, object]:
        return {
            "size3": self.size3.as_dict(),
            "typed": self.typed,
            "typed_share": round(self.typed_share, 4),
            "types": [
                {
                    **r.as_dict(),
                    "share": round(share, 4),
                    "ratios": dict(zip(GRAPH_COLUMNS, map(_r3, self.ratios(r)), strict=True)),
                }
                for r, share in zip(self.types, self.shares(), strict=True)
            ],
        }


PAPER_TYPES = TypeTable(PAPER_TABLE2[1], PAPER_TABLE10)


def _r3(value: float) -> float:
    return round(value, 3)


def type_table(
    items: Iterable[CggcItem],
    reading: str,
    measures: Measures | None = None,
    kinds: dict[int, str | None] | None = None,
) -> TypeTable:
    """Table 10 of ``items`` typed by the reading named, from their edges.

    ``kinds`` (id of an item -> its type) keeps types already found, and gets the new ones.
    """
    kind_of, measures = READINGS[reading], measures or Measures()
    kinds = {} if kinds is None else kinds
    size3 = [item for item in items if len(item.concepts) == 3]
    for item in size3:
        if id(item) not in kinds:
            kinds[id(item)] = kind_of(item.concepts, measures.edges(item))
    return TypeTable(
        row("-size=3", size3, measures),
        tuple(
            row(f"Type {kind}", [i for i in size3 if kinds[id(i)] == kind], measures)
            for kind in STRUCTURE_TYPES
        ),
    )


def closeness(ours: TypeTable, paper: TypeTable = PAPER_TYPES) -> dict[str, float]:
    """How far a Table 10 is from the paper's (lower is closer; 0 is identical).

    ``score`` = the sum of absolute differences of 13 scale-free numbers: the three types'
    shares of the typed items, the typed share of the size-3 items, and for each type its
    #nodes, #edges and #rel over the size-3 means. ``shares`` and ``ratios`` are its parts.
    """
    shares = sum(abs(a - b) for a, b in zip(ours.shares(), paper.shares(), strict=True))
    shares += abs(ours.typed_share - paper.typed_share)
    ratios = sum(
        abs(a - b)
        for mine, theirs in zip(ours.types, paper.types, strict=True)
        for a, b in zip(ours.ratios(mine), paper.ratios(theirs), strict=True)
    )
    return {"score": _r3(shares + ratios), "shares": _r3(shares), "ratios": _r3(ratios)}


def _scopes(pool: list[CggcItem], test: list[CggcItem]) -> dict[str, list[CggcItem]]:
    return {"test": test, "pool": pool, "pool + test": [*pool, *test]}


def render_table2_vs_paper(rows: list[Row]) -> str:
    paper = {r.name: r for r in PAPER_TABLE2}
    lines = [
        "Table 2 (compositional items, pool + test): ours vs the paper",
        f"{'':<16}{'#set':>8}{'#sent':>8}{'#lens':>8}{'#nodes':>8}{'#edges':>8}{'#rel':>8}",
    ]
    for r in rows:
        for who, x in (("ours", r), ("paper", paper.get(r.name))):
            if x is not None:
                lines.append(
                    f"{r.name if who == 'ours' else '':<10}{who:<6}{x.sets:>8}{x.sents:>8}"
                    f"{x.lens:>8.2f}{x.nodes:>8.2f}{x.edges:>8.2f}{x.rels:>8.2f}"
                )
    return "\n".join(lines)


def render_type_table(title: str, ours: TypeTable, paper: TypeTable = PAPER_TYPES) -> str:
    head = f"{'':<16}{'#set':>7}{'#sent':>7}{'share':>7}{'#nodes':>8}{'#edges':>8}{'#rel':>7}"
    lines = [
        title,
        f"typed: {ours.typed} of {ours.size3.sents} size-3 items = {ours.typed_share:.1%} "
        f"(paper: {paper.typed} of {paper.size3.sents} = {paper.typed_share:.1%})",
        f"{head}{'r.nodes':>9}{'r.edges':>8}{'r.rel':>7}   (r.: ratio to the size-3 mean)",
    ]

    def line(name: str, who: str, r: Row, share: str, ratios: list[float]) -> str:
        return (
            f"{name:<10}{who:<6}{r.sets:>7}{r.sents:>7}{share:>7}{r.nodes:>8.2f}{r.edges:>8.2f}"
            f"{r.rels:>7.2f}{ratios[0]:>9.2f}{ratios[1]:>8.2f}{ratios[2]:>7.2f}"
        )

    for mine, theirs, my_share, their_share in zip(
        ours.types, paper.types, ours.shares(), paper.shares(), strict=True
    ):
        lines.append(line(mine.name, "ours", mine, f"{my_share:.3f}", ours.ratios(mine)))
        lines.append(line("", "paper", theirs, f"{their_share:.3f}", paper.ratios(theirs)))
    lines.append(line("size 3", "ours", ours.size3, "", [1.0] * 3))
    lines.append(line("", "paper", paper.size3, "", [1.0] * 3))
    score = closeness(ours, paper)
    lines.append(
        f"closeness to the paper: {score['score']:.3f} "
        f"(shares {score['shares']:.3f} + ratios {score['ratios']:.3f}; lower is closer)"
    )
    return "\n".join(lines)


def structure_report(
    pool: list[CggcItem], test: list[CggcItem], readings: Iterable[str] = tuple(READINGS)
) -> tuple[str, dict[str, object]]:
    """Table 2 and, for each reading, Table 10 beside the paper's, with closeness scores."""
    readings = list(readings)
    scopes, measures = _scopes(pool, test), Measures()
    t2 = table2(scopes["pool + test"], measures)
    blocks = [render_table2_vs_paper(t2)]
    tables: dict[str, dict[str, TypeTable]] = {}
    for reading in readings:
        kinds: dict[int, str | None] = {}
        tables[reading] = {
            scope: type_table(items, reading, measures, kinds) for scope, items in scopes.items()
        }
        for scope in SCOPES:
            blocks.append(
                render_type_table(
                    f'Table 10, reading "{reading}", {scope} items: ours vs the paper',
                    tables[reading][scope],
                )
            )
    scores = {
        reading: {scope: closeness(t)["score"] for scope, t in by_scope.items()}
        for reading, by_scope in tables.items()
    }
    summary = [
        "Closeness to the paper's Table 10 (lower is closer): the sum of |ours - paper| over the",
        "A/B/C shares of the typed items, the typed share of the size-3 items and the 9 per-type",
        "#nodes/#edges/#rel ratios to the size-3 mean",
        f"{'reading':<12}" + "".join(f"{scope:>13}" for scope in SCOPES),
    ]
    summary += [
        f"{reading:<12}" + "".join(f"{scores[reading][scope]:>13.3f}" for scope in SCOPES)
        for reading in readings
    ]
    winner = None
    if len(readings) > 1:
        ranked = sorted(readings, key=lambda name: scores[name][SCORE_SCOPE])
        winner = ranked[0]
        margin = scores[ranked[1]][SCORE_SCOPE] - scores[winner][SCORE_SCOPE]
        agree = all(min(readings, key=lambda n: scores[n][s]) == winner for s in SCOPES)
        summary.append(
            f'closer on {SCORE_SCOPE}: "{winner}", by {margin:.3f} '
            f'(vs "{ranked[1]}"; {"the same" if agree else "not the same"} on every scope)'
        )
    blocks.append("\n".join(summary))
    data = {
        "table2": [r.as_dict() for r in t2],
        "table2_paper": [r.as_dict() for r in PAPER_TABLE2],
        "table10_paper": PAPER_TYPES.as_dict(),
        "table10": {
            reading: {scope: t.as_dict() for scope, t in by_scope.items()}
            for reading, by_scope in tables.items()
        },
        "closeness": scores,
        "score_scope": SCORE_SCOPE,
        "closer_reading": winner,
    }
    return "\n\n".join(blocks), data


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", help="built or official CGGC folder (default: CONCEPTCOMB_DATA_DIR)"
    )
    parser.add_argument(
        "--reading",
        choices=[*READINGS, "both"],
        default="both",
        help="the reading(s) of the paper's Fig. 3 types for Table 10, computed from each "
        "item's edges: junction (the rule of the stored structure field), skeleton "
        "(directed paths between the concepts), or both, naming the closer (default: both)",
    )


def run(args: argparse.Namespace) -> int:
    from conceptcomb.cggc.data import load_dataset
    from conceptcomb.cggc.dataset_build.splits import check_compositional

    dataset = load_dataset(args.data_dir)
    pool, test = list(dataset.pool), list(dataset.test)
    reading = getattr(args, "reading", "both")
    text, _ = structure_report(pool, test, READINGS if reading == "both" else [reading])
    print(f"CGGC dataset in {dataset.folder}\n\n{text}\n\n{render_table12(table12(pool, test))}")
    problems = check_compositional(list(dataset.pool), list(dataset.test))
    print(
        f"\ncompositional constraint: {'holds' if not problems else f'{len(problems)} violations'}"
    )
    for problem in problems[:10]:
        print(f"  {problem}")
    return 0

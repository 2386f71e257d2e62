"""Reasoning graphs found over ConceptNet: similarity-weighted shortest paths, pruning.

Section 4.2 of the paper, following Plenz et al. (2023, "CCKG"), whose released code fixes
what the paper leaves out:

* weight of a triple for a reference r: ``(1 - cos(triple, r)) / 2`` (CCKG's
  ``1 - (cos + 1) / 2``), in [0, 1]; two concepts joined by several triples (any relation,
  either direction) form one undirected edge carrying the lowest weight, labelled with that
  triple's relation and direction;
* one Dijkstra shortest path for every pair of the item's concepts; the reasoning graph is
  the union of the paths' edges (intermediate concepts allowed);
* pruning (CCKG's SBERT pruner, pruned completely): repeatedly delete the non-concept node
  least similar to the reference (cosine of its name's embedding) whose removal keeps the
  graph connected, until no node can go.

Exact speed-up: a node of degree one that is not a concept of any item can never be inside
a path between two concepts, so such nodes are stripped (repeatedly) before any search.
The graphs' edges and structure types are `conceptcomb.cggc.graphs`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from conceptcomb.cggc.graphs import GraphEdge, nodes_of

# A zero weight would be an absent edge in scipy's sparse graphs (cos = 1 is possible).
MIN_WEIGHT = 1e-9


class KnowledgeBase:
    """The triples a build can use, reduced to the part that can join concepts."""

    def __init__(
        self,
        heads: Sequence[str],
        relations: Sequence[str],
        tails: Sequence[str],
        protected: Iterable[str],
    ) -> None:
        names = sorted(set(heads) | set(tails))
        index = {name: i for i, name in enumerate(names)}
        head_ids = np.array([index[h] for h in heads], dtype=np.int64)
        tail_ids = np.array([index[t] for t in tails], dtype=np.int64)
        relation_names = sorted(set(relations))
        rel_index = {name: i for i, name in enumerate(relation_names)}
        rel_ids = np.array([rel_index[r] for r in relations], dtype=np.int64)
        keep_nodes = np.zeros(len(names), dtype=bool)
        keep_nodes[[index[p] for p in set(protected) if p in index]] = True
        alive = _strip_leaves(head_ids, tail_ids, keep_nodes)
        self._build(names, head_ids[alive], tail_ids[alive], rel_ids[alive], relation_names)
        self.total_triples = len(heads)

    def _build(
        self,
        names: list[str],
        heads: np.ndarray,
        tails: np.ndarray,
        rels: np.ndarray,
        relation_names: list[str],
    ) -> None:
        used = np.unique(np.concatenate([heads, tails]))
        remap = np.full(len(names), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        self.names = [names[i] for i in used]
        self.index = {name: i for i, name in enumerate(self.names)}
        low, high = np.minimum(remap[heads], remap[tails]), np.maximum(remap[heads], remap[tails])
        order = np.lexsort((rels, high, low))  # group the triples of each node pair
        self.heads, self.tails, self.rels = remap[heads][order], remap[tails][order], rels[order]
        low, high = low[order], high[order]
        self.relation_names = relation_names
        new_pair = np.ones(len(low), dtype=bool)
        new_pair[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1])
        self.pair_starts = np.flatnonzero(new_pair)
        self.pair_low, self.pair_high = low[self.pair_starts], high[self.pair_starts]
        self.pair_keys = self.pair_low * len(self.names) + self.pair_high  # ascending
        self._csr_pairs()

    def _csr_pairs(self) -> None:
        from scipy.sparse import csr_matrix

        n, pairs = len(self.names), len(self.pair_starts)
        rows = np.concatenate([self.pair_low, self.pair_high])
        cols = np.concatenate([self.pair_high, self.pair_low])
        ids = np.concatenate([np.arange(pairs), np.arange(pairs)]) + 1.0
        skeleton = csr_matrix((ids, (rows, cols)), shape=(n, n))
        self.csr_indices, self.csr_indptr = skeleton.indices, skeleton.indptr
        self.csr_pair = (skeleton.data - 1).astype(np.int64)

    @property
    def triple_count(self) -> int:
        return len(self.heads)

    def triple_texts(self) -> list[str]:
        from conceptcomb.cggc.relations import verbalize

        return [
            verbalize(self.names[h], self.relation_names[r], self.names[t])
            for h, r, t in zip(
                self.heads.tolist(), self.rels.tolist(), self.tails.tolist(), strict=True
            )
        ]

    def shortest_path_union(
        self, concepts: Sequence[str], triple_cos: np.ndarray
    ) -> list[GraphEdge] | None:
        """Union of one weighted shortest path per concept pair; None if some pair is apart."""
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import dijkstra

        ids = [self.index.get(concept) for concept in concepts]
        if any(i is None for i in ids) or len(set(ids)) < len(ids):
            return None
        weights = np.maximum((1.0 - triple_cos.astype(np.float64)) / 2.0, MIN_WEIGHT)
        pair_weight = np.minimum.reduceat(weights, self.pair_starts)
        n = len(self.names)
        graph = csr_matrix((pair_weight[self.csr_pair], self.csr_indices, self.csr_indptr), (n, n))
        _, predecessors = dijkstra(graph, directed=True, indices=ids[:-1], return_predecessors=True)
        pairs: set[tuple[int, int]] = set()
        for row, source in enumerate(ids[:-1]):
            for target in ids[row + 1 :]:
                path = _walk_back(predecessors[row], source, target)
                if path is None:
                    return None
                pairs.update((min(a, b), max(a, b)) for a, b in itertools.pairwise(path))
        return [self._best_triple(a, b, weights) for a, b in sorted(pairs)]

    def _best_triple(self, a: int, b: int, weights: np.ndarray) -> GraphEdge:
        """The lowest-weight triple between nodes a < b: the edge's relation and direction."""
        pair = int(np.searchsorted(self.pair_keys, a * len(self.names) + b))
        start = int(self.pair_starts[pair])
        stop = int(self.pair_starts[pair + 1]) if pair + 1 < len(self.pair_starts) else len(weights)
        best = start + int(np.argmin(weights[start:stop]))
        return GraphEdge(
            self.names[int(self.heads[best])],
            self.relation_names[int(self.rels[best])],
            self.names[int(self.tails[best])],
        )


def _strip_leaves(heads: np.ndarray, tails: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Mask of triples left after repeatedly removing unprotected nodes of degree one."""
    alive = heads != tails
    n = len(keep)
    pair_key = np.minimum(heads, tails) * n + np.maximum(heads, tails)
    while True:
        # degree counts distinct neighbours: several triples between two nodes are one edge
        live_pairs = np.unique(pair_key[alive])
        ends = np.concatenate([live_pairs // n, live_pairs % n])
        degree = np.bincount(ends, minlength=n)
        leaf = (degree <= 1) & ~keep
        dead = alive & (leaf[heads] | leaf[tails])
        if not dead.any():
            return alive
        alive &= ~dead


def _walk_back(predecessors: np.ndarray, source: int, target: int) -> list[int] | None:
    path = [target]
    while path[-1] != source:
        previous = int(predecessors[path[-1]])
        if previous < 0:
            return None
        path.append(previous)
    return path[::-1]


def is_connected(nodes: Iterable[str], edges: Iterable[GraphEdge]) -> bool:
    nodes = list(nodes)
    if not nodes:
        return True
    neighbours: dict[str, set[str]] = {node: set() for node in nodes}
    for edge in edges:
        if edge.head in neighbours and edge.tail in neighbours:
            neighbours[edge.head].add(edge.tail)
            neighbours[edge.tail].add(edge.head)
    seen, frontier = {nodes[0]}, [nodes[0]]
    while frontier:
        for nxt in neighbours[frontier.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return len(seen) == len(nodes)


def prune(
    edges: list[GraphEdge], concepts: Iterable[str], similarity: dict[str, float]
) -> tuple[list[GraphEdge], list[GraphEdge]]:
    """(kept edges, removed edges): CCKG's SBERT pruning, run until nothing can go."""
    protected = set(concepts)
    nodes = set(nodes_of(edges))
    kept = list(edges)
    while True:
        for node in sorted(nodes - protected, key=lambda n: (similarity[n], n)):
            rest = [e for e in kept if node not in (e.head, e.tail)]
            if is_connected(nodes - {node}, rest):
                nodes.discard(node)
                kept = rest
                break
        else:
            removed = [edge for edge in edges if edge not in kept]
            return kept, removed

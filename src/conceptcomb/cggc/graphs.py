"""Reasoning graphs: their edges, nodes and structure types (Fig. 3: A, B, C).

The data, the demonstrations and the tasks read only this; how a build finds and prunes
the graphs over ConceptNet (paper section 4.2) is `conceptcomb.cggc.dataset_build.paths`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

STRUCTURE_TYPES = ("A", "B", "C")  # transitive chain, common source, common target


@dataclass(frozen=True)
class GraphEdge:
    """A triple in its ConceptNet direction (head -> tail)."""

    head: str
    relation: str
    tail: str


def nodes_of(edges: Iterable[GraphEdge]) -> list[str]:
    seen: dict[str, None] = {}
    for edge in edges:
        seen.setdefault(edge.head)
        seen.setdefault(edge.tail)
    return list(seen)


def structure_type(concepts: Sequence[str], edges: Sequence[GraphEdge]) -> str | None:
    """Graph structure of a 3-concept, 2-relation graph (paper Fig. 3), else None.

    At every node where an edge of one relation meets an edge of the other: one edge in and
    one out is a transitive chain (A), both out a common source (B), both in a common target
    (C). On the paper's basic graphs (three nodes, two edges) this is exactly its
    definition; a larger graph is typed only if all its junctions agree.
    """
    relations = {edge.relation for edge in edges}
    if len(set(concepts)) != 3 or len(relations) != 2:
        return None
    found: set[str] = set()
    incident: dict[str, list[tuple[str, bool]]] = {}
    for edge in edges:
        incident.setdefault(edge.head, []).append((edge.relation, False))  # leaves the node
        incident.setdefault(edge.tail, []).append((edge.relation, True))  # enters the node
    for ends in incident.values():
        for (rel_a, in_a), (rel_b, in_b) in itertools.combinations(ends, 2):
            if rel_a != rel_b:
                found.add("A" if in_a != in_b else ("C" if in_a else "B"))
    return found.pop() if len(found) == 1 else None


def concept_links(concepts: Sequence[str], edges: Sequence[GraphEdge]) -> set[tuple[str, str]]:
    """(u, v) for concepts u != v with a directed path u -> ... -> v (head -> tail edges).

    Any path counts, through intermediate nodes and through other concepts alike.
    """
    successors: dict[str, set[str]] = {}
    for edge in edges:
        successors.setdefault(edge.head, set()).add(edge.tail)
    wanted = set(concepts)
    links: set[tuple[str, str]] = set()
    for start in wanted:
        seen, frontier = {start}, [start]
        while frontier:
            for nxt in successors.get(frontier.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        links.update((start, other) for other in (seen & wanted) - {start})
    return links


def skeleton_type(concepts: Sequence[str], edges: Sequence[GraphEdge]) -> str | None:
    """Graph structure of a 3-concept graph read at the level of its concepts, else None.

    Reading (b), "skeleton": concept u is linked to concept v when the graph has a directed
    path from u to v (edges head -> tail, as ConceptNet states them), through any nodes.

    * A path through the third concept counts, and a link implied by two others is dropped
      (transitive reduction): x -> y -> z gives x -> y and y -> z, not a triangle; a graph
      with x -> y -> z and also a path x -> z that avoids y is read the same way (A).
    * Both directions between two concepts (a directed cycle through them): ambiguous, None.
    * Concept pairs with no directed path either way (e.g. x -> m <- y) are not linked.

    What is left is typed as Fig. 3 draws the basic graphs: two links x -> y -> z are a
    transitive chain (A), x -> y and x -> z a common source (B), y -> x and z -> x a common
    target (C); fewer than two links are None. The number of relation types is not looked
    at, nor is the relation of any edge.
    """
    if len(concepts) != 3 or len(set(concepts)) != 3:
        return None
    links = concept_links(concepts, edges)
    if any((v, u) in links for u, v in links):
        return None
    # acyclic on three nodes: a link u -> w is implied when u -> v -> w for the third v
    kept = {
        (u, w)
        for u, w in links
        if not any((u, v) in links and (v, w) in links for v in concepts if v not in (u, w))
    }
    if len(kept) != 2:
        return None
    (a, b), (c, d) = sorted(kept)
    if a == c:
        return "B"
    if b == d:
        return "C"
    return "A"


# Readings of Fig. 3 by name (`conceptcomb cggc stats --reading`); the dataset's stored
# ``structure`` field holds "junction".
READINGS = {"junction": structure_type, "skeleton": skeleton_type}

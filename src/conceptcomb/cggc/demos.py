"""Demonstration selection: the one function behind the lm-eval samplers and Inspect datasets.

Settings (paper section 5.2, Table 3):

* ``id`` (in-distribution): demonstrations share the test item's graph label. Test labels
  never occur in the pool, so they come from the other test items of that label (never
  the item's own concept set) - which is why every label needs five items.
* ``ood`` (compositional generalization): demonstrations come from the pool; together they
  cover every primitive relation of the item, each shares at least one of them, and none
  has the item's label (the split guarantees that the composition is unseen).

Options (section 7-8): ``structure`` keeps demonstrations of one graph type (A transitive,
B common source, C common target; Table 7 "level"); ``order`` shows them easy-to-hard
(A, B, C) or hard-to-easy (Table 7 "order"), and then draws them from typed items, trying
to include every type; ``packaging`` "1&3" / "2&2" splits the item's primitives into two
groups of those sizes and gives each demonstration exactly one group of the item's
primitives (Fig. 4; extra relations outside the item's are allowed).

This module holds CGGC's own rule (which demonstrations are valid for an item); the
generator, the order and its check are the shared core's
(`conceptcomb.common.demonstrations`), which the lm-eval sampler and the Inspect solver
call for CGGC as for any task. The generator is seeded with (seed, item id, options other
than the order), so easy-to-hard and hard-to-easy show the same demonstrations reversed.
An item for which the pool allows no valid selection gets None (the authors' main.py skips
such items too).
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.graphs import STRUCTURE_TYPES
from conceptcomb.common.demonstrations import (
    EASY2HARD,
    HARD2EASY,
    LEVEL,
    RANDOM,
    Difficulty,
    Order,
    OrderedDemonstrations,
    missing_levels,
    order_problems,
)
from conceptcomb.common.errors import ConfigError, one_of

SETTINGS = ("id", "ood")
ORDERS = ("random", "easy_to_hard", "hard_to_easy")
# Table 7's difficulty: A (transitive) < B (common source) < C (common target).
STRUCTURE_DIFFICULTY = Difficulty("structure", STRUCTURE_TYPES)


@dataclass(frozen=True)
class DemoSpec:
    setting: str = "ood"
    k: int = 4
    order: str = "random"
    structure: str | None = None
    packaging: tuple[int, int] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        one_of("setting", self.setting, SETTINGS)
        one_of("order", self.order, ORDERS)
        if self.structure is not None and self.structure not in STRUCTURE_TYPES:
            raise ConfigError(f"structure={self.structure!r}: use A, B or C.")
        if self.k < 1:
            raise ConfigError(f"the number of demonstrations must be positive, not {self.k}.")
        if self.packaging is not None and (min(self.packaging) < 1 or self.setting != "ood"):
            raise ConfigError("packaging (e.g. 1&3) needs setting=ood and two positive sizes.")

    @property
    def typed(self) -> bool:
        """Demonstrations must carry a structure type (ordered or single-type variants)."""
        return self.order != "random" or self.structure is not None


def order_name(value: str) -> str:
    """An order option in any of the core's spellings (easy2hard, easy_to_hard, ...) as
    CGGC names it (`ORDERS`); one structure type is the ``structure`` option."""
    order = Order.parse(value)
    if order.kind == LEVEL:
        raise ConfigError(f"order={value!r}: for one structure type use structure=A, B or C.")
    return {RANDOM: "random", EASY2HARD: "easy_to_hard", HARD2EASY: "hard_to_easy"}[order.kind]


def parse_packaging(value: str | None) -> tuple[int, int] | None:
    """``"1&3"``, ``"D1&3"`` or ``"2+2"`` -> (1, 3); empty -> None."""
    if value is None or str(value).strip().lower() in ("", "none", "any"):
        return None
    text = str(value).strip().upper().removeprefix("D").replace("+", "&")
    try:
        first, second = (int(part) for part in text.split("&"))
    except ValueError as err:
        raise ConfigError(f"packaging={value!r}: write it as 1&3 or 2&2.") from err
    return first, second


class Group:
    """The usable demonstrations of one graph label, also split by structure type."""

    __slots__ = ("by_type", "members")

    def __init__(self, members: list[CggcItem]) -> None:
        self.members = members
        self.by_type: dict[str, list[CggcItem]] = {}
        for x in members:
            if x.structure:
                self.by_type.setdefault(x.structure, []).append(x)


class DemoIndex:
    """Items grouped by graph label (and type), built once per pool."""

    def __init__(self, items: Iterable[CggcItem]) -> None:
        self.pool = list(items)
        self.items: dict[str, list[CggcItem]] = defaultdict(list)
        self.labels_with: dict[str, set[str]] = defaultdict(set)
        for item in self.pool:
            self.items[item.graph_label].append(item)
            for relation in item.relations:
                self.labels_with[relation].add(item.graph_label)
        self._groups: dict[tuple[str, str], Group] = {}
        # label -> candidate groups, per (label, setting, view): items of one label share them
        self.candidates: dict[tuple[str, str, str], dict[str, Group]] = {}

    def group(self, label: str, spec: DemoSpec) -> Group:
        """Demonstrations of ``label`` that ``spec`` allows (every type, typed only, one type)."""
        view = spec.structure or ("typed" if spec.typed else "all")
        key = (label, view)
        if key not in self._groups:
            members = self.items.get(label, [])
            if view == "typed":
                members = [x for x in members if x.structure]
            elif view != "all":
                members = [x for x in members if x.structure == view]
            self._groups[key] = Group(members)
        return self._groups[key]


def candidate_groups(item: CggcItem, index: DemoIndex, spec: DemoSpec) -> dict[str, Group]:
    """label -> usable demonstrations (the item's own concept set is skipped when picking)."""
    key = (item.graph_label, spec.setting, spec.structure or ("typed" if spec.typed else "all"))
    if key not in index.candidates:
        index.candidates[key] = _candidate_groups(item, index, spec)
    return index.candidates[key]


def _candidate_groups(item: CggcItem, index: DemoIndex, spec: DemoSpec) -> dict[str, Group]:
    if spec.setting == "id":
        labels = {item.graph_label}
    else:
        labels = set().union(*(index.labels_with.get(r, set()) for r in item.relations))
        labels.discard(item.graph_label)
    groups = {label: index.group(label, spec) for label in sorted(labels)}
    return {label: group for label, group in groups.items() if group.members}


def cggc_demonstrations(index: DemoIndex, spec: DemoSpec) -> OrderedDemonstrations[CggcItem]:
    """The pool of ``index`` behind the shared core, with CGGC's rule as its selection."""

    def selection(item: CggcItem, k: int, rng: random.Random) -> list[CggcItem] | None:
        groups = candidate_groups(item, index, spec)
        picker = _Picker(spec, rng, item.concept_set_idx)
        if spec.packaging is not None:
            return _packaged(item, groups, picker)
        return _covering(item, groups, picker)

    return OrderedDemonstrations(
        index.pool,
        k=spec.k,
        order=Order.parse(spec.order),
        difficulty=STRUCTURE_DIFFICULTY,
        seed=spec.seed,
        id_of=lambda x: x.item_id,
        value_of=lambda x, _: x.structure,
        selection=selection,
        rng_context=(spec.setting, spec.k, spec.structure, spec.packaging, spec.typed),
    )


def select_demonstrations(
    item: CggcItem, index: DemoIndex, spec: DemoSpec
) -> list[CggcItem] | None:
    """The item's demonstrations, in presentation order; None if the pool cannot serve it."""
    return cggc_demonstrations(index, spec).choose(item.item_id, item)


class _Picker:
    """Chooses demonstrations with distinct concept sets, preferring missing types."""

    def __init__(self, spec: DemoSpec, rng: random.Random, item_set: str) -> None:
        self.spec, self.rng = spec, rng
        self.chosen: list[CggcItem] = []
        self.sets: set[str] = {item_set}  # never the test item's own concept set

    def missing_types(self) -> list[str]:
        if self.spec.order == "random":
            return []
        return missing_levels((x.structure for x in self.chosen), STRUCTURE_TYPES)  # type: ignore[return-value]

    def draw(self, pools: Sequence[Sequence[CggcItem]]) -> CggcItem | None:
        """A uniform random member of the pools, from a concept set not used yet, or None."""
        pools = [pool for pool in pools if pool]
        if not pools:
            return None
        ends = list(itertools.accumulate(len(pool) for pool in pools))
        for _ in range(16):  # cheap tries first: pools are large, conflicts rare
            at = self.rng.randrange(ends[-1])
            which = bisect.bisect_right(ends, at)
            x = pools[which][at - (ends[which - 1] if which else 0)]
            if x.concept_set_idx not in self.sets:
                return x
        fresh = [x for pool in pools for x in pool if x.concept_set_idx not in self.sets]
        return fresh[self.rng.randrange(len(fresh))] if fresh else None

    def pick(self, groups: Sequence[Group]) -> bool:
        """Take one demonstration from ``groups``, of a missing type if they hold one."""
        wanted = self.missing_types()
        preferred = [g.by_type[kind] for g in groups for kind in wanted if kind in g.by_type]
        choice = self.draw(preferred) or self.draw([g.members for g in groups])
        if choice is None:
            return False
        self.chosen.append(choice)
        self.sets.add(choice.concept_set_idx)
        return True


@cache
def _primitives(label: str) -> frozenset[str]:
    return frozenset(label.split("&"))


def _gain(label: str, group: Group, uncovered: set[str], wanted: list[str]) -> tuple[int, int]:
    """(uncovered primitives a label shows, whether it offers a missing structure type)."""
    offers = any(kind in group.by_type for kind in wanted)
    return len(uncovered & _primitives(label)), int(offers)


def _covering(item: CggcItem, groups: dict[str, Group], picker: _Picker) -> list[CggcItem] | None:
    """Greedy cover of the item's primitives (ood), then any candidates up to k."""
    labels = list(groups)
    picker.rng.shuffle(labels)
    uncovered = set(item.relations) if picker.spec.setting == "ood" else set()
    while uncovered:
        wanted = picker.missing_types()
        gains = {label: _gain(label, groups[label], uncovered, wanted) for label in labels}
        best = max(labels, key=gains.__getitem__, default=None)
        if best is None or gains[best][0] == 0 or len(picker.chosen) >= picker.spec.k:
            return None
        if picker.pick([groups[best]]):
            uncovered -= _primitives(best)
        labels.remove(best)
    everything = [groups[label] for label in sorted(groups)]
    while len(picker.chosen) < picker.spec.k:
        if not picker.pick(everything):
            return None
    return picker.chosen


def _packaged(item: CggcItem, groups: dict[str, Group], picker: _Picker) -> list[CggcItem] | None:
    """Fig. 4: every demonstration shows exactly one of two groups of the item's primitives."""
    assert picker.spec.packaging is not None
    primitives = sorted(item.relations)
    first_size, second_size = picker.spec.packaging
    if first_size + second_size != len(primitives):
        return None
    partitions = [set(c) for c in itertools.combinations(primitives, first_size)]
    picker.rng.shuffle(partitions)
    for first in partitions:
        parts = (first, set(primitives) - first)
        sides = [
            [g for label, g in groups.items() if _primitives(label) & set(primitives) == part]
            for part in parts
        ]
        if not all(sides):
            continue
        trial = _Picker(picker.spec, picker.rng, next(iter(picker.sets)))
        turn = 0
        while len(trial.chosen) < trial.spec.k:
            if not trial.pick(sides[turn % 2]) and not trial.pick(sides[(turn + 1) % 2]):
                break
            turn += 1
        shown = [set(x.relations) & set(primitives) for x in trial.chosen]
        if len(trial.chosen) == trial.spec.k and all(part in shown for part in parts):
            return trial.chosen
    return None


def check_demonstrations(item: CggcItem, demos: Sequence[CggcItem], spec: DemoSpec) -> list[str]:
    """Violations of the setting's constraints (tests and logged samples use this)."""
    problems = []
    if len({d.concept_set_idx for d in demos} | {item.concept_set_idx}) != len(demos) + 1:
        problems.append("a concept set repeats")
    if spec.setting == "id":
        problems += [
            f"{d.item_id} has label {d.graph_label}"
            for d in demos
            if d.graph_label != item.graph_label
        ]
    else:
        problems += [
            f"{d.item_id} has the item's label" for d in demos if d.graph_label == item.graph_label
        ]
        covered = set().union(*(set(d.relations) for d in demos)) if demos else set()
        if not set(item.relations) <= covered:
            problems.append(f"primitives {sorted(set(item.relations) - covered)} not shown")
    if spec.structure is not None:
        problems += [
            f"{d.item_id} is type {d.structure}" for d in demos if d.structure != spec.structure
        ]
    if Order.parse(spec.order).kind != "random":
        if not all(d.structure for d in demos):
            problems.append(f"untyped demonstrations: {[d.structure for d in demos]}")
        else:
            ranks = [STRUCTURE_DIFFICULTY.rank(d.structure, d.item_id) for d in demos]
            problems += [f"types {p}" for p in order_problems(ranks, Order.parse(spec.order))]
    return problems

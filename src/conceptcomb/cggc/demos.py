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
    fast_shuffle,
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


Lists = tuple[list[list[CggcItem]], list[int]]  # non-empty lists, their running lengths


class Pools:
    """Groups to draw one demonstration from (`_Picker.pick`): their member lists, or their
    lists of some structure types, with the running lengths a draw bisects. Kept per choice
    of types: the items of one label draw from the same groups thousands of times."""

    __slots__ = ("_lists", "groups")

    def __init__(self, groups: Sequence[Group]) -> None:
        self.groups = tuple(groups)
        self._lists: dict[tuple[str, ...] | None, Lists] = {}

    def lists(self, kinds: tuple[str, ...] | None = None) -> Lists:
        """Every member (``kinds`` None), or the members of each of ``kinds``, group by group."""
        if kinds not in self._lists:
            if kinds is None:
                lists = [g.members for g in self.groups]
            else:
                lists = [g.by_type[k] for g in self.groups for k in kinds if k in g.by_type]
            lists = [members for members in lists if members]
            self._lists[kinds] = lists, list(itertools.accumulate(map(len, lists)))
        return self._lists[kinds]


class Group:
    """The usable demonstrations of one graph label, also split by structure type."""

    __slots__ = ("_alone", "by_type", "members")

    def __init__(self, members: list[CggcItem]) -> None:
        self.members = members
        self.by_type: dict[str, list[CggcItem]] = {}
        for x in members:
            if x.structure:
                self.by_type.setdefault(x.structure, []).append(x)
        self._alone: Pools | None = None

    @property
    def alone(self) -> Pools:
        """This group as the only one to draw from."""
        if self._alone is None:
            self._alone = Pools([self])
        return self._alone


class Candidates:
    """The candidate groups of the items of one label (label -> group, in label order), with
    what `_covering` asks of them, worked out once for all the items of that label."""

    def __init__(self, groups: dict[str, Group], relations: Iterable[str]) -> None:
        self.groups = groups
        self.everything = Pools(list(groups.values()))
        primitives = frozenset(relations)
        # The item's primitives a label shows -> the labels that show exactly those.
        self.by_cover: dict[frozenset[str], set[str]] = defaultdict(set)
        # Structure type -> the labels whose group has demonstrations of that type.
        self.offering: dict[str, set[str]] = defaultdict(set)
        self._showing: dict[frozenset[str], Pools] = {}
        for label, group in groups.items():
            self.by_cover[_primitives(label) & primitives].add(label)
            for kind in group.by_type:
                self.offering[kind].add(label)

    def showing(self, part: frozenset[str]) -> Pools:
        """The groups (in label order) whose label shows exactly ``part`` of the item's
        primitives (`_packaged`)."""
        if part not in self._showing:
            labels = self.by_cover.get(part, set())
            self._showing[part] = Pools([g for x, g in self.groups.items() if x in labels])
        return self._showing[part]

    def best_cover(
        self, labels: list[str], taken: set[str], uncovered: set[str], wanted: Sequence[str]
    ) -> str | None:
        """The label the greedy cover takes next: the first of ``labels`` (shuffled;
        ``taken``: the labels removed from them) that shows the most ``uncovered``
        primitives and, among those, offers a ``wanted`` structure type if one does; None
        when no label left shows an uncovered one. Worked out on the few sets of labels
        that show the same of the item's primitives, not label by label (hundreds per
        item), which took most of the time of building cggc_ood."""
        gains: dict[int, list[set[str]]] = defaultdict(list)
        for cover, members in self.by_cover.items():
            if not members <= taken:
                gains[len(uncovered & cover)].append(members)
        most = max(gains, default=0)
        if most == 0:
            return None
        best: set[str] = set().union(*gains[most])
        offer = best.intersection(set().union(*(self.offering.get(k, ()) for k in wanted)))
        if not offer <= taken:
            best = offer
        return next(filter(best.__contains__, labels))


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
        # The candidate groups, per (label, setting, view): items of one label share them.
        self.candidates: dict[tuple[str, str, str], Candidates] = {}

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


def candidate_groups(item: CggcItem, index: DemoIndex, spec: DemoSpec) -> Candidates:
    """label -> usable demonstrations (the item's own concept set is skipped when picking)."""
    key = (item.graph_label, spec.setting, spec.structure or ("typed" if spec.typed else "all"))
    if key not in index.candidates:
        index.candidates[key] = _candidate_groups(item, index, spec)
    return index.candidates[key]


def _candidate_groups(item: CggcItem, index: DemoIndex, spec: DemoSpec) -> Candidates:
    if spec.setting == "id":
        labels = {item.graph_label}
    else:
        labels = set().union(*(index.labels_with.get(r, set()) for r in item.relations))
        labels.discard(item.graph_label)
    groups = {label: index.group(label, spec) for label in sorted(labels)}
    return Candidates(
        {label: group for label, group in groups.items() if group.members}, item.relations
    )


def cggc_demonstrations(index: DemoIndex, spec: DemoSpec) -> OrderedDemonstrations[CggcItem]:
    """The pool of ``index`` behind the shared core, with CGGC's rule as its selection."""

    def selection(item: CggcItem, k: int, rng: random.Random) -> list[CggcItem] | None:
        candidates = candidate_groups(item, index, spec)
        picker = _Picker(spec, rng, item.concept_set_idx)
        if spec.packaging is not None:
            return _packaged(item, candidates, picker)
        return _covering(item, candidates, picker)

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

    def missing_types(self) -> tuple[str, ...]:
        if self.spec.order == "random":
            return ()
        return tuple(missing_levels((x.structure for x in self.chosen), STRUCTURE_TYPES))  # type: ignore[arg-type]

    def draw(self, lists: Lists) -> CggcItem | None:
        """A uniform random member of the (non-empty) lists, from a concept set not used
        yet, or None."""
        pools, ends = lists
        if not pools:
            return None
        for _ in range(16):  # cheap tries first: pools are large, conflicts rare
            at = self.rng.randrange(ends[-1])
            which = bisect.bisect_right(ends, at)
            x = pools[which][at - (ends[which - 1] if which else 0)]
            if x.concept_set_idx not in self.sets:
                return x
        fresh = [x for pool in pools for x in pool if x.concept_set_idx not in self.sets]
        return fresh[self.rng.randrange(len(fresh))] if fresh else None

    def pick(self, pools: Pools) -> bool:
        """Take one demonstration from ``pools``' groups, of a missing type if they hold one."""
        choice = self.draw(pools.lists(self.missing_types())) or self.draw(pools.lists())
        if choice is None:
            return False
        self.chosen.append(choice)
        self.sets.add(choice.concept_set_idx)
        return True


@cache
def _primitives(label: str) -> frozenset[str]:
    return frozenset(label.split("&"))


def _covering(item: CggcItem, candidates: Candidates, picker: _Picker) -> list[CggcItem] | None:
    """Greedy cover of the item's primitives (ood): in a random order of the labels, the
    first that shows the most uncovered primitives (and a missing structure type, if one
    does) gives a demonstration; then any candidates up to k."""
    labels = list(candidates.groups)
    fast_shuffle(picker.rng, labels)
    taken: set[str] = set()  # the labels removed from ``labels``
    uncovered = set(item.relations) if picker.spec.setting == "ood" else set()
    while uncovered:
        best = candidates.best_cover(labels, taken, uncovered, picker.missing_types())
        if best is None or len(picker.chosen) >= picker.spec.k:
            return None
        if picker.pick(candidates.groups[best].alone):
            uncovered -= _primitives(best)
        labels.remove(best)
        taken.add(best)
    while len(picker.chosen) < picker.spec.k:
        if not picker.pick(candidates.everything):
            return None
    return picker.chosen


def _packaged(item: CggcItem, candidates: Candidates, picker: _Picker) -> list[CggcItem] | None:
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
        sides = [candidates.showing(frozenset(part)) for part in parts]
        if not all(side.groups for side in sides):
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

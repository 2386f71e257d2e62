"""The compositional split: a demonstration pool and a test set of unseen compositions.

Paper section 4.3 and 5.2: keep compositional graph labels (at least two distinct
relations) with at least five items; test items carry labels that never occur in the pool,
while every primitive relation of a test label does occur in the pool. Table 12 counts the
splits in concept sets (11,591 pool, 7,728 test), so concept sets do not straddle them.

The paper does not say how the test labels were chosen; we draw them at random (seeded)
until the test share of items reaches ``test_fraction`` (0.4, Table 12's share), moving a
label to the test side only while each of its primitives stays in at least one pool label.
A concept set whose references carry both test and pool labels goes to the side holding
most of them (ties: test), and its items with the other side's labels are dropped. Test
labels left with fewer than ``min_items`` items, or with a primitive the final pool lacks,
are dropped too. The relation-verification split (Table 12, left) is not built.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, replace

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.relations import split_label

# Table 12: 7,728 test of 19,319 concept sets, about 0.4 of the items.
TEST_FRACTION = 0.4
# Section 4.3: a compositional graph label is kept with at least five items.
MIN_LABEL_ITEMS = 5


@dataclass(frozen=True)
class Split:
    pool: list[CggcItem]
    test: list[CggcItem]
    pool_labels: set[str]
    test_labels: set[str]
    compositional_items: int  # items with a kept compositional label
    dropped_items: int  # of those, lost to concept sets that straddle pool and test


def compositional(items: list[CggcItem], min_items: int) -> list[CggcItem]:
    """Items whose label has two or more relations and at least ``min_items`` items."""
    counts = Counter(item.graph_label for item in items)
    return [
        item for item in items if len(item.relations) >= 2 and counts[item.graph_label] >= min_items
    ]


def choose_test_labels(counts: Counter[str], seed: int, test_fraction: float) -> set[str]:
    labels = sorted(counts)
    random.Random(f"cggc-split:{seed}").shuffle(labels)
    in_pool = Counter(r for label in labels for r in split_label(label))
    target = test_fraction * sum(counts.values())
    test: set[str] = set()
    test_items = 0
    for label in labels:
        if test_items + counts[label] > target:
            continue
        if all(in_pool[r] >= 2 for r in split_label(label)):
            test.add(label)
            test_items += counts[label]
            in_pool.subtract(split_label(label))
    return test


def split_items(
    items: list[CggcItem],
    seed: int,
    test_fraction: float = TEST_FRACTION,
    min_items: int = MIN_LABEL_ITEMS,
) -> Split:
    """Pool and test items (their ``split`` set) from the compositional items."""
    kept = compositional(items, min_items)
    test_labels = choose_test_labels(Counter(i.graph_label for i in kept), seed, test_fraction)
    by_set: dict[str, list[CggcItem]] = defaultdict(list)
    for item in kept:
        by_set[item.concept_set_idx].append(item)
    pool, test = [], []
    for members in by_set.values():
        on_test = [item for item in members if item.graph_label in test_labels]
        on_pool = [item for item in members if item.graph_label not in test_labels]
        if on_test and len(on_test) >= len(on_pool):
            test.extend(on_test)
        else:
            pool.extend(on_pool)
    test = _valid_test_items(pool, test, min_items)
    test_labels = {item.graph_label for item in test}
    return Split(
        pool=[replace(item, split="train") for item in pool],
        test=[replace(item, split="test") for item in test],
        pool_labels={item.graph_label for item in pool},
        test_labels=test_labels,
        compositional_items=len(kept),
        dropped_items=len(kept) - len(pool) - len(test),
    )


def _valid_test_items(pool: list[CggcItem], test: list[CggcItem], min_items: int) -> list[CggcItem]:
    seen = {r for item in pool for r in item.relations}
    pool_labels = {item.graph_label for item in pool}
    counts = Counter(item.graph_label for item in test)
    return [
        item
        for item in test
        if counts[item.graph_label] >= min_items
        and item.graph_label not in pool_labels
        and set(item.relations) <= seen
    ]


def check_compositional(pool: list[CggcItem], test: list[CggcItem]) -> list[str]:
    """Violations of the compositional constraint (empty when the split is sound)."""
    pool_labels = {item.graph_label for item in pool}
    seen = {r for item in pool for r in item.relations}
    pool_sets = {item.concept_set_idx for item in pool}
    problems = []
    for item in test:
        if item.graph_label in pool_labels:
            problems.append(f"{item.item_id}: label {item.graph_label} occurs in the pool")
        missing = set(item.relations) - seen
        if missing:
            problems.append(f"{item.item_id}: primitives {sorted(missing)} not in the pool")
        if len(item.relations) < 2:
            problems.append(f"{item.item_id}: label {item.graph_label} is not compositional")
        if item.concept_set_idx in pool_sets:
            problems.append(f"{item.item_id}: concept set {item.concept_set_idx} is in the pool")
    return problems

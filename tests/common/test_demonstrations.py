"""The one core that chooses and orders in-context demonstrations (common/demonstrations.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from conceptcomb.common.demonstrations import (
    Difficulty,
    Order,
    OrderedDemonstrations,
    arrange,
    fast_shuffle,
    level_groups,
    order_problems,
    slot_plan,
)
from conceptcomb.common.errors import ConfigError

LEVELS = ("easy", "medium", "hard")
SCALE = Difficulty.of("level", "easy<medium<hard")


def pool(per_level: dict[str, int]) -> list[dict]:
    return [
        {"id": f"{level}-{i}", "level": level} for level, n in per_level.items() for i in range(n)
    ]


def demos(items: list[dict], k: int, order: str = "easy2hard", seed: object = 0, **kw):
    return OrderedDemonstrations(
        items, k=k, order=order, difficulty=kw.pop("difficulty", SCALE), seed=seed,
        id_of=lambda x: x["id"], **kw,
    )  # fmt: skip


def levels_of(chosen: list[dict]) -> list[str]:
    return [x["level"] for x in chosen]


def test_order_names_and_their_one_line_errors() -> None:
    assert Order.parse("easy_to_hard") == Order.parse("easy2hard") == Order("easy2hard")
    assert Order.parse("hard_to_easy").kind == "hard2easy"
    assert Order.parse("level=B") == Order("level", "B")
    assert str(Order.parse("level=B")) == "level=B"
    for bad in ("sideways", "level=", ""):
        with pytest.raises(ConfigError, match="order=") as error:
            Order.parse(bad)
        assert "\n" not in str(error.value)


def test_difficulty_scales() -> None:
    assert Difficulty.of("x", "A<B<C").levels == ("A", "B", "C")
    assert Difficulty.of("x", ["A", "B"]).levels == ("A", "B")
    assert Difficulty.of("x", "1,2,3").rank(2, "doc") == 1.0  # declared numbers are labels
    assert Difficulty.of("x").rank("2.5", "doc") == 2.5
    with pytest.raises(ConfigError, match="distinct"):
        Difficulty.of("x", "A<A")
    with pytest.raises(ConfigError, match="no difficulty field 'level'"):
        SCALE.rank(None, "doc 3")
    with pytest.raises(ConfigError, match="not one of the declared levels"):
        SCALE.rank("trivial", "doc 3")
    with pytest.raises(ConfigError, match="declare the order"):
        Difficulty.of("level").rank("easy", "doc 3")


def test_every_level_once_with_as_many_slots_as_levels() -> None:
    source = demos(pool({"easy": 5, "medium": 5, "hard": 5}), k=3)
    for target in range(50):
        assert levels_of(source.choose(f"t{target}")) == list(LEVELS)


def test_the_extra_slot_goes_to_each_level_equally_often() -> None:
    """3 levels, 4 slots: each level at least once, the 4th to a level drawn at random."""
    source = demos(pool({"easy": 30, "medium": 6, "hard": 6}), k=4)
    extra = Counter()
    for target in range(600):
        shown = levels_of(source.choose(f"t{target}"))
        assert set(shown) == set(LEVELS) and shown == sorted(shown, key=LEVELS.index)
        extra.update(level for level, n in Counter(shown).items() if n == 2)
    assert sum(extra.values()) == 600
    assert all(150 <= extra[level] <= 250 for level in LEVELS), extra  # ~200 each


def test_a_short_level_gives_its_slots_to_the_others() -> None:
    source = demos(pool({"easy": 1, "medium": 9, "hard": 9}), k=7)
    for target in range(20):
        counts = Counter(levels_of(source.choose(f"t{target}")))
        assert counts["easy"] == 1 and sorted((counts["medium"], counts["hard"])) == [3, 3]


def test_more_levels_than_slots_span_the_range() -> None:
    """A continuous score: 100 levels, 4 slots, one demonstration from each quarter."""
    items = [{"id": f"d{i}", "score": i / 10} for i in range(100)]
    source = demos(items, k=4, difficulty=Difficulty.of("score"))
    seen = set()
    for target in range(30):
        scores = [x["score"] for x in source.choose(f"t{target}")]
        assert [int(s * 10) // 25 for s in scores] == [0, 1, 2, 3], scores
        seen.add(tuple(scores))
    assert len(seen) > 20  # and the draw varies with the item
    assert level_groups(5, 3) == [range(0, 2), range(2, 4), range(4, 5)]


def test_never_the_target_itself() -> None:
    items = pool({"easy": 2, "medium": 2, "hard": 2})
    source = demos(items, k=5)
    for item in items:
        shown = [x["id"] for x in source.choose(item["id"])]
        assert item["id"] not in shown and len(shown) == len(set(shown)) == 5
    with pytest.raises(ConfigError, match="fewer than k=6"):
        demos(items, k=6).choose("easy-0")


def test_seeded_per_item_and_independent_of_the_pool_order() -> None:
    items = pool({"easy": 20, "medium": 20, "hard": 20})
    shuffled = list(items)
    random.Random(5).shuffle(shuffled)
    first, again, reordered = demos(items, 3), demos(items, 3), demos(shuffled, 3)
    other_seed = demos(items, 3, seed=1)
    targets = [f"t{i}" for i in range(20)]
    assert [first.choose(t) for t in targets] == [again.choose(t) for t in targets]
    assert [first.choose(t) for t in targets] == [reordered.choose(t) for t in targets]
    assert [first.choose(t) for t in targets] != [other_seed.choose(t) for t in targets]
    assert len({tuple(x["id"] for x in first.choose(t)) for t in targets}) > 10


def test_the_orders_show_the_same_demonstrations() -> None:
    items = pool({"easy": 10, "medium": 10, "hard": 10})
    shown = {order: demos(items, 5, order).choose("q1") for order in ("easy2hard", "hard2easy")}
    shown["random"] = demos(items, 5, "random").choose("q1")
    rank = {level: i for i, level in enumerate(LEVELS)}
    ids = {order: sorted(x["id"] for x in chosen) for order, chosen in shown.items()}
    assert ids["easy2hard"] == ids["hard2easy"] == ids["random"]
    assert order_problems([rank[x] for x in levels_of(shown["easy2hard"])], Order()) == []
    ranks = [rank[x] for x in levels_of(shown["hard2easy"])]
    assert order_problems(ranks, Order("hard2easy")) == [] and ranks[0] > ranks[-1]
    assert order_problems([0, 2, 1], Order()) != []


def test_one_level_only() -> None:
    items = pool({"easy": 3, "medium": 5, "hard": 3})
    chosen = demos(items, 4, "level=medium").choose("q")
    assert levels_of(chosen) == ["medium"] * 4
    with pytest.raises(ConfigError, match="level=trivial"):
        demos(items, 2, "level=trivial")
    with pytest.raises(ConfigError, match="no demonstration of that level"):
        demos(pool({"easy": 3, "hard": 3}), 2, "level=medium")
    with pytest.raises(ConfigError, match="holds 3 of level=hard"):
        demos(items, 4, "level=hard")


def test_bad_pools_fail_up_front_naming_the_field_or_option() -> None:
    items = pool({"easy": 2, "medium": 2})
    with pytest.raises(ConfigError, match="k=5 demonstrations asked for, but the pool holds 4"):
        demos(items, 5)
    with pytest.raises(ConfigError, match="k=0"):
        demos(items, 0)
    broken = [*items, {"id": "x"}]
    with pytest.raises(ConfigError, match="demonstration 4: no difficulty field 'level'"):
        demos(broken, 2)
    with pytest.raises(ConfigError, match="ordering needs a difficulty field"):
        demos(items, 2, difficulty=Difficulty(None))


def test_random_order_needs_no_difficulty() -> None:
    items = [{"id": str(i)} for i in range(10)]
    chosen = demos(items, 10 - 1, "random", difficulty=Difficulty(None)).choose("3")
    assert sorted(x["id"] for x in chosen) == [str(i) for i in range(10) if i != 3]


def test_a_benchmarks_own_selection_is_ordered_here() -> None:
    """CGGC's rule: the benchmark picks, the core seeds the generator and orders."""
    items = pool({"easy": 3, "medium": 3, "hard": 3})
    calls = []

    def selection(target, k, rng):
        calls.append((target, k))
        return None if target == "none" else [items[8], items[0], items[4]][:k]

    source = demos(items, 3, selection=selection)
    assert levels_of(source.choose("q", "the target")) == list(LEVELS)
    assert source.choose("none", "none") is None
    assert calls == [("the target", 3), ("none", 3)]
    source.choose("q", "the target")  # remembered: no second call
    assert len(calls) == 2


def test_slot_plan_and_arrange() -> None:
    rng = random.Random(0)
    assert slot_plan([5, 5, 5], 6, rng) == [2, 2, 2]
    assert sorted(slot_plan([1, 9, 9], 5, rng)) == [1, 2, 2]
    shown = arrange([3, 1, 2, 1], float, Order(), random.Random(1))
    assert shown == [1, 1, 2, 3]
    assert arrange([3, 1, 2], float, Order("hard2easy"), random.Random(1)) == [3, 2, 1]


def test_fast_shuffle_is_random_shuffle() -> None:
    """The same order and the same generator state after it as ``Random.shuffle`` (which
    the demonstrations of CGGC's tasks, hashed by their bundles, were drawn with), by the
    inlined path on this Python."""
    from conceptcomb.common import demonstrations

    assert demonstrations._INLINE_SHUFFLE_AGREES
    for seed in range(50):
        for size in (0, 1, 2, 3, 4, 5, 31, 32, 33, 370, 1025):
            ours, theirs = random.Random(seed), random.Random(seed)
            mine, reference = [f"x{i}" for i in range(size)], [f"x{i}" for i in range(size)]
            fast_shuffle(ours, mine)
            theirs.shuffle(reference)
            assert mine == reference
            assert ours.getstate() == theirs.getstate()

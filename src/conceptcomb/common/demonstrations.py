"""Ordered in-context demonstrations: choose k from a pool by difficulty, then order them.

The one place where demonstrations are spread over difficulty levels and ordered; the
lm-eval sampler (`conceptcomb.frameworks.lm_eval_sampler`), the Inspect solver
(`conceptcomb.frameworks.inspect_fewshot`), CGGC and AbsPyramid all call it.

* Difficulty: a field of each candidate holding a number, or a label whose order is
  declared (``A < B < C``, easiest first). Pools without one (``order=random``) are a
  single level.
* Orders: ``easy2hard``, ``hard2easy``, ``random``, and ``level=<x>`` (all from one level).
  The three first show the *same* demonstrations (only their order differs), so a run
  compares orders, not draws.
* Spread: with L levels among the candidates and k slots, the slots are shared out as
  evenly as the pool allows. L <= k: each level gets k // L, and the k % L extra slots go
  to levels drawn at random (seeded), so that over a test set every level gets k / L of
  the slots on average (the paper's A, B, C with 4 slots: A-B-C plus one more of a random
  type; no level is favoured by construction); a level with too few candidates gives its
  slots to the others. L > k: the levels, easiest first, are cut into k contiguous groups
  of near-equal size and each slot draws from one group, so the demonstrations span the
  whole range even with a continuous difficulty score.
* Never the target: a candidate with the target's id is never shown.
* Reproducible: one random generator per target, seeded by (seed, target id), draws the
  demonstrations and breaks ties of order; within a level candidates are taken in id
  order first, so the draw does not depend on the order of the pool (lm-eval and Inspect
  show an item the same demonstrations for the same seed).

A benchmark with its own rule (CGGC: demonstrations must cover the item's primitive
relations) passes a `Selection`; the generator, the order and its checks stay here.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.results_reader import finite_number

T = TypeVar("T")

EASY2HARD, HARD2EASY, RANDOM, LEVEL = "easy2hard", "hard2easy", "random", "level"
ORDER_NAMES = {
    "easy2hard": EASY2HARD,
    "easy_to_hard": EASY2HARD,
    "hard2easy": HARD2EASY,
    "hard_to_easy": HARD2EASY,
    "random": RANDOM,
    "none": RANDOM,
}
ORDER_HINT = "use easy2hard, hard2easy, random or level=<x>"


@dataclass(frozen=True)
class Order:
    """How the chosen demonstrations are shown: by difficulty, shuffled, or one level only."""

    kind: str = EASY2HARD
    level: str | None = None  # the level of ``level=<x>``

    @classmethod
    def parse(cls, value: str | Order, option: str = "order") -> Order:
        """``easy2hard`` (or ``easy_to_hard``), ``hard2easy``, ``random``, ``level=B``."""
        if isinstance(value, Order):
            return value
        text = str(value).strip()
        if text.lower().startswith("level="):
            level = text.split("=", 1)[1].strip()
            if not level:
                raise ConfigError(f"{option}={value!r}: name the level, e.g. level=easy.")
            return cls(LEVEL, level)
        kind = ORDER_NAMES.get(text.lower())
        if kind is None:
            raise ConfigError(f"{option}={value!r}: unknown order; {ORDER_HINT}.")
        return cls(kind)

    def __str__(self) -> str:
        return f"level={self.level}" if self.kind == LEVEL else self.kind


@dataclass(frozen=True)
class Difficulty:
    """Where a candidate's difficulty is and how it ranks: numbers, or declared labels."""

    field: str | None = "difficulty"  # None: no difficulty, every candidate one level
    levels: tuple[str, ...] | None = None  # labels, easiest first; None: numeric values

    @classmethod
    def of(cls, field: str | None, levels: str | Iterable[Any] | None = None) -> Difficulty:
        """``levels`` as a list or as text: ``"A<B<C"`` or ``"A,B,C"`` (easiest first)."""
        if levels is None or levels == "":
            return cls(field or None, None)
        if isinstance(levels, str):
            separator = "<" if "<" in levels else ","
            names = tuple(part.strip() for part in levels.split(separator))
        else:
            names = tuple(str(level).strip() for level in levels)
        if not all(names) or len(set(names)) != len(names):
            raise ConfigError(
                f"levels={levels!r}: list distinct level names, easiest first (e.g. A<B<C)."
            )
        return cls(field or None, names)

    def rank(self, value: Any, where: str) -> float:
        """The rank of a difficulty value (higher is harder); a clear error naming the field."""
        if self.field is None:
            return 0.0
        if value is None:
            raise ConfigError(
                f"{where}: no difficulty field {self.field!r}; add it to every candidate "
                "(e.g. with process_docs) or name the field that holds the difficulty."
            )
        if self.levels is not None:
            label = _label(value)
            if label not in self.levels:
                raise ConfigError(
                    f"{where}: difficulty {self.field}={value!r} is not one of the declared "
                    f"levels {' < '.join(self.levels)}; declare it or fix the value."
                )
            return float(self.levels.index(label))
        number = finite_number(value)
        if number is None:
            raise ConfigError(
                f"{where}: difficulty {self.field}={value!r} is not a number; declare the "
                "order of the labels (levels, e.g. easy<medium<hard)."
            )
        return number

    def level_rank(self, level: str, option: str = "order") -> float:
        """The rank of the level named by ``level=<x>``."""
        if self.field is None:
            raise ConfigError(f"{option}=level={level}: name the difficulty field first.")
        if self.levels is not None:
            if level not in self.levels:
                raise ConfigError(
                    f"{option}=level={level}: not a declared level ({', '.join(self.levels)})."
                )
            return float(self.levels.index(level))
        number = finite_number(level)
        if number is None:
            raise ConfigError(f"{option}=level={level}: the difficulty is numeric; name a number.")
        return number

    def describe(self, rank: float) -> str:
        if self.levels is not None:
            return self.levels[int(rank)]
        return f"{rank:g}"


def _label(value: Any) -> str:
    """A label as text: ``2`` and ``2.0`` both read as ``"2"``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def item_rng(seed: Any, item_id: Any, *context: Any) -> random.Random:
    """The generator of one target's draw: seeded by (seed, item id, context...)."""
    return random.Random("|".join(str(part) for part in (seed, item_id, *context)))


def fast_shuffle(rng: random.Random, x: list[Any]) -> None:
    """``rng.shuffle(x)``: the same order and the same state of ``rng`` after it, 3x as fast
    for lists of hundreds (CGGC shuffles the candidate labels of every item: 32,334 lists
    of ~370 for cggc_ood), by inlining CPython's `random.Random.shuffle` and its
    ``_randbelow``. On a Python whose `random` draws otherwise (`_INLINE_SHUFFLE_AGREES`,
    checked once), ``rng.shuffle``."""
    if not _INLINE_SHUFFLE_AGREES:
        rng.shuffle(x)
        return
    _inline_shuffle(rng, x)


def _inline_shuffle(rng: random.Random, x: list[Any]) -> None:
    getrandbits = rng.getrandbits
    for i in range(len(x) - 1, 0, -1):
        bound = i + 1
        bits = bound.bit_length()
        j = getrandbits(bits)
        while j >= bound:  # _randbelow_with_getrandbits: rejection sampling
            j = getrandbits(bits)
        x[i], x[j] = x[j], x[i]


def _inline_agrees() -> bool:
    """Whether `_inline_shuffle` gives what ``Random.shuffle`` gives, state after included."""
    for seed, size in itertools.product(range(8), (0, 1, 2, 3, 17, 300)):
        ours, theirs = random.Random(f"check|{seed}"), random.Random(f"check|{seed}")
        mine, reference = list(range(size)), list(range(size))
        _inline_shuffle(ours, mine)
        theirs.shuffle(reference)
        if mine != reference or ours.getrandbits(64) != theirs.getrandbits(64):
            return False
    return True


_INLINE_SHUFFLE_AGREES = _inline_agrees()


def arrange(
    chosen: Sequence[T], rank: Callable[[T], float], order: Order, rng: random.Random
) -> list[T]:
    """Shuffle, then sort by difficulty for the ordered kinds (ties keep the shuffled order)."""
    shown = list(chosen)
    rng.shuffle(shown)
    if order.kind == EASY2HARD:
        shown.sort(key=rank)
    elif order.kind == HARD2EASY:
        shown.sort(key=rank, reverse=True)
    return shown


def order_problems(ranks: Sequence[float], order: Order) -> list[str]:
    """What is wrong with the order of shown demonstrations' ranks (tests and logs use it)."""
    if order.kind == EASY2HARD and list(ranks) != sorted(ranks):
        return [f"not easy to hard: {list(ranks)}"]
    if order.kind == HARD2EASY and list(ranks) != sorted(ranks, reverse=True):
        return [f"not hard to easy: {list(ranks)}"]
    return []


def missing_levels(shown: Iterable[Hashable], levels: Sequence[Hashable]) -> list[Hashable]:
    """The levels (in their order) that no shown demonstration has yet."""
    present = set(shown)
    return [level for level in levels if level not in present]


def slot_plan(sizes: Sequence[int], k: int, rng: random.Random) -> list[int]:
    """How many of k slots each level (easiest first, ``sizes`` candidates each) gets.

    As even as the sizes allow: each slot goes to a level with a free candidate and the
    fewest slots so far, ties drawn at random. Callers make sure ``sum(sizes) >= k``.
    """
    quota = [0] * len(sizes)
    for _ in range(k):
        free = [i for i, size in enumerate(sizes) if quota[i] < size]
        fewest = min(quota[i] for i in free)
        quota[rng.choice([i for i in free if quota[i] == fewest])] += 1
    return quota


def level_groups(count: int, k: int) -> list[range]:
    """``count`` levels (easiest first) cut into k contiguous groups of near-equal size."""
    base, extra = divmod(count, k)
    groups, start = [], 0
    for index in range(k):
        end = start + base + (1 if index < extra else 0)
        groups.append(range(start, end))
        start = end
    return groups


Selection = Callable[[Any, int, random.Random], "list[Any] | None"]
"""A benchmark's own choice of k demonstrations for a target (the target, k, the target's
generator) -> the chosen candidates, or None when the pool cannot serve that target."""


class OrderedDemonstrations(Generic[T]):
    """A checked pool of candidates with their difficulty, ready to serve any target.

    Every candidate's difficulty is read and checked here, before any model is called, so a
    missing field, an unknown order, k larger than the pool or an empty level is one error
    naming the option.
    """

    def __init__(
        self,
        pool: Sequence[T],
        *,
        k: int,
        order: Order | str = EASY2HARD,
        difficulty: Difficulty | None = None,
        seed: Any = 0,
        id_of: Callable[[T], Any],
        value_of: Callable[[T, str], Any] | None = None,
        where: Callable[[int], str] = lambda index: f"demonstration {index}",
        selection: Selection | None = None,
        rng_context: tuple[Any, ...] = (),
        option: str = "order",
    ) -> None:
        self.order = Order.parse(order, option)
        self.difficulty = difficulty or Difficulty(None)
        self.seed, self.id_of, self.selection, self.rng_context = (
            seed,
            id_of,
            selection,
            rng_context,
        )
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigError(f"k={k!r}: the number of demonstrations must be a positive integer.")
        self.k, self.option = k, option
        if self.order.kind != RANDOM and self.difficulty.field is None:
            raise ConfigError(
                f"{option}={self.order}: ordering needs a difficulty field; name it, or use "
                "order=random."
            )
        self._read = value_of or _field_value
        self.pool = list(pool)
        self._chosen: dict[str, list[T] | None] = {}
        self._rank: dict[int, float] = {}
        if selection is not None:  # the benchmark's rule decides; ranks read when ordering
            return
        self._rank = {id(x): self._read_rank(x, where(i)) for i, x in enumerate(self.pool)}
        self._levels = self._by_level()
        self._level_of = {
            str(id_of(x)): index for index, level in enumerate(self._levels) for x in level
        }
        self._check_size(option)

    def _read_rank(self, candidate: T, where: str) -> float:
        return self.difficulty.rank(self._read(candidate, self.difficulty.field or ""), where)

    def rank(self, candidate: T) -> float:
        """A candidate's rank (checked up front for the pool; read for a `Selection`'s)."""
        known = self._rank.get(id(candidate))
        if known is not None:
            return known
        return self._read_rank(candidate, f"demonstration {self.id_of(candidate)}")

    def _by_level(self) -> list[list[T]]:
        """Candidates per level, easiest first; one level for ``level=<x>``, in id order."""
        levels: dict[float, list[T]] = {}
        for x in self.pool:
            levels.setdefault(self.rank(x), []).append(x)
        if self.order.kind == LEVEL:
            assert self.order.level is not None
            wanted = self.difficulty.level_rank(self.order.level, self.option)
            levels = {wanted: levels.get(wanted, [])}
        return [sorted(levels[r], key=lambda x: str(self.id_of(x))) for r in sorted(levels)]

    def _check_size(self, option: str) -> None:
        available = sum(len(level) for level in self._levels)
        if self.order.kind == LEVEL and available == 0:
            raise ConfigError(
                f"{option}={self.order}: no demonstration of that level in the pool of "
                f"{len(self.pool)}; pick a level the pool has."
            )
        if self.k > available:
            where = f" of {self.order}" if self.order.kind == LEVEL else ""
            raise ConfigError(
                f"k={self.k} demonstrations asked for, but the pool holds {available}{where}: "
                "ask for fewer (e.g. --num_fewshot) or give a larger pool."
            )

    def rng(self, target_id: Any) -> random.Random:
        return item_rng(self.seed, target_id, *self.rng_context)

    def choose(self, target_id: Any, target: Any = None) -> list[T] | None:
        """The target's demonstrations in the order they are shown (None: a `Selection`
        found no valid set for it). Remembered per target: a dataset that skips the targets
        the pool cannot serve and the solver that shows them pay for one draw."""
        key = str(target_id)
        if key not in self._chosen:
            self._chosen[key] = self._choose(target_id, target)
        chosen = self._chosen[key]
        return None if chosen is None else list(chosen)

    def _choose(self, target_id: Any, target: Any) -> list[T] | None:
        rng = self.rng(target_id)
        if self.selection is not None:
            chosen = self.selection(target, self.k, rng)
            if chosen is None:
                return None
        else:
            chosen = self._spread(str(target_id), rng)
        return arrange(chosen, self.rank, self.order, rng)

    def _spread(self, target_id: str, rng: random.Random) -> list[T]:
        levels = list(self._levels)
        home = self._level_of.get(target_id)
        if home is not None:  # the target is in the pool: never its own demonstration
            levels[home] = [x for x in levels[home] if str(self.id_of(x)) != target_id]
        levels = [level for level in levels if level]
        if sum(map(len, levels)) < self.k:
            raise ConfigError(
                f"item {target_id}: the pool holds {sum(map(len, levels))} demonstrations "
                f"other than the item itself, fewer than k={self.k}; ask for fewer."
            )
        if len(levels) > self.k:
            groups = level_groups(len(levels), self.k)
            return [rng.choice([x for i in group for x in levels[i]]) for group in groups]
        quota = slot_plan([len(level) for level in levels], self.k, rng)
        return [x for level, n in zip(levels, quota, strict=True) for x in rng.sample(level, n)]


def _field_value(candidate: Any, field: str) -> Any:
    """A mapping's field (lm-eval docs, Inspect metadata)."""
    return candidate.get(field) if hasattr(candidate, "get") else getattr(candidate, field, None)

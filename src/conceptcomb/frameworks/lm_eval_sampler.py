"""lm-eval: ordered demonstrations for any task YAML (`OrderedSampler` and its named orders).

::

    fewshot_split: train
    fewshot_config:
      sampler: !function conceptcomb.samplers.EasyToHard
    metadata:
      fewshot_difficulty: level            # the doc field of the difficulty ("difficulty")
      fewshot_levels: easy<medium<hard     # labels, easiest first (omit for numbers)
      fewshot_id: id                       # the doc field of the item id ("id")

``--num_fewshot`` is k, lm-eval's few-shot seed (``--seed``'s fourth value, 1234 by
default) seeds the draw, and ``--metadata '{"fewshot_order": "hard2easy"}'`` (or
``level=<x>``, ``random``) overrides the class's order without editing the YAML. The
choice itself is `conceptcomb.common.demonstrations`; ``--log_samples`` shows it in each
sample's prompt (lm-eval logs the docs as loaded, not as the sampler saw them).

lm-eval 0.4.13 hands a sampler the evaluated doc only when ``fewshot_split`` equals
``test_split``; ordering per item needs the item whatever the split, so the sampler reads
it, and the task's metadata, from the `ConfigurableTask.fewshot_context` call that asked
for the demonstrations (`evaluated_doc`). pyproject bounds lm-eval to the versions where
that holds, and a test runs it through the real ``lm_eval``.
"""

from __future__ import annotations

import logging
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval.api.samplers import ContextSampler

from conceptcomb.common.collector import collector_paused
from conceptcomb.common.demonstrations import (
    EASY2HARD,
    HARD2EASY,
    RANDOM,
    Difficulty,
    Order,
    OrderedDemonstrations,
)
from conceptcomb.common.errors import ConfigError, DataUnavailableError

log = logging.getLogger("conceptcomb")
DIFFICULTY, LEVELS, ORDER, ID = (
    "fewshot_difficulty",
    "fewshot_levels",
    "fewshot_order",
    "fewshot_id",
)
SETTINGS = (DIFFICULTY, LEVELS, ORDER, ID)


def evaluated_doc(eval_doc: dict[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    """(the task, the doc) that lm-eval is building a few-shot context for."""
    frame = sys._getframe(1)
    for _ in range(8):  # sample() <- fewshot_context(), maybe through a subclass's super()
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            break
        if frame.f_code.co_name == "fewshot_context" and "doc" in frame.f_locals:
            task = frame.f_locals.get("self")
            if hasattr(task, "config"):
                return task, eval_doc if eval_doc is not None else frame.f_locals["doc"]
    raise ConfigError(
        "conceptcomb's few-shot samplers are called by lm-eval's ConfigurableTask."
        "fewshot_context; this lm-eval calls them otherwise: use lm-eval >=0.4.13,<0.5."
    )


def _doc_id(doc: Mapping[str, Any], field: str, where: str) -> Any:
    if field not in doc:
        raise ConfigError(
            f"{where}: no id field {field!r}; give every doc an id (e.g. with process_docs) "
            f"or name the field that holds it ({ID} in the task's metadata)."
        )
    return doc[field]


class OrderedSampler(ContextSampler):
    """Demonstrations chosen per evaluated doc, spread over difficulty levels and ordered."""

    default_order = EASY2HARD

    def __init__(self, df: Sequence[dict[str, Any]] | None = None, *, rnd: Any = None, **kw: Any):
        super().__init__(df, rnd=rnd, **kw)
        self.seed: Any = rnd
        self._prepared: dict[tuple[int, int], OrderedDemonstrations] = {}
        self._settings: dict[int, dict[str, Any]] = {}  # per task: read once, not per doc

    def set_rnd(self, rnd: Any) -> OrderedSampler:
        """lm-eval's few-shot seed; None (``--seed ...,None``) draws one, which is logged."""
        if rnd is None:
            rnd = random.SystemRandom().randrange(2**31)
            log.warning("few-shot seed None: demonstrations drawn with seed %d", rnd)
        self.seed = rnd
        self._prepared.clear()
        super().set_rnd(rnd)
        return self

    def replace_df(self, df: Sequence[dict[str, Any]]) -> OrderedSampler:
        self._prepared.clear()
        super().replace_df(df)
        return self

    def sample(
        self,
        n: int,
        eval_doc: dict[str, Any] | None = None,
        df: Sequence[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        if n == 0:
            return []
        task, doc = evaluated_doc(eval_doc)
        key = (id(task), n)
        if key not in self._prepared:
            with collector_paused():  # the pool: ~22k docs for CGGC (common.collector)
                self._prepared[key] = self.prepare(task, doc, n)
        chosen = self.choose(self._prepared[key], task, doc)
        if chosen is None:
            raise DataUnavailableError(
                f"{task.config.task}: item {self.target_id(task, doc)} cannot get {n} valid "
                "demonstrations from its few-shot split."
            )
        return chosen

    # What a benchmark's subclass may change (CGGC: its own selection rule).

    def settings(self, task: Any) -> dict[str, Any]:
        """The ``fewshot_*`` settings of the task's metadata (YAML and ``--metadata``)."""
        if id(task) not in self._settings:
            self._settings[id(task)] = self._read_settings(task)
        return self._settings[id(task)]

    def _read_settings(self, task: Any) -> dict[str, Any]:
        metadata = dict(getattr(task.config, "metadata", None) or {})
        unknown = sorted(k for k in metadata if k.startswith("fewshot_") and k not in SETTINGS)
        if unknown:
            raise ConfigError(
                f"{task.config.task}: unknown metadata {', '.join(unknown)}; the sampler reads "
                f"{', '.join(SETTINGS)}."
            )
        return {key: metadata[key] for key in SETTINGS if metadata.get(key) not in (None, "")}

    def choose(
        self, demonstrations: OrderedDemonstrations, task: Any, doc: dict[str, Any]
    ) -> list[dict[str, Any]] | None:
        """The few-shot docs shown before ``doc``, in their order."""
        return demonstrations.choose(self.target_id(task, doc), doc)

    def target_id(self, task: Any, doc: Mapping[str, Any]) -> Any:
        field = str(self.settings(task).get(ID, "id"))
        return _doc_id(doc, field, f"{task.config.task}: evaluated doc")

    def prepare(self, task: Any, doc: Mapping[str, Any], n: int) -> OrderedDemonstrations:
        """The checked pool of the docs lm-eval handed over, for k = n."""
        settings = self.settings(task)
        name, split = task.config.task, task.config.fewshot_split
        pool: list[dict[str, Any]] = list(self.fewshot_docs())
        if not pool:
            raise ConfigError(f"{name}: the few-shot split {split!r} is empty.")
        id_field = str(settings.get(ID, "id"))
        for index, x in enumerate(pool):
            _doc_id(x, id_field, f"{name}: few-shot doc {index} (split {split})")
        option = f"{name}: {ORDER}"
        order = Order.parse(str(settings.get(ORDER, self.default_order)), option)
        # random order with no field named: spread over "difficulty" if the docs have it (the
        # demonstrations of easy2hard, shuffled), else a plain draw
        plain = order.kind == RANDOM and "difficulty" not in pool[0]
        field = settings.get(DIFFICULTY, None if plain else "difficulty")
        return OrderedDemonstrations(
            pool,
            k=n,
            order=order,
            difficulty=Difficulty.of(field, settings.get(LEVELS)),
            seed=self.seed,
            id_of=lambda x: x[id_field],
            where=lambda index: f"{name}: few-shot doc {index} (split {split})",
            option=option,
        )


class EasyToHard(OrderedSampler):
    """Demonstrations from easiest to hardest."""


class HardToEasy(OrderedSampler):
    """Demonstrations from hardest to easiest (the same ones as `EasyToHard`, reversed)."""

    default_order = HARD2EASY


class RandomOrder(OrderedSampler):
    """The same demonstrations as `EasyToHard`, shuffled (with no difficulty field: a plain
    seeded draw per item)."""

    default_order = RANDOM

"""Easy-to-hard (and other ordered) in-context demonstrations for your own tasks.

lm-eval (any task YAML)::

    fewshot_config:
      sampler: !function conceptcomb.samplers.EasyToHard   # or HardToEasy, RandomOrder,
                                                           # OrderedSampler (order from metadata)

Inspect (any ``@task``)::

    from conceptcomb.samplers import fewshot_pool, ordered_fewshot
    solver=[ordered_fewshot(fewshot_pool("train.jsonl", difficulty="level"), k=3, ...), generate()]

The choice and the order come from one framework-free core,
`conceptcomb.common.demonstrations`; the names here load their framework only when used,
so an Inspect user never imports lm-eval and the other way round.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "OrderedSampler": "conceptcomb.frameworks.lm_eval_sampler",
    "EasyToHard": "conceptcomb.frameworks.lm_eval_sampler",
    "HardToEasy": "conceptcomb.frameworks.lm_eval_sampler",
    "RandomOrder": "conceptcomb.frameworks.lm_eval_sampler",
    "ordered_fewshot": "conceptcomb.frameworks.inspect_fewshot",
    "fewshot_pool": "conceptcomb.frameworks.inspect_fewshot",
    "OrderedDemonstrations": "conceptcomb.common.demonstrations",
    "Difficulty": "conceptcomb.common.demonstrations",
    "Order": "conceptcomb.common.demonstrations",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


def __dir__() -> list[str]:
    return __all__

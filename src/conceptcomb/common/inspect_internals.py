# inspect-evals-lint: ignore-file[private_api_imports] -- the one reader of them (see below)
"""The only place conceptcomb reads Inspect's private modules (``inspect_ai.*._*``).

Each use is here because no public API of Inspect answers the question, with what we lose
if a release of Inspect moves it. Each import is guarded: on an Inspect that moved it, a
public fallback answers instead, after one warning line naming the supported range
(`SUPPORTED_INSPECT`, pinned in pyproject.toml). `tests/common/test_inspect_internals.py`
fails loudly on an installed Inspect that changed any of them, checks each fallback, and
keeps every other module of the package off Inspect's private names. Imports happen
inside the functions: only Inspect runs call them, and importing this module costs nothing.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("conceptcomb")

# The Inspect releases whose private names below were checked (pyproject.toml pins the same
# range; tests/common/test_inspect_internals.py checks each name on the installed one).
SUPPORTED_INSPECT = "inspect-ai>=0.3.285,<0.4"


def _moved(name: str, fallback: str) -> None:
    """One line, once per name, when an Inspect release moved a private name we read."""
    if name not in _WARNED:
        _WARNED.add(name)
        log.warning(
            "conceptcomb: this Inspect has no %s (conceptcomb supports %s); %s",
            name,
            SUPPORTED_INSPECT,
            fallback,
        )


_WARNED: set[str] = set()


def openai_chat_base_url(model: Any) -> str | None:
    """The base URL of an Inspect model that sends OpenAI chat completions (``openai/...``
    or ``openai-api/<service>/...``), as lm-eval's judge does; None for any other model
    (another protocol, the Responses API, Azure, Bedrock, a local model).

    Why private: Inspect's public `Model` does not say which wire protocol its provider
    speaks nor where it sends it. Without this, an Inspect grader and lm-eval's judge at the
    same endpoint get different judge identities and stop sharing the judge cache. On an
    Inspect that moved these classes, the public fallback (`_public_openai_chat_base_url`)
    answers, with one warning line."""
    try:
        from inspect_ai.model._providers.openai import OpenAIAPI
        from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI
    except ImportError:
        _moved("inspect_ai.model._providers.openai*", "the judge's endpoint is read by name")
        return _public_openai_chat_base_url(model)

    api: Any = model.api
    if not isinstance(api, OpenAIAPI | OpenAICompatibleAPI) or getattr(api, "responses_api", None):
        return None
    if isinstance(api, OpenAIAPI) and (api.is_azure() or api.is_bedrock()):
        return None
    base_url = getattr(getattr(api, "client", None), "base_url", None)
    return str(base_url) if base_url else None


def server_url_given(model: Any) -> bool:
    """Whether a model whose provider starts its own server (``vllm/...``) was given a running
    one with ``--model-base-url``, which Inspect hands the provider as its ``base_url`` (not a
    ``-M`` argument: ``-M base_url`` beside it is a TypeError). Why private: the provider
    keeps it as ``_init_base_url`` until its server starts; the public `Model` does not say."""
    return bool(getattr(getattr(model, "api", None), "_init_base_url", None))


def _public_openai_chat_base_url(model: Any) -> str | None:
    """The fallback from public names only: the provider from the model's name
    (``openai/...``, ``openai-api/...``) and `ModelAPI.base_url`. What it cannot tell apart:
    an Azure or Bedrock deployment behind ``openai/`` (their hosts are refused by name)."""
    provider = str(model).split("/", 1)[0]
    api: Any = model.api
    base_url = getattr(api, "base_url", None)
    if provider not in ("openai", "openai-api") or getattr(api, "responses_api", None):
        return None
    if not base_url or any(host in str(base_url) for host in ("azure", "amazonaws")):
        return None
    return str(base_url).rstrip("/") + "/"  # as the openai client's base_url reads (httpx)


def run_seed() -> int | None:
    """The ``--seed`` of the Inspect run this is called in (None without one, or outside a
    run).

    Why private: Inspect exposes the run's generate config only internally. Without it, the
    multi-oracle's N draws of a seeded run lose their distinct seeds (N identical replies).
    On an Inspect that moved it, the seed comes from the evaluated model's public
    config (`_public_run_seed`), with one warning line."""
    try:
        from inspect_ai.model._generate_config import active_generate_config
    except ImportError:
        _moved("inspect_ai.model._generate_config", "the run's seed is read from its model")
        return _public_run_seed()
    try:
        return active_generate_config().seed
    except LookupError:  # no run active
        return None


def _public_run_seed() -> int | None:
    """The fallback from public names only: the seed of the model under evaluation's
    config (Inspect gives it the run's generate options), None outside a run."""
    from inspect_ai.model import get_model

    try:
        return get_model().config.seed
    except ValueError:  # no model: not in a run
        return None


def in_eval() -> bool:
    """Whether an Inspect eval is building this task (it has set the model under evaluation).

    Why private: Inspect has no public way to ask whether an eval is running. Without it,
    the judge's checks wait for the run instead of failing the task before generation,
    which is also what this answers on an Inspect that moved it."""
    try:
        from inspect_ai.model._model import active_model
    except ImportError:  # a later Inspect: checks then wait for the run, as outside an eval
        _moved("inspect_ai.model._model.active_model", "the judge is checked when it runs")
        return False
    return active_model() is not None


def register_scorer(factory: Any, name: str) -> None:
    """Register ``factory`` as the scorer ``conceptcomb/<name>`` (what ``inspect score LOG
    --scorer conceptcomb/<name> -S ...`` creates), keeping the metrics each scorer it
    returns was built with.

    Why private: the public ``@scorer`` decorator gives every scorer of a name the one
    metric list it was given, while a CCPT task's metrics depend on the task (E or C, the
    multi-oracle's). Registered with `scorer_register`, a factory's scorers keep their own
    metrics (Inspect's registry then names them after the factory). On an Inspect that
    moved it, the public decorator registers the factory without metrics (scores are
    written, their means not shown), with one warning line."""
    try:
        from inspect_ai.scorer._scorer import scorer_register
    except ImportError:
        from inspect_ai.scorer import scorer

        _moved("inspect_ai.scorer._scorer.scorer_register", "re-scored logs show no metrics")
        scorer(metrics=[], name=name)(factory)
        return
    scorer_register(factory, name=f"conceptcomb/{name}")

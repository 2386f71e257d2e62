"""The only place conceptcomb reads Inspect's private modules (``inspect_ai.*._*``).

Each use is here because no public API of Inspect answers the question, with what we lose
if a release of Inspect moves it; `tests/common/test_inspect_internals.py` fails loudly on
an installed Inspect that changed any of them, and a test keeps every other module of the
package off Inspect's private names. Imports happen inside the functions: only Inspect
runs call them, and importing this module costs nothing.
"""

from __future__ import annotations

from typing import Any


def openai_chat_base_url(model: Any) -> str | None:
    """The base URL of an Inspect model that sends OpenAI chat completions (``openai/...``
    or ``openai-api/<service>/...``), as lm-eval's judge does; None for any other model
    (another protocol, the Responses API, Azure, Bedrock, a local model).

    Why private: Inspect's public `Model` does not say which wire protocol its provider
    speaks nor where it sends it. Without this, an Inspect grader and lm-eval's judge at the
    same endpoint get different judge identities and stop sharing the judge cache."""
    from inspect_ai.model._providers.openai import OpenAIAPI
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    api: Any = model.api
    if not isinstance(api, OpenAIAPI | OpenAICompatibleAPI) or getattr(api, "responses_api", None):
        return None
    if isinstance(api, OpenAIAPI) and (api.is_azure() or api.is_bedrock()):
        return None
    base_url = getattr(getattr(api, "client", None), "base_url", None)
    return str(base_url) if base_url else None


def run_seed() -> int | None:
    """The ``--seed`` of the Inspect run this is called in (None without one, or outside a
    run).

    Why private: Inspect exposes the run's generate config only internally. Without it, the
    multi-oracle's N draws of a seeded run lose their distinct seeds (N identical replies).
    A changed Inspect raises here rather than silently losing the seed."""
    from inspect_ai.model._generate_config import active_generate_config

    try:
        return active_generate_config().seed
    except LookupError:  # no run active
        return None


def in_eval() -> bool:
    """Whether an Inspect eval is building this task (it has set the model under evaluation).

    Why private: Inspect has no public way to ask whether an eval is running. Without it,
    the judge's checks wait for the run instead of failing the task before generation,
    which is also what this answers on an Inspect that moved it."""
    try:
        from inspect_ai.model._model import active_model
    except ImportError:  # a later Inspect: checks then wait for the run, as outside an eval
        return False
    return active_model() is not None

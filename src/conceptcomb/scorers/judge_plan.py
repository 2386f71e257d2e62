"""What a judge will be asked, counted before a run: cache, tokens and price.

Nothing here calls a judge: the judge's identity comes from the same settings the run
uses (so cache lookups hit exactly the entries the run would), cached ratings are read
from the cache file if it exists (a missing file is not created), tokens are counted with
tiktoken's ``o200k_base`` (GPT-4o's encoding, rebuilt offline by
`conceptcomb.common.offline`), and the price comes from a small table of OpenAI models.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.judge_cache import JudgeCache, default_cache_path
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import build_judge
from conceptcomb.scorers.rating import run_coroutine


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float


# OpenAI's list prices, standard tier (the Batch API halves them). Only chat models that
# accept temperature 0, as our judge sends it; reasoning models (o-series, gpt-5) do not.
PRICES_AS_OF = "2026-03"
PRICES_SOURCE = "OpenAI's list prices, standard tier, March 2026: platform.openai.com/docs/pricing"
PRICES: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-2024-08-06": Price(2.50, 10.00),
    "gpt-4o-2024-11-20": Price(2.50, 10.00),
    "gpt-4o-2024-05-13": Price(5.00, 15.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o-mini-2024-07-18": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
}
# OpenAI's chat format wraps one user message in about 7 tokens (3 per message, 1 for the
# role, 3 to prime the reply), as OpenAI's own token-counting recipe counts them.
CHAT_TOKENS_PER_REQUEST = 7


def price_of(model: str) -> Price | None:
    return PRICES.get(model.strip().lower())


@functools.cache
def _o200k() -> Callable[[str], list[int]]:
    from conceptcomb.common.offline import prime_tiktoken_cache

    prime_tiktoken_cache()
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base").encode
    except Exception as err:  # no file and no network: tiktoken raises several types
        raise ConfigError(
            "Counting judge tokens needs tiktoken's o200k_base file, which could neither be "
            "rebuilt offline (package quicktok-v1) nor downloaded: pip install quicktok-v1, "
            f"or set TIKTOKEN_CACHE_DIR to a folder holding it ({err})."
        ) from err


def input_tokens(prompt: str) -> int:
    """Tokens one judge request costs on input: the prompt in OpenAI's chat format."""
    return len(_o200k()(prompt)) + CHAT_TOKENS_PER_REQUEST


def output_tokens(answer: str) -> int:
    return len(_o200k()(answer))


def judge_identity(settings: JudgeSettings) -> str:
    """The identity a run with these settings gives its judge (the cache key's first part).

    The judge is built, not called: building opens no connection and loads no model.
    """

    async def identity() -> str:
        judge = build_judge(settings)
        try:
            return judge.identity
        finally:
            await judge.aclose()

    return run_coroutine(identity())


def cache_path(settings: JudgeSettings) -> Path | None:
    """The cache file a run would use; None when the cache is off."""
    if (settings.judge_cache or "").lower() in {"off", "none", "0", "false"}:
        return None
    return Path(settings.judge_cache) if settings.judge_cache else default_cache_path()


def cached(settings: JudgeSettings, identity: str, prompts: Iterable[str]) -> set[str]:
    """The prompts the cache already answers for this judge (none if there is no file)."""
    path = cache_path(settings)
    prompts = list(prompts)
    if path is None or not path.is_file() or not prompts:
        return set()
    cache = JudgeCache(path)
    try:
        return set(cache.get_many(identity, prompts))
    finally:
        cache.close()

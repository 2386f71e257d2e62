"""The judge against a real vLLM OpenAI-compatible server (the packaged SmolLM2, float32), as
users serve one: the preflight, concurrent questions, the cache, structured output, and a
judged task run end to end with its judge on that server.

The server runs from the vLLM environment (`vllm_python`; .ci/run sets
CONCEPTCOMB_VLLM_PYTHON), started once for the module (about 1.5 minutes on 2 shared CPU
cores, eager: no torch.compile) and stopped with its engine process.

SmolLM2-135M asked for a relevance rating in free text rarely answers in the asked format;
``judge_response_format=json_schema`` has vLLM's structured outputs constrain every answer
to the rating's JSON schema, so that even this judge returns a valid rating every time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conceptcomb.common.errors import JudgeError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.commands import lm_eval_command
from conceptcomb.testing.vllm_server import SERVED_NAME, VllmServer

pytestmark = pytest.mark.slow

PAIRS = [("wooden spoon", "made of wood"), ("ice cream", "cold"), ("sports car", "fast"),
         ("dog", "barks"), ("red apple", "red"), ("stone wall", "soft"),
         ("paper boat", "floats"), ("glass bottle", "breakable")]  # fmt: skip
PROMPTS = [relevance_prompt(concept, prop) for concept, prop in PAIRS]
# Short answers: a rating in JSON is under 10 tokens; free text gets room to give one.
MAX_TOKENS = 64


@pytest.fixture(scope="module")
def server(vllm_python: Path, smollm2_folder: Path, vllm_turn: None) -> Iterator[VllmServer]:
    with VllmServer(vllm_python, smollm2_folder, extra=("--enforce-eager",)) as running:
        yield running


def options(server: VllmServer, **more: object) -> JudgeSettings:
    return JudgeSettings.resolve({
        "judge_base_url": server.base_url, "judge_model": SERVED_NAME, "judge_cache": "off",
        "judge_max_tokens": MAX_TOKENS, "judge_concurrency": 4, **more,
    })  # fmt: skip


def test_the_preflight_passes_and_names_an_unknown_model(server: VllmServer) -> None:
    preflight_judge(options(server))
    with pytest.raises(JudgeError, match="no-such-model"):
        preflight_judge(options(server, judge_model="no-such-model"))


def test_json_schema_gets_a_rating_for_every_question(server: VllmServer) -> None:
    replies, usage, _ = rate_prompts(
        options(server, judge_response_format="json_schema", judge_format_retries=0), PROMPTS
    )
    assert usage.questions == len(PROMPTS) and usage.failures == 0, usage.summary()
    assert usage.requests == len(PROMPTS)  # not one re-ask of a malformed answer
    assert all(reply.rating in range(1, 11) for reply in replies.values()), replies


def test_the_same_questions_in_free_text_fail_more_often(server: VllmServer) -> None:
    """The paper's free text, the same questions and token budget, no re-asks: what the
    json_schema format prevents (docs/judge.md records the rates measured)."""
    text = options(server, judge_format_retries=0)
    _, free, _ = rate_prompts(text, PROMPTS)
    _, shaped, _ = rate_prompts(options(server, judge_response_format="json_schema"), PROMPTS)
    print(f"format failures: text {free.failures}/{free.questions}, "
          f"json_schema {shaped.failures}/{shaped.questions}")  # fmt: skip
    assert free.questions == shaped.questions == len(PROMPTS)
    assert shaped.failures == 0 and free.failures > 0, (free.summary(), shaped.summary())


def test_the_cache_answers_a_second_run(server: VllmServer, tmp_path: Path) -> None:
    cache = str(tmp_path / "judge.sqlite")
    settings = options(server, judge_response_format="json_schema", judge_cache=cache)
    first, asked, _ = rate_prompts(settings, PROMPTS)
    again, cached, _ = rate_prompts(settings, PROMPTS)
    assert asked.requests == len(PROMPTS) and cached.requests == 0
    assert cached.cache_hits == len(PROMPTS)
    assert {p: r.rating for p, r in again.items()} == {p: r.rating for p, r in first.items()}


@pytest.mark.shared_data
def test_a_judged_task_runs_with_its_judge_on_the_server(
    server: VllmServer, tmp_path: Path
) -> None:
    """ccpt_pi_emergent in lm-eval, model and judge both served by vLLM (structured)."""
    judge = {"judge_base_url": server.base_url, "judge_model": SERVED_NAME,
             "judge_response_format": "json_schema", "judge_concurrency": 4}  # fmt: skip
    model = (
        f"model={SERVED_NAME},base_url={server.base_url}/chat/completions,"
        "num_concurrent=4,max_retries=1,tokenized_requests=False,tokenizer_backend=None"
    )
    command = lm_eval_command(
        "ccpt_pi_emergent", model="local-chat-completions", model_args=model, limit=3,
        program=Path(sys.executable).parent / "lm_eval", apply_chat_template=True,
        gen_kwargs="max_gen_toks=48", metadata=judge, output_path=tmp_path,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "judge usage [" in output and ", 0 failures" in output, output[-3000:]
    (results,) = tmp_path.rglob("results_*.json")
    metrics = json.loads(results.read_text())["results"]["ccpt_pi_emergent"]
    emergence = [value for key, value in metrics.items() if key.split(",")[0] == "E"]
    assert len(emergence) == 1 and isinstance(emergence[0], float), metrics

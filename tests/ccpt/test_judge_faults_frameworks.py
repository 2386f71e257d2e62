"""The judge under bad conditions in the real frameworks (issue 13): the preflight stops a
run before generation, and a task whose judge questions all failed says so loudly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.lm_eval_hooks import JudgeFilter
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.common.errors import JudgeError
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import Faults, LoopbackServer
from tests.ccpt.test_inspect import means, mock_model, run_task
from tests.ccpt.test_lm_eval import task_manager
from tests.ccpt.test_scoring import gold_reply

SPEC = CcptTaskSpec("pi_emergent")


def broken_for(items) -> Faults:
    """Every answer about these items' concepts is an HTTP 200 with a body that is not JSON."""
    concepts = {c.lower() for item in items for c in (item.combination, item.root, item.modifier)}
    return Faults(bad_body_pairs=frozenset(concepts), bad_body_kind="not_json")


# --- lm-eval ------------------------------------------------------------------------------
def test_lm_eval_task_build_stops_on_a_refused_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with LoopbackServer(api_key="sk-right") as server:
        with pytest.raises(JudgeError, match="refused the API key"):
            task_manager(judge_base_url=server.base_url).load([SPEC.name])
        assert server.stats.refused == 1 and server.stats.requests == 0


@pytest.mark.shared_data
def test_lm_eval_filter_warns_when_every_question_failed(fresh_cache: Path, capsys) -> None:
    items = load_items(SPEC)[:3]
    with LoopbackServer(faults=broken_for(items)) as server:
        metadata = {"judge_base_url": server.base_url, "judge_max_retries": 0}
        task = task_manager(**metadata).load([SPEC.name])["tasks"][SPEC.name]
        docs = list(task.test_docs())[:3]
        replies = [[gold_reply("pi_emergent", item)] for item in items]
        records = JudgeFilter().apply(replies, docs)
    assert all(record["errors"] for record in records)
    out = capsys.readouterr().out
    warning = next(line for line in out.splitlines() if "WARNING" in line)
    assert warning.startswith(f"[conceptcomb] {SPEC.name}: WARNING: every judge question failed")
    assert "9 of 9 judge questions failed, 100%" in warning and "JSONDecodeError" in warning


def run_lm_eval(smollm2_folder: Path, out: Path, metadata: dict, limit: int):
    command = lm_eval_command(
        SPEC.name, model="hf", model_args=f"pretrained={smollm2_folder}", limit=limit,
        apply_chat_template=True, gen_kwargs="max_gen_toks=48", output_path=out,
        metadata=metadata, program=OUR_LM_EVAL,
    )  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_lm_eval_run_stops_before_generation(
    smollm2_folder: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with LoopbackServer(api_key="sk-right") as server:
        done = run_lm_eval(smollm2_folder, tmp_path / "out", {"judge_base_url": server.base_url}, 1)
        assert server.stats.refused == 1 and server.stats.requests == 0
    printed = done.stdout + done.stderr
    assert done.returncode != 0
    # one line, no traceback (conceptcomb's excepthook under lm_eval)
    assert "conceptcomb: error: The judge at http://127.0.0.1" in printed
    assert "Traceback" not in printed
    assert "refused the API key" in printed and "sk-wrong" not in printed
    assert "Initializing hf model" in printed  # the model was loaded ...
    assert "Running generate_until requests" not in printed  # ... and never asked anything
    assert not list(tmp_path.rglob("results_*.json"))


@pytest.mark.slow
def test_lm_eval_warns_above_the_table_when_every_question_failed(
    smollm2_folder: Path, tmp_path: Path
) -> None:
    with LoopbackServer(faults=broken_for(load_items(SPEC)[:4])) as server:
        metadata = {
            "judge_base_url": server.base_url,
            "judge_max_retries": 0,
            "judge_cache": str(tmp_path / "judge.sqlite"),
        }
        done = run_lm_eval(smollm2_folder, tmp_path / "out", metadata, 4)
        assert server.stats.requests > 0 and server.stats.answered == 0
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    warning = next(i for i, line in enumerate(lines) if "every judge question failed" in line)
    table = next(i for i, line in enumerate(lines) if line.startswith("|") and "Tasks" in line)
    assert warning < table
    assert "judge questions failed, 100%" in lines[warning] and "JSONDecodeError" in lines[warning]


# --- Inspect -----------------------------------------------------------------------------
@pytest.mark.shared_data
@pytest.mark.parametrize("case", ["401", "refused port"])
def test_inspect_run_stops_before_generation(case: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    replies = [gold_reply("pi_emergent", item) for item in load_items(SPEC)[:3]]
    model = mock_model(replies)
    with LoopbackServer(api_key="sk-right") as server:
        url = server.base_url if case == "401" else "http://127.0.0.1:9/v1"
        task = TASKS[SPEC.name](judge_base_url=url)
        log = inspect_eval(task, model=model, limit=3, display="none", log_dir=str(tmp_path))[0]
        assert server.stats.requests == 0 and server.stats.refused == (case == "401")
    assert log.status == "error"
    expected = "refused the API key" if case == "401" else "cannot be reached"
    # A task built outside an eval is checked when it runs: the log's error is our one line.
    assert log.error.message.startswith("The judge ") and expected in log.error.message
    assert "\n" not in log.error.message
    assert not log.stats.model_usage  # the model generated nothing
    assert all(not sample.output.completion for sample in log.samples or [])


@pytest.mark.shared_data
def test_inspect_judge_off_skips_the_preflight(tmp_path: Path, monkeypatch) -> None:
    replies = [gold_reply("pi_emergent", item) for item in load_items(SPEC)[:2]]
    log = run_task(
        SPEC.name, replies, tmp_path, judge="off", judge_base_url="http://127.0.0.1:9/v1"
    )
    assert log.status == "success"
    # No setup solver at all: it would cost every sample a span of events for nothing.
    assert [step.solver for step in log.plan.steps] == ["generate"]
    spans = {getattr(event, "name", None) for s in log.samples or [] for event in s.events}
    assert "conceptcomb/judge_preflight" not in spans
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judged = TASKS[SPEC.name](judge_base_url="http://127.0.0.1:9/v1")
    assert judged.setup is not None  # a judge that is on is checked before generation


@pytest.mark.shared_data
def test_inspect_warns_when_every_question_failed(
    tmp_path: Path, fresh_cache: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("CONCEPTCOMB_JUDGE_MAX_RETRIES", "0")
    items = load_items(SPEC)[:3]
    replies = [gold_reply("pi_emergent", item) for item in items]
    with LoopbackServer(faults=broken_for(items)) as server:
        log = run_task(SPEC.name, replies, tmp_path, judge_base_url=server.base_url)
        assert server.stats.checks == 1 and server.stats.answered == 0
    assert means(log)["judge_failures"] == 3
    err = capsys.readouterr().err
    warning = next(line for line in err.splitlines() if "WARNING" in line)
    assert warning.startswith(f"[conceptcomb] {SPEC.name}: WARNING: every judge question failed")
    assert "9 of 9 judge questions failed, 100%" in warning and "JSONDecodeError" in warning

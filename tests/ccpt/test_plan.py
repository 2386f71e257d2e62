"""`conceptcomb plan`: the questions, cache hits and tokens of a run, before it runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.prompts import user_prompt
from conceptcomb.ccpt.tasks import CcptTaskSpec, default_specs
from conceptcomb.cli import main
from conceptcomb.scorers.judge_plan import CHAT_TOKENS_PER_REQUEST, PRICES
from conceptcomb.scorers.relevance import RelevanceQuestion
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from tests.conftest import read_jsonl

N_ITEMS = 40


def replies_for(spec: CcptTaskSpec, items) -> list[str]:
    """The dataset's answers, with replies in other shapes, unreadable and repeated ones."""
    replies = [dataset_answer(spec, item) for item in items]
    if spec.generative:
        replies[1] = "I cannot answer."
        replies[2] = ""
        replies[4] = replies[3]  # the same answer for another item
    if spec.kind in ("pi_emergent", "pi_canceled"):
        replies[5] = f'The answer is "{items[5].property}"'
    return replies


def write_samples(folder: Path, spec: CcptTaskSpec, limit: int = N_ITEMS, items=None) -> Path:
    """An lm-eval ``samples_<task>_<date>.jsonl`` file of replies to the first items."""
    items = (items or load_items(spec))[:limit]
    path = folder / f"samples_{spec.name}_2026-11-23T05-00-00.000000.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for number, (item, reply) in enumerate(zip(items, replies_for(spec, items), strict=True)):
            doc = {**item.as_doc(), "task": spec.name}
            handle.write(json.dumps({"doc_id": number, "doc": doc, "resps": [[reply]]}) + "\n")
    return path


def plan_cli(tmp_path: Path, *args: str) -> tuple[dict, list[dict]]:
    """Run `conceptcomb plan`; (the JSON plan, the questions still to ask)."""
    out, questions = tmp_path / "plan.json", tmp_path / "questions.jsonl"
    assert main(["plan", *args, "--output", str(out), "--questions-output", str(questions)]) == 0
    return json.loads(out.read_text()), read_jsonl(questions) if questions.stat().st_size else []


def score(task: str, path: Path, judge: list[str], output: Path) -> None:
    """A real rescoring run: `conceptcomb score`, which asks the judge."""
    assert main(["score", task, "--predictions", str(path), "--output", str(output), *judge]) == 0


def score_all(files: list[Path], judge: list[str], tmp_path: Path) -> None:
    for number, path in enumerate(files):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        score(task, path, judge, tmp_path / f"scored-{number}.json")


@pytest.mark.shared_data
def test_plan_of_saved_replies_is_what_the_judge_is_then_asked(tmp_path: Path, capsys) -> None:
    """The acceptance test: `plan ccpt` over saved replies lists exactly the distinct
    questions the real rescoring runs then send, minus those the cache already holds."""
    folder = tmp_path / "out" / "model"
    folder.mkdir(parents=True)
    files = {spec.name: write_samples(folder, spec) for spec in default_specs()}
    with LoopbackServer() as server:
        judge = ["--judge-base-url", server.base_url, "--judge-model", "gpt-4o",
                 "--judge-cache", str(tmp_path / "judge.sqlite")]  # fmt: skip
        # One task judged before: its answers are in the cache, and the plan knows it.
        score_all([files["ccpt_pi_canceled"]], judge, tmp_path)
        cached_before = set(server.stats.attempts)
        plan, questions = plan_cli(tmp_path, "ccpt", "--predictions", str(tmp_path / "out"),
                                   *judge)  # fmt: skip
        asked_before = server.stats.requests
        score_all(list(files.values()), judge, tmp_path)
        asked = {p for p, n in server.stats.attempts.items() if p not in cached_before}
        requests = server.stats.requests - asked_before

    planned = [q["prompt"] for q in questions]
    assert len(planned) == len(set(planned)) > 100
    assert set(planned) == asked
    assert plan["judge_requests"] == requests == len(asked)
    assert plan["exact"] is True
    rows = {row["task"]: row for row in plan["tasks"]}
    assert set(rows) == {spec.name for spec in default_specs()}
    assert rows["ccpt_pi_canceled"]["to_ask"] == 0
    assert rows["ccpt_pi_canceled"]["in_cache"] == rows["ccpt_pi_canceled"]["questions"] > 50
    assert rows["ccpt_tp"]["questions"] == 0 and rows["ccpt_tp"]["items"] == N_ITEMS
    assert all(row["source"] == str(files[name]) for name, row in rows.items())
    assert plan["judge"] == f"openai-chat|{server.base_url}|gpt-4o|temperature=0|max_tokens=1024"
    assert plan["cost_usd"] is None  # a self-hosted endpoint: no price
    printed = capsys.readouterr().out
    assert f"total: {requests:,} judge requests" in printed and "no price known" in printed


@pytest.mark.shared_data
def test_the_cache_off_asks_shared_questions_in_every_task(tmp_path: Path) -> None:
    """Without the cache each task's run asks its own questions, repeats included."""
    folder = tmp_path / "out"
    folder.mkdir()
    pi, npc = CcptTaskSpec("pi_emergent"), CcptTaskSpec("npc_emergent")
    # The same items: the dataset's answers raise the same questions in both tasks.
    files = [write_samples(folder, pi), write_samples(folder, npc, items=load_items(pi))]
    with LoopbackServer() as server:
        judge = ["--judge-base-url", server.base_url, "--judge-cache", "off"]
        plan, questions = plan_cli(
            tmp_path, "ccpt_pi_emergent,ccpt_npc_emergent", "--predictions", str(folder), *judge
        )
        score_all(files, judge, tmp_path)
    assert plan["judge_requests"] == server.stats.requests == len(questions)
    per_task = sum(row["to_ask"] for row in plan["tasks"])
    assert per_task == plan["judge_requests"]
    assert len({q["prompt"] for q in questions}) < len(questions)  # shared by the two tasks
    assert [q["task"] for q in questions].count("ccpt_npc_emergent") > 50


@pytest.mark.shared_data
def test_plan_of_a_task_not_run_yet_bounds_the_questions(tmp_path: Path) -> None:
    """From the items alone: the count, an upper bound and the dataset answers' count."""
    spec = CcptTaskSpec("npc_emergent")
    folder = tmp_path / "out"
    folder.mkdir()
    path = write_samples(folder, spec, limit=30)
    with LoopbackServer() as server:
        judge = ["--judge-base-url", server.base_url, "--judge-cache", str(tmp_path / "c.sqlite")]
        before, _ = plan_cli(tmp_path, spec.name, "--limit", "30", *judge)
        exact, asked = plan_cli(tmp_path, spec.name, "--predictions", str(path), *judge)
        score_all([path], judge, tmp_path)
        after, _ = plan_cli(tmp_path, spec.name, "--limit", "30", *judge)
    row = before["tasks"][0]
    heads = {RelevanceQuestion(item.root, item.property).prompt for item in load_items(spec)[:30]}
    assert row["items"] == 30 and row["exact"] is False and before["exact"] is False
    assert row["questions"] == 2 * 30 + len(heads)  # the head question is known already
    assert row["in_cache"] == 0 and row["to_ask"] == row["questions"]
    assert len(asked) == exact["tasks"][0]["questions"] <= row["questions"]
    judged_heads = heads & {q["prompt"] for q in asked}  # unreadable replies ask nothing
    assert len(judged_heads) > 20 and after["tasks"][0]["in_cache"] == len(judged_heads)
    assert after["tasks"][0]["to_ask"] == row["to_ask"] - len(judged_heads)
    assert row["with_dataset_answers"] > 60


@pytest.mark.shared_data
def test_tokens_and_price(tmp_path: Path) -> None:
    """Input tokens are o200k_base tokens of the prompts plus the chat format's; cost is
    the listed price for an OpenAI model at OpenAI's endpoint."""
    import tiktoken

    spec = CcptTaskSpec("pi_emergent")
    path = write_samples(tmp_path, spec, limit=8)
    plan, questions = plan_cli(tmp_path, spec.name, "--predictions", str(path), "--judge-model",
                               "gpt-4o-mini", "--judge-cache", "off")  # fmt: skip
    encoding = tiktoken.get_encoding("o200k_base")
    expected = sum(len(encoding.encode(q["prompt"])) + CHAT_TOKENS_PER_REQUEST for q in questions)
    assert plan["input_tokens"] == expected > 200 * len(questions)
    price = PRICES["gpt-4o-mini"]
    cost = (expected * price.input + plan["output_tokens"] * price.output) / 1e6
    assert plan["cost_usd"] == pytest.approx(cost)
    assert plan["output_tokens"] == len(questions) * len(encoding.encode('{"relevance": 10}'))


@pytest.mark.shared_data
def test_the_judge_off_asks_nothing(tmp_path: Path, capsys) -> None:
    plan, questions = plan_cli(tmp_path, "ccpt", "--limit", "5", "--judge", "off")
    assert plan["judge_requests"] == 0 and plan["judge"] is None and not questions
    assert [row["items"] for row in plan["tasks"]] == [5, 5, 5, 5]
    assert "the judge is off" in capsys.readouterr().out


@pytest.mark.shared_data
def test_bad_requests_are_one_line_errors(tmp_path: Path, capsys) -> None:
    assert main(["plan", "ccpt_nope"]) == 2
    assert "knows the CCPT tasks" in capsys.readouterr().err
    plain = tmp_path / "replies.jsonl"
    plain.write_text(json.dumps({"doc": {"combination": "a", "property": "b"}, "response": ""}))
    assert main(["plan", "ccpt", "--predictions", str(plain), "--judge", "off"]) == 2
    assert "does not say which task" in capsys.readouterr().err
    other = write_samples(tmp_path, CcptTaskSpec("tp"), limit=2)
    assert main(["plan", "ccpt_pi_emergent", "--predictions", str(other)]) == 2
    assert "holds replies of ccpt_tp, not planned here" in capsys.readouterr().err


@pytest.mark.slow
def test_plan_matches_a_judged_lm_eval_run(tmp_path: Path) -> None:
    """Through lm-eval itself: replies saved by a --predict_only run of the `ccpt` group
    (an API model on loopback), planned, then the judged run asks exactly those questions."""
    limit = 12
    replies = {}
    for spec in default_specs():
        items = load_items(spec)[:limit]
        for item, reply in zip(items, replies_for(spec, items), strict=True):
            replies[user_prompt(spec, item)] = reply
    with ModelServer(replies) as model, LoopbackServer() as judge:
        metadata = {"judge_base_url": judge.base_url, "judge_cache": str(tmp_path / "c.sqlite")}

        def lm_eval(out: Path, **options: bool) -> None:
            command = lm_eval_command(
                "ccpt", model="local-chat-completions",
                model_args=f"model=m,base_url={model.base_url}/chat/completions", limit=limit,
                apply_chat_template=True, output_path=out, metadata=metadata, program=OUR_LM_EVAL,
                **options,
            )  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            assert model.unknown == 0

        lm_eval(tmp_path / "generated", predict_only=True, log_samples=True)
        assert judge.stats.requests == 0  # --predict_only: the judge is off
        plan, questions = plan_cli(tmp_path, "ccpt", "--predictions", str(tmp_path / "generated"),
                                   "--judge-base-url", judge.base_url, "--judge-model", "gpt-4o",
                                   "--judge-cache", metadata["judge_cache"])  # fmt: skip
        lm_eval(tmp_path / "judged")
    assert {q["prompt"] for q in questions} == set(judge.stats.attempts)
    assert plan["judge_requests"] == judge.stats.requests == len(questions) > 30


@pytest.mark.shared_data
def test_oracle_replies_are_planned_all_n(tmp_path: Path) -> None:
    """Multi-oracle: every one of the N replies of an item raises its questions."""
    spec = CcptTaskSpec("pi_emergent")
    items = load_items(spec)[:10]
    path = tmp_path / "oracle.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for number, item in enumerate(items):
            responses = [dataset_answer(spec, item), json.dumps({"property": f"odd {number}"})]
            handle.write(json.dumps({"doc": item.as_doc(), "responses": responses}) + "\n")
    with LoopbackServer() as server:
        judge = ["--judge-base-url", server.base_url, "--judge-cache", str(tmp_path / "c.sqlite")]
        plan, questions = plan_cli(
            tmp_path, "ccpt_pi_emergent_oracle", "--predictions", str(path), *judge
        )
        score("ccpt_pi_emergent_oracle", path, judge, tmp_path / "scored.json")
    assert plan["tasks"][0]["replies"] == 20
    assert {q["prompt"] for q in questions} == set(server.stats.attempts)
    assert plan["judge_requests"] == server.stats.requests > 40

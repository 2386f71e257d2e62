"""A bundle from ``conceptcomb score`` carries the task options it scored with and the
prompt each item would have been sent, and ``validate-bundle`` checks both (issue 40,
item 3), on the CCPT authors' recorded replies: GPT-4o's noun phrase completions (Table 3,
Base, seed 0, ``results/npc_emergent_gpt-4o_naive.csv``), judged by a loopback server that
answers only with the GPT-4o ratings the authors recorded for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.prompts import SYSTEM_PROMPT, user_prompt
from conceptcomb.common.evidence import decode, encode, prompts_sha256
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_npc_modifier import SPEC, _gpt4o_base_seed
from tests.ccpt.test_npc_modifier import results_dir as results_dir  # the fixture
from tests.leaderboard.eee_support import assert_eee_valid, eee_files, rows_of, run_cli

pytestmark = pytest.mark.shared_data
TASK = SPEC.name  # ccpt_npc_emergent


@pytest.fixture(scope="module")
def bundle(results_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rescored")
    replies, ratings, _, _ = _gpt4o_base_seed(results_dir, 0)
    items = load_items(SPEC)
    predictions = out / "gpt-4o_naive_0.jsonl"
    pairs = zip(items, replies, strict=True)
    lines = [{"doc": item.as_doc(), "response": reply} for item, reply in pairs]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with LoopbackServer(ratings=ratings, strict=True) as judge:
        code, printed = run_cli(
            "score", TASK, "--predictions", str(predictions), "--judge-base-url", judge.base_url,
            "--judge-model", "gpt-4o", "--judge-cache", "off", "--model-name", "gpt-4o",
            "--output", str(out / "results.json"), "--samples-output", str(out / "s.jsonl"),
        )  # fmt: skip
        assert code == 0, printed
        assert judge.stats.unknown == set()  # every question one the authors' ratings answer
    code, printed = run_cli("submit-bundle", str(out / "results.json"), "--out", str(out / "b"))
    assert code == 0, printed
    (path,) = (out / "b").glob("*.bundle.json")
    return path


def test_the_bundle_carries_the_options_and_each_items_prompt(bundle: Path) -> None:
    (task,) = json.loads(bundle.read_text(encoding="utf-8"))["tasks"]
    assert task["options"] == {"npc_modifier": "lemma"}  # the paper's rule, the default
    assert (task["items"], task["items_total"]) == (167, 167)
    items = decode(task["evidence"], TASK)
    by_key = {item.item_id: item for item in load_items(SPEC)}
    for evidence in items:
        key = evidence["id"].split(":", 1)[1]
        expected = [["system", SYSTEM_PROMPT], ["user", user_prompt(SPEC, by_key[key])]]
        assert evidence["prompt"] == [key, None, expected]
    assert task["prompts"]["sent_sha256"] == prompts_sha256([e["prompt"] for e in items])
    code, printed = run_cli("validate-bundle", str(bundle))
    assert code == 0 and f"{TASK}: verified (all 167 test items)" in printed, printed


def test_its_eee_rows_hold_the_prompts(bundle: Path, tmp_path: Path, eee_python: str) -> None:
    code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(tmp_path),
                            "--model-id", "openai/gpt-4o")  # fmt: skip
    assert code == 0, printed
    assert_eee_valid(tmp_path, eee_python)
    _, (samples,) = eee_files(tmp_path)
    (task,) = json.loads(bundle.read_text(encoding="utf-8"))["tasks"]
    prompts = {e["id"]: e["prompt"][2] for e in decode(task["evidence"], TASK)}
    rows = rows_of(samples)
    assert len({row["sample_id"] for row in rows}) == 167
    for row in rows:
        raw = json.loads(row["input"]["raw"])
        assert [[m["role"], m["content"]] for m in raw] == prompts[row["sample_id"]]
        assert row["interaction_type"] == "single_turn"
    code, printed = run_cli("validate-bundle", str(tmp_path))
    assert code == 0, printed


def _forged(bundle: Path, target: Path, edit) -> Path:
    """The bundle edited by ``edit(task, items)`` and sealed again as a forger would: the
    items' hash, the prompts' hash and the content hash made right."""
    data = json.loads(bundle.read_text(encoding="utf-8"))
    task = data["tasks"][0]
    items = decode(task["evidence"], TASK)
    edit(task, items)
    task["evidence"] = {**task["evidence"], **encode(items)}
    task["prompts"]["sent_sha256"] = prompts_sha256([item["prompt"] for item in items])
    data["content_sha256"] = content_sha256(data)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def _other_prompt(task: dict, items: list[dict]) -> None:
    items[5]["prompt"][2][1][1] = items[5]["prompt"][2][1][1].replace("Head noun", "Head")


def _other_rule(task: dict, items: list[dict]) -> None:
    task["options"]["npc_modifier"] = "surface"


def _unknown_rule(task: dict, items: list[dict]) -> None:
    task["options"]["npc_modifier"] = "stem"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_other_prompt, "its messages are not what the task sends this item"),
        (_other_rule, "options: npc_modifier=surface, but its items judged with lemma"),
        (_unknown_rule, "options: npc_modifier='stem' is not a rule of the task"),
    ],
    ids=["prompt", "option", "unknown option value"],
)
def test_validate_bundle_catches_an_edited_prompt_or_option(
    bundle: Path, tmp_path: Path, edit, message: str
) -> None:
    code, printed = run_cli("validate-bundle", str(_forged(bundle, tmp_path / "f.json", edit)))
    assert code == 1 and "INVALID" in printed and message in printed, printed
    assert f"{TASK}: FAILED" in printed

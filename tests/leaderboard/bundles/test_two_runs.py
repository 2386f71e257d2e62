"""Two lm-eval runs of one model that differ in their judge (issue 54): ``submit-bundle``
keeps both, in bundles of their own names, and the report ranks each under its own judge.

Both runs are real ``lm_eval`` runs of ``ccpt_pi_emergent`` on a loopback model answering
with the dataset's answers, judged by the loopback judge under two judge models."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.prompts import user_prompt
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from tests.ccpt.conftest import include_args
from tests.leaderboard.eee_support import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

TASK = "ccpt_pi_emergent"
LIMIT = 3


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Path]]:
    """Runs A and B: the same model, judged by "gpt-4o" and by "gpt-4o-mini"."""
    spec = spec_by_name(TASK)
    items = load_items(spec)[:LIMIT]
    root = tmp_path_factory.mktemp("two-runs")
    replies = {user_prompt(spec, item): dataset_answer(spec, item) for item in items}
    with ModelServer(replies) as model, LoopbackServer() as judge:
        yield [_run(model, judge, root / name, judge_model) for name, judge_model in JUDGES]


JUDGES = (("judgeA", "gpt-4o"), ("judgeB", "gpt-4o-mini"))


def _run(model: ModelServer, judge: LoopbackServer, out: Path, judge_model: str) -> Path:
    metadata = {"judge_base_url": judge.base_url, "judge_model": judge_model, "judge_cache": "off"}
    command = [
        "lm_eval",
        "--model", "local-chat-completions",
        "--model_args", f"model=m,base_url={model.base_url}/chat/completions",
        "--tasks", TASK, "--limit", str(LIMIT), "--apply_chat_template", "--log_samples",
        "--output_path", str(out), "--metadata", json.dumps(metadata), *include_args(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_runs_that_differ_in_their_judge_make_two_bundles(
    two_runs: list[Path], tmp_path: Path
) -> None:
    code, printed = run_cli("submit-bundle", *map(str, two_runs), "--out", str(tmp_path))
    assert code == 0, printed
    bundles = sorted(tmp_path.glob("*.bundle.json"))
    assert len(bundles) == 2, printed
    assert printed.count("(valid)") == 2, printed
    assert "the newer is used" not in printed
    assert "judge_model" in printed  # the line saying what differs
    judges = {
        json.loads(path.read_text())["tasks"][0]["judge"]["options"]["judge_model"]
        for path in bundles
    }
    assert judges == {"gpt-4o", "gpt-4o-mini"}


def test_the_same_run_twice_is_merged_and_said(two_runs: list[Path], tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(two_runs[0], copy)
    code, printed = run_cli("submit-bundle", str(two_runs[0]), str(copy), "--out", str(tmp_path))
    assert code == 0, printed
    assert len(list(tmp_path.glob("*.bundle.json"))) == 1, printed
    assert "duplicate" in printed, printed


def test_the_report_ranks_each_run_under_its_own_judge(
    two_runs: list[Path], tmp_path: Path
) -> None:
    """Two rankings, one per judge; each heading's judge key is its row's and the table's."""
    out = tmp_path / "report"
    code, printed = run_cli("report", *map(str, two_runs), "--out", str(out), "--no-plots")
    assert code == 0, printed
    text = (out / "ccpt.md").read_text(encoding="utf-8")
    assert "not recorded" not in text, text
    headings = re.findall(r"^### ccpt_pi_emergent: ranked by E .*, key ([0-9a-f]{8})$", text, re.M)
    assert len(headings) == 2, text
    for key in headings:
        section = text.split(f"key {key}\n", 1)[1].split("###", 1)[0]
        assert re.findall(r"judge key ([0-9a-f]{8})", section) == [key], section
    table_keys = re.findall(r"^\| \*\*m\*\* .*?\(API chat, ([0-9a-f]{8})\)", text, re.M)
    assert sorted(table_keys) == sorted(headings), text


def test_a_reply_with_a_lone_surrogate_ends_in_one_line(
    two_runs: list[Path], tmp_path: Path
) -> None:
    """JSON can escape a lone surrogate (half of a character an API cut), no UTF-8 bundle can
    hold one: submit-bundle names the file, the item and the field, exit 2, no traceback."""
    run = tmp_path / "run"
    shutil.copytree(two_runs[0], run)
    samples = next(run.rglob(f"samples_{TASK}_*.jsonl"))
    lines = samples.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    reply = record["resps"][0][0]
    record["resps"][0][0] = record["filtered_resps"][0] = reply[:5] + "\ud83d" + reply[5:]
    lines[1] = json.dumps(record)  # ASCII: the surrogate as the escape \ud83d
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, printed = run_cli("submit-bundle", str(run), "--out", str(tmp_path / "out"))
    assert code == 2, printed
    assert "Traceback" not in printed, printed
    line = printed.strip().splitlines()[-1]
    assert line.startswith("conceptcomb: error: ") and str(run) in line, printed
    assert f"{TASK}'s item 1 " in line and "lone surrogate" in line and "reply" in line, line
    assert not list((tmp_path / "out").glob("*.bundle.json"))

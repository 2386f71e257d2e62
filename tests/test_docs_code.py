"""Every code block of docs/comparing.md and docs/ordered-demonstrations.md runs as written
(issue 46): each YAML and Python block is a file of examples/ word for word (the lm-eval
task, the Inspect ``@task`` with its imports), and each bash block runs in order, from a
folder beside the repository's examples/, offline against a loopback model: the one change
is the packaged SmolLM2's options (``$(conceptcomb smollm2 --args ...)``), which become a
loopback server's (lm-eval's ``local-chat-completions``, Inspect's ``openai-api``). Blocks
without a language or marked ``text`` are printed output or synopsis."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.testing.model_server import ModelServer
from tests.conftest import REPO

DOCS = ("comparing.md", "ordered-demonstrations.md")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
BIN = Path(sys.executable).parent


def blocks(name: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer((REPO / "docs" / name).read_text())]


def _example_files() -> dict[str, Path]:
    return {path.read_text(): path for path in (REPO / "examples").rglob("*") if path.is_file()
            and path.suffix in (".yaml", ".py")}  # fmt: skip


@pytest.mark.parametrize("name", DOCS)
def test_every_yaml_and_python_block_is_an_example_file(name: str) -> None:
    files = _example_files()
    shown = [(lang, text) for lang, text in blocks(name) if lang in ("yaml", "python")]
    assert shown, name
    for lang, text in shown:
        assert text in files, f"{name}: a {lang} block that is no file of examples/:\n{text}"
    assert {lang for lang, _ in blocks(name)} <= {"", "text", "yaml", "python", "bash"}


def _reply(chat: dict[str, Any]) -> str:
    """A sum for a sum, the right capital in a sentence for a capitals question."""
    last = [m["content"] for m in chat["messages"] if m["role"] == "user"][-1]
    numbers = re.findall(r"-?\d+", last)
    if "capital of" not in last:
        return str(sum(int(n) for n in numbers[-2:])) if numbers else "0"
    rows = [
        json.loads(x) for x in (REPO / "examples/capitals/capitals.jsonl").read_text().splitlines()
    ]
    capital = next((r["capital"] for r in rows if r["question"] in last), "Paris")
    wrong = (chat.get("temperature") or 0) > 0.5 and len(capital) % 2
    return f"The capital is {'Rome' if wrong else capital}."


def _as_run(block: str, url: str) -> str:
    lm_eval = (f"--model local-chat-completions --model_args model=loopback,base_url={url}"
               "/chat/completions,num_concurrent=4,max_retries=1")  # fmt: skip
    block = block.replace("$(conceptcomb smollm2 --args lm_eval)", lm_eval)
    return block.replace("$(conceptcomb smollm2 --args inspect)", "--model openai-api/loopback/m")


@pytest.mark.slow
@pytest.mark.parametrize("name", DOCS)
def test_every_bash_block_runs_as_written(name: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    shell = [text for lang, text in blocks(name) if lang == "bash"]
    assert shell and all("$(conceptcomb smollm2" in b or "conceptcomb compare" in b for b in shell)
    with ModelServer({}, reply_for=_reply) as server:
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
               "LOOPBACK_API_KEY": "x", "LOOPBACK_BASE_URL": server.base_url}  # fmt: skip
        for block in shell:
            command = _as_run(block, server.base_url)
            bash = ["bash", "-euo", "pipefail", "-c", command]
            done = subprocess.run(bash, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=1200)  # fmt: skip
            assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            if "conceptcomb compare" in block:
                assert "what differs (A vs B)" in done.stdout, done.stdout
        assert server.asked > 0 and server.unknown == 0


@pytest.mark.slow
@pytest.mark.shared_data
def test_running_md_inspect_score_block_runs_as_written(tmp_path: Path) -> None:
    """docs/running.md's ``inspect score`` block (issue 52): the model a loopback server that
    answers each CCPT item with a property, ``openai/gpt-4o`` a loopback judge
    (OPENAI_BASE_URL), which `inspect score` asks and nothing else does."""
    from inspect_ai.log import read_eval_log

    from conceptcomb.testing.judge_server import LoopbackServer

    [block] = [text for lang, text in blocks("running.md") if "inspect score" in text]
    with (
        ModelServer({}, reply_for=lambda chat: '{"property": "sharp"}') as model,
        LoopbackServer() as judge,
    ):
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
               "LOOPBACK_API_KEY": "x", "LOOPBACK_BASE_URL": model.base_url,
               "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "x"}  # fmt: skip
        bash = ["bash", "-euo", "pipefail", "-c", _as_run(block, model.base_url)]
        done = subprocess.run(bash, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1200)  # fmt: skip
        assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert model.asked == 3 and judge.stats.requests == 9  # 3 items, 3 questions each
    log = read_eval_log(str(tmp_path / "logs" / "ccpt-rescored.eval"))
    assert log.results is not None
    assert {score.scorer for score in log.results.scores} == {"ccpt", "ccpt_judge"}
    assert all("ccpt_judge" in (sample.scores or {}) for sample in log.samples or [])

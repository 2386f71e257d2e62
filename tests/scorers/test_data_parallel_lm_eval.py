"""A data-parallel lm-eval run on two CPU processes asks each distinct judge question once
and gives the single-process run's metrics, with one usage line (the run's total).

accelerate starts the processes and joins them with gloo (``ACCELERATE_USE_CPU=true
accelerate launch --multi_gpu --num_processes 2``, what ``--cpu`` alone does not do: it
starts one process). lm-eval's hf runner splits the docs across processes only when there
are several GPUs, so:

* the split run uses lm-eval's chat-completions runner given the rank and world size that
  accelerate sets (tests/scorers/lm_eval_ranked.py: what the hf runner does on GPUs),
  against a loopback model that answers every prompt with the same property; lm-eval deals
  the docs out in turn, so docs 1 and 8 (``a lettuce without water``, ``a sponge in
  water``) land on different ranks and both need (water, wet) judged;
* the unsplit run is the plain ``accelerate launch -m lm_eval --model hf`` on the packaged
  SmolLM2: both processes generate for every doc, and still each question is asked once.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from tests.ccpt.conftest import include_args
from tests.leftovers import temporary_folder_of_own

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

TASK = "ccpt_pi_emergent"
RANKED = Path(__file__).with_name("lm_eval_ranked.py")
USAGE = re.compile(rf"^\[conceptcomb\] {TASK}: judge usage .*$", re.MULTILINE)
JUDGE = re.compile(r"\[openai-chat\|[^]]*\]")


@pytest.fixture(scope="module", autouse=True)
def temporary_folder() -> Iterator[Path]:
    """accelerate's processes leave torchelastic_* folders in
    TMPDIR: a short folder of the module's, removed after its last test."""
    with temporary_folder_of_own("dp-") as folder:
        yield folder


@pytest.fixture
def free_port() -> int:
    """A port for the processes' rendezvous (accelerate's default, 29500, may be taken)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def two_processes(port: int) -> list[str]:
    return ["accelerate", "launch", "--multi_gpu", "--num_processes", "2", "--num_machines",
            "1", "--mixed_precision", "no", "--dynamo_backend", "no",
            "--main_process_port", str(port)]  # fmt: skip


def run(command: list[str], judge: LoopbackServer, out: Path, *args: str) -> tuple[str, dict]:
    """Run lm-eval judged by ``judge`` (a cache of its own); its output and metrics."""
    metadata = {"judge_base_url": judge.base_url, "judge_cache": str(out / "judge.sqlite")}
    command = [*command, "--tasks", TASK, "--apply_chat_template", "--output_path", str(out),
               "--metadata", json.dumps(metadata), *args, *include_args()]  # fmt: skip
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OPENAI_API_KEY": "unused"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"][TASK]
    return done.stdout, {k: v for k, v in results.items() if isinstance(v, float)}


def test_split_run_asks_each_question_once_and_gives_the_single_process_metrics(
    tmp_path: Path, free_port: int
) -> None:
    with ModelServer({}, default='{"property": "wet"}') as model:
        args = ["--model", "ranked-chat-completions", "--limit", "10",
                "--model_args", f"model=m,base_url={model.base_url}/chat/completions"]  # fmt: skip
        with LoopbackServer() as judge:
            one, alone = run([sys.executable, str(RANKED)], judge, tmp_path / "one", *args)
            assert max(judge.stats.attempts.values()) == 1
            asked_alone = judge.stats.requests
        with LoopbackServer() as judge:
            command = [*two_processes(free_port), str(RANKED)]
            two, split = run(command, judge, tmp_path / "two", *args)
            attempts = dict(judge.stats.attempts)
    assert "rank 0 of 2: 5 requests" in two and "rank 1 of 2: 5 requests" in two
    assert "rank 0 of 1: 10 requests" in one
    # Each distinct question once, across both processes: as many as the single process.
    assert set(attempts.values()) == {1} and len(attempts) == asked_alone
    # Printed once, by rank 0, with the run's totals (each run had a judge at its own port).
    [line_alone], [line_split] = ([JUDGE.sub("", line) for line in USAGE.findall(output)]
                                  for output in (one, two))  # fmt: skip
    assert "1 duplicates asked once" in line_alone  # (water, wet): a question both ranks need
    assert line_split == line_alone.replace(
        " distinct questions,", " distinct questions (asked by 2 processes),"
    )
    assert split.keys() == alone.keys() and "E,judged" in split
    for name, value in alone.items():
        assert split[name] == pytest.approx(value, abs=1e-9), name


def test_accelerate_launch_hf_on_cpu_asks_each_question_once(
    tmp_path: Path, free_port: int, smollm2_folder: Path
) -> None:
    with LoopbackServer() as judge:
        command = [*two_processes(free_port), "-m", "lm_eval"]
        output, metrics = run(command, judge, tmp_path, "--model", "hf", "--limit", "3",
                              "--model_args", f"pretrained={smollm2_folder}",
                              "--gen_kwargs", "max_gen_toks=32")  # fmt: skip
        attempts = dict(judge.stats.attempts)
        assert judge.stats.checks == 2  # each process checks the judge before generating
    assert attempts and set(attempts.values()) == {1}
    [line] = USAGE.findall(output)
    assert (
        f"{len(attempts)} distinct questions (asked by 2 processes), {len(attempts)} requests"
        in line
    )
    assert f"{len(attempts)} duplicates asked once" in line  # the other process's copies
    assert "E,judged" in metrics

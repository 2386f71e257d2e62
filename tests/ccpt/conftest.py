"""One real lm-eval run of SmolLM2 on ccpt_pi_emergent, shared by the tests that need one."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command, model_run_env
from conceptcomb.testing.judge_server import LoopbackServer
from tests.conftest import read_jsonl

NPC_TASK = "ccpt_npc_emergent"  # also in `pi_emergent_run`


def include_args() -> list[str]:
    return [] if lm_eval_has_our_tasks() else ["--include_path", str(tasks_path())]


def run_lm_eval(
    smollm2_folder: Path,
    out: Path,
    task: str,
    metadata: dict,
    limit: int = 3,
    also: tuple[str, ...] = (),
):
    """lm_eval CLI on SmolLM2: (printed table, results of the task, logged samples, path),
    the run doing the tasks ``also`` too. lm-eval's command line indexing our tasks only
    (`OUR_LM_EVAL`): the same run, without first indexing lm-eval's ~14,000 task files, its
    threads waiting passively (`model_run_env`)."""
    command = lm_eval_command(
        (task, *also), model="hf", model_args=f"pretrained={smollm2_folder}", limit=limit,
        apply_chat_template=True, gen_kwargs="max_gen_toks=48", log_samples=True,
        output_path=out, metadata=metadata, program=OUR_LM_EVAL,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=model_run_env())
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    samples_path = next(out.rglob(f"samples_{task}_*.jsonl"))
    return done.stdout, results["results"][task], read_jsonl(samples_path), samples_path


@dataclass
class LmEvalRun:
    out: Path  # lm-eval's --output_path
    table: str
    metrics: dict
    samples: list[dict]
    samples_path: Path
    server: LoopbackServer
    metadata: dict
    requests: int  # judge requests the run made


@contextlib.contextmanager
def pi_emergent_run_made(smollm2_folder: Path, root: Path) -> Iterator[LmEvalRun]:
    """`pi_emergent_run` (a fixture of tests/conftest.py, so that tests/ccpt and
    tests/leaderboard/bundles/test_rescore_stored.py share it): SmolLM2 on 4 items of
    ccpt_pi_emergent, judged by a loopback server; the same run does 4 items of
    ccpt_npc_emergent with npc_modifier=surface (test_npc_modifier.py's
    test_lm_eval_cli_run_records_the_rule reads them: every CCPT task takes the option, only
    noun phrase completion uses it). Made once per worker, by its first user: one lm_eval
    process (`run_lm_eval`: indexing our tasks only, its threads waiting passively) loading
    SmolLM2 and generating up to 48 tokens per item. 127 s of setup in test_npc_modifier.py's
    test_lm_eval_cli_run_records_the_rule, the SmolLM2 folder's conversion included (on 2
    cores at load 9-10; 20 s for ccpt_pi_emergent alone at load 5-7, 113 s before the run
    indexed our tasks only and waited passively; 2026-12-06)."""
    with LoopbackServer() as server:
        metadata = {
            "judge_base_url": server.base_url,
            "judge_model": "gpt-4o",
            "judge_cache": str(root / "judge.sqlite"),
            "npc_modifier": "surface",  # for ccpt_npc_emergent
        }
        out = root / "out"
        table, metrics, samples, path = run_lm_eval(
            smollm2_folder, out, "ccpt_pi_emergent", metadata, limit=4, also=(NPC_TASK,)
        )
        yield LmEvalRun(out, table, metrics, samples, path, server, metadata, server.stats.requests)

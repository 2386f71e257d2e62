"""Real runs of SmolLM2 for the report tests: one lm-eval run and one Inspect run, each of
ccpt_tp and ccpt_pi_emergent (judged by the loopback server), made once per session; the
lm-eval run also does mcrae_esslli44 (a second benchmark, no judge)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from conceptcomb.testing import commands
from conceptcomb.testing.judge_server import LoopbackServer
from tests.conftest import made_once, require_shared_data
from tests.leaderboard.run_support import run_ok

TASKS = ("ccpt_tp", "ccpt_pi_emergent")
LM_EVAL_ONLY = ("mcrae_esslli44",)
LIMIT = 3


@dataclass
class RealRuns:
    lm_eval_dir: Path  # lm-eval --output_path
    inspect_dir: Path  # Inspect --log-dir
    judge_url: str


def lm_eval_command(gguf: Path, out: Path, metadata: dict) -> list[str]:
    return commands.lm_eval_command(
        TASKS + LM_EVAL_ONLY, model="hf",
        model_args=f"pretrained={gguf.parent},gguf_file={gguf.name}", limit=LIMIT,
        apply_chat_template=True, gen_kwargs="max_gen_toks=48", log_samples=True,
        output_path=out, metadata=metadata, program=commands.OUR_LM_EVAL,
    )  # fmt: skip


def inspect_command(model: list[str], logs: Path, metadata: dict) -> list[str]:
    return commands.inspect_eval_command(
        [f"conceptcomb/{task}" for task in TASKS], model=model, task_args=metadata,
        limit=LIMIT, max_tokens=48, log_dir=logs, display="plain",
    )  # fmt: skip


def make_runs(gguf: Path, model: list[str], root: Path, server: LoopbackServer) -> RealRuns:
    require_shared_data()  # ccpt_pi_emergent reads the CCPT files
    metadata = {
        "judge_base_url": server.base_url,
        "judge_model": "gpt-4o",
        "judge_cache": str(root / "judge.sqlite"),
    }
    runs = RealRuns(root / "lm-eval", root / "inspect", server.base_url)
    run_ok(lm_eval_command(gguf, runs.lm_eval_dir, metadata))
    run_ok(inspect_command(model, runs.inspect_dir, metadata))
    return runs


@pytest.fixture(scope="session")
def real_runs(
    smollm2_gguf: Path, smollm2_folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> RealRuns:
    """The module docstring's runs, made once per session (`made_once`: under xdist by the first
    worker asking, for all): its first user pays them. One lm_eval process (lm-eval's command
    line indexing our tasks only, `OUR_LM_EVAL`) and one inspect eval process, their threads
    waiting passively (`run_ok`), each loading SmolLM2 from the GGUF itself (every load
    de-quantizes it, ~20 s of CPU), 3 items per task, replies up to 48 tokens, the judge questions
    answered by the loopback server. With test_bundle.py's `calibration` and `bundles`: 110 s of
    setup in test_schema_problems_name_the_field (376 s before those two changes; both on 2
    cores at load 4-5.5, 2026-12-06); 450 s in test_bundle.py alone at load 9-10, the
    SmolLM2 folder's conversion included."""
    # While working on the report, CONCEPTCOMB_TEST_REPORT_RUNS=DIR keeps the runs in DIR and
    # reuses them (the model runs take minutes); by default they are made afresh.
    kept = os.environ.get("CONCEPTCOMB_TEST_REPORT_RUNS")
    if kept and (Path(kept) / "inspect").is_dir():
        return RealRuns(Path(kept) / "lm-eval", Path(kept) / "inspect", _judge_url(Path(kept)))

    def make(root: Path) -> RealRuns:
        with LoopbackServer() as server:
            model = gguf_inspect_model(smollm2_gguf, smollm2_folder)
            return make_runs(smollm2_gguf, model, root, server)

    if kept:
        return make(Path(kept))
    root = made_once(tmp_path_factory, "report-runs", make)
    return RealRuns(root / "lm-eval", root / "inspect", _judge_url(root))


def gguf_inspect_model(gguf: Path, folder: Path) -> list[str]:
    """Inspect's hf provider on the GGUF itself (the converted folder lends its tokenizer), as
    the lm-eval run: both runs are then one model to the report, named by its GGUF file."""
    return [
        "--model", "hf/smollm2", "-M", f"model_path={gguf.parent}", "-M", f"gguf_file={gguf.name}",
        "-M", f"tokenizer={folder}", "-M", "do_sample=false",
    ]  # fmt: skip


def _judge_url(root: Path) -> str:
    results = json.loads(next((root / "lm-eval").rglob("results_*.json")).read_text())
    return results["configs"]["ccpt_pi_emergent"]["metadata"]["judge_base_url"]


@pytest.fixture(scope="session")
def group_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full CCPT group's bundle (`conceptcomb.testing.recorded.build_group_bundle`: its
    four tasks on all 1,534 test items, the authors' recorded answers scored, their recorded
    ratings given by a loopback judge), made once per session (`made_once`: under xdist by
    the first worker asking, for all) for the modules that only read it: 5-7 s of CPU each
    time it is made (2026-12-06), once a module before."""
    from conceptcomb.testing.recorded import build_group_bundle

    require_shared_data()
    folder = made_once(tmp_path_factory, "ccpt-group-bundle", build_group_bundle)
    (bundle,) = (folder / "bundles").glob("*.bundle.json")
    return bundle

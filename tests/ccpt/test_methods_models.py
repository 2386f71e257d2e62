"""The paper's methods with the real small model (SmolLM2-135M) in both frameworks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from conceptcomb.ccpt.methods.oracle_rescore import rescore_oracle
from conceptcomb.ccpt.methods.spreading_prompts import filter_prompt
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.commands import OUR_LM_EVAL, inspect_eval_command, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_spreading import model_prompts
from tests.conftest import read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

NOFILTER = "ccpt_pi_emergent_sa_conceptnet_nofilter"
ORACLE = "ccpt_pi_emergent_oracle"


def test_lm_eval_runs_the_no_filter_variant_and_the_oracle(
    smollm2_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with LoopbackServer() as server:
        metadata = {"judge_base_url": server.base_url, "judge_cache": str(tmp_path / "j.sqlite")}
        command = lm_eval_command(
            [NOFILTER, ORACLE], model="hf", model_args=f"pretrained={smollm2_folder}", limit=1,
            apply_chat_template=True, gen_kwargs="max_gen_toks=24", log_samples=True,
            output_path=out, metadata=metadata, program=OUR_LM_EVAL,
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
        oracle_path = next(out.rglob(f"samples_{ORACLE}_*.jsonl"))
        settings = JudgeSettings.resolve(metadata)
        rescored = rescore_oracle(ORACLE, oracle_path, settings)
    # the no-filter variant: one generation per item, its prompt lists C_T, judged as usual
    samples = read_jsonl(next(out.rglob(f"samples_{NOFILTER}_*.jsonl")))
    for sample in samples:
        trace = json.loads(sample["doc"]["spreading_activation"])
        assert 1 <= len(trace["iterations"]) <= 5 and trace["settings"]["use_filter"] is False
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        assert f"- Relevant concepts: {sample['doc']['relevant_concepts']}" in prompt
    assert "E,judged" in results[NOFILTER]
    # the oracle: five sampled replies per item, the bound under its own names only
    oracle = read_jsonl(oracle_path)
    assert [len(s["resps"][0]) for s in oracle] == [5]
    assert "E_oracle,oracle" in results[ORACLE] and "E,oracle" not in results[ORACLE]
    for name in ("E_oracle", "R_HMP_oracle", "R_NP_oracle"):
        assert rescored.metrics[name].value == pytest.approx(results[ORACLE][f"{name},oracle"])


def test_inspect_spreading_activation_with_the_model(
    smollm2_inspect_model: list[str], tmp_path: Path
) -> None:
    """The acceptance command, shortened: the filter is SmolLM2, each C_t is logged."""
    command = inspect_eval_command(
        "conceptcomb/ccpt_pi_emergent_sa_conceptnet", model=smollm2_inspect_model,
        task_args={"judge": "off", "sa_iterations": 2}, limit=1, max_tokens=24,
        log_dir=tmp_path / "logs", display="plain", log_format="json",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    log_path = next((tmp_path / "logs").glob("*.json"))
    log = json.loads(log_path.read_text())
    assert log["status"] == "success"
    sample = log["samples"][0]
    trace = sample["metadata"]["spreading_activation"]
    steps = trace["iterations"]
    assert 1 <= len(steps) <= 2 and trace["stopped"] in ("converged", "max_iterations")
    prompts = model_prompts(read_eval_log(str(log_path)))
    assert prompts[0] == filter_prompt(steps[0]["filter_input"], trace["objective"])
    assert len(prompts) == len(steps) + 1  # one filter call per iteration, then the answer
    assert f"- Relevant concepts: {sample['metadata']['relevant_concepts']}" in prompts[-1]

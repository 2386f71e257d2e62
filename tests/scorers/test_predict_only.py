"""lm-eval's predict-only, in every form its command line accepts, never asks the judge.

Each test runs lm-eval's own command line (its parser and runner; `OUR_LM_EVAL`, which
indexes our tasks only) on ``ccpt_pi_emergent`` (a judged task) with a
loopback model that answers with the dataset's answers and a loopback judge that counts
what it is asked: a run that only saves predictions asks it nothing, not even the preflight
check; the same run without predict-only asks it (so the check can fail).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.prompts import user_prompt
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from tests.ccpt.test_lm_eval import task_manager

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

TASK = "ccpt_pi_emergent"
LIMIT = 3


@pytest.fixture(scope="module")
def model() -> Iterator[ModelServer]:
    """Replies for the first items: the dataset's answers, which the judge would rate."""
    spec = spec_by_name(TASK)
    items = load_items(spec)[:LIMIT]
    with ModelServer({user_prompt(spec, item): dataset_answer(spec, item) for item in items}) as m:
        yield m


def run_lm_eval(model: ModelServer, judge: LoopbackServer, out: Path, *extra: str) -> Path:
    """``lm_eval`` on the loopback model, judged by ``judge``; the folder of its outputs."""
    metadata = {
        "judge_base_url": judge.base_url,
        "judge_model": "gpt-4o",
        "judge_cache": str(out.parent / f"{out.name}-judge.sqlite"),
    }
    command = lm_eval_command(
        TASK, model="local-chat-completions",
        model_args=f"model=m,base_url={model.base_url}/chat/completions", limit=LIMIT,
        apply_chat_template=True, output_path=out, metadata=metadata, program=OUR_LM_EVAL,
    )  # fmt: skip
    command += extra  # how the test asks for predictions only, as a user may write it
    model.reset()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert model.asked == LIMIT and model.unknown == 0
    return out


def test_a_normal_run_asks_the_judge(model: ModelServer, judge_server, tmp_path: Path) -> None:
    run_lm_eval(model, judge_server, tmp_path / "out", "--log_samples")
    assert judge_server.stats.checks == 1
    assert judge_server.stats.requests > 0


@pytest.mark.parametrize(
    "form",
    [
        ["--predict_only"],
        ["-x"],
        ["--pred"],  # argparse takes an unambiguous prefix of an option
        ["--config", "predict_only.yaml"],
    ],
    ids=["--predict_only", "-x", "--pred", "--config"],
)
def test_predict_only_never_asks_the_judge(
    form: list[str], model: ModelServer, judge_server, tmp_path: Path
) -> None:
    if form[0] == "--config":
        config = tmp_path / form[1]
        config.write_text("predict_only: true\n", encoding="utf-8")
        form = ["--config", str(config)]
    out = run_lm_eval(model, judge_server, tmp_path / "out", *form)
    assert judge_server.stats.checks == 0
    assert judge_server.stats.requests == 0
    # lm-eval did run predict-only: the replies were saved, no metric was computed.
    (samples,) = out.rglob(f"samples_{TASK}_*.jsonl")
    assert len(samples.read_text(encoding="utf-8").splitlines()) == LIMIT
    results = json.loads(next(out.rglob("results_*.json")).read_text(encoding="utf-8"))
    metrics = {key.split(",")[0] for key in results["results"][TASK] if "," in key}
    assert metrics == {"bypass", "bypass_stderr"}


@pytest.mark.parametrize("bypassed", [True, False], ids=["metrics-bypassed", "metrics-kept"])
def test_a_task_whose_metrics_are_bypassed_is_not_judged(
    bypassed: bool, judge_server, fresh_cache: Path
) -> None:
    """A caller of lm-eval's ``evaluate`` (no ``simple_evaluate``) that swapped the task's
    metrics for ``bypass`` itself, as ``simple_evaluate(predict_only=True)`` does: the judge
    filter reads that from the task it runs for."""
    manager = task_manager(judge_base_url=judge_server.base_url, judge_model="gpt-4o")
    task = manager.load([TASK])["tasks"][TASK]
    if bypassed:
        task.override_metric(metric_name="bypass")
    task.build_all_requests(limit=LIMIT, apply_chat_template=False)
    spec = spec_by_name(TASK)
    items = {user_prompt(spec, item): item for item in load_items(spec)[:LIMIT]}
    for instance in task.instances:
        instance.resps = [dataset_answer(spec, items[instance.doc["prompt"]])]
    task.apply_filters()
    assert len(task.instances) == LIMIT
    assert all(instance.filtered_resps for instance in task.instances)
    assert (judge_server.stats.requests == 0) is bypassed

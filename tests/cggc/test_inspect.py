"""CGGC in Inspect: the acceptance command, ordered chat inputs, parity with lm-eval's metrics."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model
from scipy import stats as scipy_stats

from conceptcomb.cggc import lm_eval_hooks
from conceptcomb.cggc.analysis.report import collect
from conceptcomb.cggc.docs import item_doc, task_pairs
from conceptcomb.cggc.inspect_tasks import TASKS
from conceptcomb.cggc.metrics import METRIC_NAMES
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.testing.commands import inspect_eval_command


def mock_model(replies: list[str]):
    outputs = [ModelOutput.from_content(model="mockllm/model", content=r) for r in replies]
    return get_model("mockllm/model", custom_outputs=outputs)


def test_cli_setting_and_order_options(built_dir: Path, tmp_path: Path) -> None:
    """`inspect eval conceptcomb/cggc -T setting=ood -T order=easy_to_hard` (acceptance)."""
    command = inspect_eval_command(
        "conceptcomb/cggc", model="mockllm/model",
        task_args={"setting": "ood", "order": "easy_to_hard", "data_dir": built_dir}, limit=2,
        log_dir=tmp_path, display="plain",
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for name in ("rouge2", "bleu4", "meteor", "cider", "spice", "coverage"):
        assert name in done.stdout
    found = collect([tmp_path])  # `conceptcomb cggc report` reads Inspect logs too
    assert set(found) == {"cggc_ood_easy2hard (inspect)"}
    assert set(found["cggc_ood_easy2hard (inspect)"]) == set(METRIC_NAMES)


def test_the_solver_shows_ordered_demonstrations_as_chat(built_dir: Path, tmp_path: Path) -> None:
    task = TASKS["cggc"](setting="ood", order="easy_to_hard", data_dir=str(built_dir))
    for sample in list(task.dataset)[:10]:  # the item alone: the solver adds the rest
        assert [m.role for m in sample.input] == ["system", "user"]
    log = inspect_eval(task, model="mockllm/model", limit=5, display="none", log_dir=str(tmp_path))
    assert log[0].status == "success", log[0].error
    for sample in log[0].samples or []:
        roles = [m.role for m in sample.messages]
        assert roles == ["system"] + ["user", "assistant"] * 4 + ["user", "assistant"]
        types = sample.metadata["demonstration_types"]
        assert types == sorted(types) and all(types)
        assert sample.metadata["fewshot_ids"] == sample.metadata["demonstration_ids"]
    named = TASKS["cggc_ood_easy2hard"](data_dir=str(built_dir))
    assert [s.id for s in named.dataset] == [s.id for s in task.dataset]


def test_same_replies_same_numbers_as_lm_eval(built_dir: Path, tmp_path: Path) -> None:
    spec, options = spec_by_name("cggc_ood"), TaskOptions.resolve({"data_dir": str(built_dir)})
    pairs = task_pairs(spec, options)[:4]
    replies = [" A dog wags its tail.", pairs[1][0].target, "\nsomething else entirely", ""]
    log = inspect_eval(
        TASKS["cggc_ood"](data_dir=str(built_dir)), model=mock_model(replies), limit=len(replies),
        max_samples=1, display="none", log_dir=str(tmp_path),
    )[0]  # fmt: skip
    assert log.status == "success", log.error
    ours = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    # lm-eval: process_results per doc, then the YAML's aggregations
    docs = [item_doc(item, demos, spec, options) for item, demos in pairs]
    per_doc = [lm_eval_hooks.process_results(d, [r]) for d, r in zip(docs, replies, strict=True)]
    theirs = {}
    for name in METRIC_NAMES:
        values = [p[name] for p in per_doc]
        aggregate = getattr(lm_eval_hooks, f"agg_{name}", None)
        theirs[name] = aggregate(values) if aggregate else sum(values) / len(values)
    for name in METRIC_NAMES:
        if math.isnan(theirs[name]):
            assert math.isnan(ours[name]), name
        else:
            assert ours[name] == pytest.approx(theirs[name]), name
    assert ours["bleu4"] > 0 and ours["coverage"] > 0
    for name in ("rouge2", "rougeL", "coverage"):  # means over items: their standard errors
        values = [p[name] for p in per_doc if not math.isnan(p[name])]
        assert ours[f"{name}_stderr"] == pytest.approx(scipy_stats.sem(values)), name


def test_a_misspelt_option_is_refused() -> None:
    """conceptcomb/cggc refuses an unknown -T option, as the named tasks do (one line)."""
    from conceptcomb.common.errors import ConfigError

    with pytest.raises(ConfigError, match=r"cggc has no option oder \(-T\): its options are"):
        TASKS["cggc"](oder="easy2hard")
    with pytest.raises(ConfigError, match="cggc_ood has no option setting"):
        TASKS["cggc_ood"](setting="id")


def test_an_option_the_name_fixes_points_to_the_task_that_takes_it() -> None:
    """`conceptcomb/cggc_ood -T order=...` (issue 54): the refusal names the command of the
    README's order example, conceptcomb/cggc -T setting=ood -T order=..., and the named task
    with that order; a verified task, the verified task with that order."""
    from conceptcomb.common.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        TASKS["cggc_ood"](order="easy_to_hard")
    assert str(refused.value) == (
        "cggc_ood has no option order (-T): its name fixes it; for order=easy_to_hard run "
        "conceptcomb/cggc -T setting=ood -T order=easy_to_hard (or conceptcomb/cggc_ood_easy2hard)."
    )
    with pytest.raises(ConfigError, match=r"run conceptcomb/cggc -T setting=id -T structure=B"):
        TASKS["cggc_id"](structure="B")  # no named task of id with one structure
    with pytest.raises(ConfigError, match=r"run conceptcomb/cggc_ood_easy2hard_verified\.$"):
        TASKS["cggc_ood_verified"](order="easy2hard")

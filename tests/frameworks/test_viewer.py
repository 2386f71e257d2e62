"""Inspect View's sample list of our tasks (issue 51, item 8): each task declares its columns
(``Task(viewer=ViewerConfig(...))``, from its benchmark's room through the shared task
builder), and a real Inspect log of the task (mockllm, ``limit=2``; ``inspect_ai.eval`` of
the ``@task`` function's Task: ``inspect eval conceptcomb/<task>`` resolves the installed
package's, not a checkout's on PYTHONPATH) carries them and holds every score the columns
name, on every sample, and the item fields the rooms name in the samples' metadata (Inspect
0.3.285's sample list takes built-in and score columns only; its filter bar reads the
metadata)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.viewer import ViewerConfig

from conceptcomb.testing.judge_server import LoopbackServer

BUILTINS = {"sampleStatus", "sampleId", "sampleUuid", "epoch", "input", "target", "answer",
            "tokens", "duration", "retries", "error", "limit"}  # fmt: skip
# task -> (benchmark, score keys the columns must show, item fields in the sample metadata)
CASES = {
    "ccpt_tp": ("ccpt", ["accuracy"], ["property", "label", "combination"]),
    "ccpt_pi_emergent": ("ccpt", ["E", "R_HMP", "R_NP"], ["property", "label", "combination"]),
    "cggc_ood": ("cggc", ["rouge2", "rougeL", "coverage"], ["concepts", "structure_type"]),
    "abspyramid_det_noun_zs": ("abspyramid", ["accuracy", "pred"], ["event", "concept", "type"]),
    "abspyramid_gen_noun": ("abspyramid", ["rouge2", "rougeL"], ["event", "references", "type"]),
    "mcrae_esslli44": ("mcrae", ["P@10", "R@10", "n_properties"], ["concept"]),
}
SHARED = {"ccpt_tp", "ccpt_pi_emergent", "mcrae_esslli44"}  # need ../shared/data


def _task(name: str, options: dict[str, str]) -> object:
    import importlib

    benchmark = CASES[name][0]
    module = importlib.import_module(f"conceptcomb.{benchmark}.inspect_tasks")
    return getattr(module, name)(**options)


def _options(name: str, data: Path, judge: LoopbackServer) -> dict[str, str]:
    if name.startswith("abspyramid"):
        return {"data_dir": str(data)}
    if name == "ccpt_pi_emergent":
        return {"judge_base_url": judge.base_url, "judge_model": "gpt-4o", "judge_cache": "off"}
    return {}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.shared_data] if n in SHARED else []) for n in CASES],
)
def test_the_sample_list_shows_each_tasks_values(
    name: str,
    abspyramid_dir: Path,
    tmp_path: Path,
) -> None:
    _, keys, fields = CASES[name]
    with LoopbackServer() as judge:
        task = _task(name, _options(name, abspyramid_dir, judge))
        viewer = task.viewer  # type: ignore[attr-defined]
        assert isinstance(viewer, ViewerConfig)
        view = viewer.task_samples_view
        columns = [column.id for column in view.columns]
        scores = [c.split("__") for c in columns if c.startswith("score__")]
        assert {c for c in columns if not c.startswith("score__")} <= BUILTINS
        assert "sampleId" in columns and "answer" in columns
        assert set(keys) <= {key for _, _, key in scores}
        (log,) = inspect_eval(task, model="mockllm/model", limit=2, log_dir=str(tmp_path),
                              display="none")  # fmt: skip
    assert log.status == "success" and log.eval.viewer == viewer  # the log carries it
    assert log.samples and len(log.samples) == 2
    for sample in log.samples:
        for _, scorer, key in scores:  # every score column names a key each sample holds
            value = sample.scores[scorer].value
            assert isinstance(value, dict) and key in value, (scorer, key, value)
        assert set(fields) <= set(sample.metadata)

"""Each card's headline metric is the one Inspect's log shows as the task's headline and the
one the Hub export writes (issue 40, item 5: CGGC's card said BLEU-4 while Inspect showed
ROUGE-2; the paper leads every results table with ROUGE-2, now the card's headline).

lm-eval's printed table sorts a task's metrics by name (``lm_eval.utils.make_table``:
``sorted(metric_items)``), which no task setting changes: its first row is the headline for
CCPT (E, C, accuracy) and McRae (P@10), the alphabetically first metric otherwise (CGGC's
bleu3, AbsPyramid's accuracy and bleu1); the test below pins that, so a change of either
shows here."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, headline_metric
from inspect_ai.model import ModelOutput, get_model

from conceptcomb.benchmarks import benchmarks, get
from tests.conftest import HAS_SHARED_DATA


def _headline(log: EvalLog) -> str:
    """The metric Inspect resolves as the log's headline: a per-key score's name (its
    ``mean``), else the metric's own name (a corpus metric of the scorer's score)."""
    resolved = headline_metric(log)
    assert resolved is not None
    return resolved.score.name if resolved.name in ("mean", "total") else resolved.name


def _run(task, replies: list[str], log_dir: Path) -> EvalLog:
    outputs = [ModelOutput.from_content(model="mockllm/model", content=r) for r in replies]
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(task, model=model, limit=len(replies), max_samples=1,
                         display="none", log_dir=str(log_dir))  # fmt: skip
    assert log.status == "success", log.error
    return log


CASES = [
    ("cggc", "cggc_ood", {}, ["A dog runs across the field."] * 2),
    ("abspyramid", "abspyramid_det_noun_zs", {"data_dir": None}, ["Yes", "No"]),
    ("abspyramid", "abspyramid_gen_noun", {"data_dir": None}, ["a dog", "an animal"]),
]
SHARED = [
    ("ccpt", "ccpt_tp", {}, ['{"property_type": "emergent"}'] * 2),
    ("mcrae", "mcrae_esslli44", {}, ["has wings\nlays eggs"] * 2),
]


@pytest.mark.parametrize(
    ("key", "task", "options", "replies"),
    CASES + [pytest.param(*case, marks=pytest.mark.shared_data) for case in SHARED],
    ids=[case[1] for case in CASES + SHARED],
)
def test_inspect_shows_the_cards_headline(
    key: str, task: str, options: dict, replies: list[str], tmp_path: Path, request
) -> None:
    if key in ("ccpt", "mcrae") and not HAS_SHARED_DATA:
        pytest.skip("needs ../shared/data")
    if "data_dir" in options:
        options = {"data_dir": str(request.getfixturevalue("abspyramid_dir"))}
    tasks = __import__(f"conceptcomb.{key}.inspect_tasks", fromlist=["TASKS"]).TASKS
    log = _run(tasks[task](**options), replies, tmp_path)
    assert _headline(log) == get(key).card.tasks[task].headline_metric


def test_lm_eval_tables_sort_metrics_by_name() -> None:
    """What lm-eval's printed table shows first, for each task with an lm-eval name."""
    import lm_eval.utils

    first = {}
    for benchmark in benchmarks():
        card = benchmark.card
        for task, metrics in benchmark.tasks().items():
            if card.tasks[task].lm_eval_task:
                row = {f"{m.name},none": 1.0 for m in metrics} | {"alias": task}
                table = lm_eval.utils.make_table(
                    {"results": {task: row}, "versions": {task: "1"}, "n-shot": {task: 0}}
                )
                first[task] = table.splitlines()[2].split("|")[5].strip()
    headline = {t: get(t.split("_")[0]).card.tasks[t].headline_metric for t in first}
    differ = {t: (first[t], headline[t]) for t in first if first[t] != headline[t]}
    assert {t.split("_")[0] for t in differ} == {"cggc", "abspyramid"}
    assert all(t.startswith(("ccpt", "mcrae")) for t in set(first) - set(differ))
    assert differ["cggc_ood"] == ("bleu3", "rouge2")

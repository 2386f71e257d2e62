"""Multi-oracle (section 4.1, Table 3's gray rows) on fixed judged replies, worked by hand.

The judge is a real loopback HTTP server answering from a table of ratings r (1-10), so
R = (r - 1) / 9: r = 1, 4, 7, 10 give R = 0, 1/3, 2/3, 1 (x 100 in the metrics).

Item A, "a boat on the rocks" (head boat, modifier rock), five replies:
  wet      NP 10, boat 4, rock 1  -> R_HMP 33.33, R_NP 100,   E 66.67
  stuck    NP 7,  boat 1, rock 4  -> R_HMP 33.33, R_NP 66.67, E 33.33
  heavy    NP 4,  boat 1, rock 10 -> R_HMP 100,   R_NP 33.33, E 0
  hollow   NP 1,  boat 1, rock 1  -> R_HMP 0,     R_NP 0,     E 0
  {"combination": "x"} (no property) -> format failure, E 0, relevances undefined
  best: E 66.67 (wet), R_NP 100 (wet), R_HMP 0 (hollow): each metric on its own, as the
  authors' eval_property.py picks them.
Item B, "a lettuce without water" (head lettuce, modifier water):
  wilted   NP 7,  lettuce 4, water 1  -> R_HMP 33.33, R_NP 66.67, E 33.33
  green x4 NP 4,  lettuce 10, water 1 -> R_HMP 100,   R_NP 33.33, E 0
  best: E 33.33, R_NP 66.67, R_HMP 33.33.
Means over the two items: E_oracle 50, R_NP_oracle 83.33, R_HMP_oracle 16.67; one format
failure. The base metric over the same ten replies would be E = (66.67 + 33.33 + 33.33) / 10
= 13.33: the oracle is reported beside it, never instead of it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.lm_eval_yaml import YAML_DIR
from conceptcomb.ccpt.methods.oracle import best_of, score_oracle_replies
from conceptcomb.ccpt.methods.oracle_rescore import rescore_oracle
from conceptcomb.ccpt.metrics import FORMAT_FAILURES, JUDGE_FAILURES, NAN
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import LoopbackServer
from tests.ccpt.test_inspect import mock_model

pytestmark = pytest.mark.shared_data


EMERGENT = spec_by_name("ccpt_pi_emergent_oracle")
CANCELED = spec_by_name("ccpt_pi_canceled_oracle")


def prop(value: str) -> str:
    return json.dumps({"property": value})


REPLIES = [
    [prop("wet"), prop("stuck"), prop("heavy"), prop("hollow"), '{"combination": "x"}'],
    [prop("wilted"), prop("green"), prop("green"), prop("green"), prop("green")],
]
RATINGS = {
    ("a boat on the rocks", "wet"): 10, ("boat", "wet"): 4, ("rock", "wet"): 1,
    ("a boat on the rocks", "stuck"): 7, ("boat", "stuck"): 1, ("rock", "stuck"): 4,
    ("a boat on the rocks", "heavy"): 4, ("boat", "heavy"): 1, ("rock", "heavy"): 10,
    ("a boat on the rocks", "hollow"): 1, ("boat", "hollow"): 1, ("rock", "hollow"): 1,
    ("a lettuce without water", "wilted"): 7, ("lettuce", "wilted"): 4, ("water", "wilted"): 1,
    ("a lettuce without water", "green"): 4, ("lettuce", "green"): 10, ("water", "green"): 1,
}  # fmt: skip
PER_ITEM = [
    {"E_oracle": 200 / 3, "R_NP_oracle": 100.0, "R_HMP_oracle": 0.0},
    {"E_oracle": 100 / 3, "R_NP_oracle": 200 / 3, "R_HMP_oracle": 100 / 3},
]
MEANS = {"E_oracle": 50.0, "R_NP_oracle": 250 / 3, "R_HMP_oracle": 50 / 3}


def emergent_items():
    items = load_items(EMERGENT)[:2]
    assert [i.combination for i in items] == ["a boat on the rocks", "a lettuce without water"]
    return items


def test_best_of_n_per_item_and_over_items(fresh_cache: Path) -> None:
    with LoopbackServer(ratings=RATINGS) as server:
        settings = JudgeSettings.resolve({"judge_base_url": server.base_url})
        scores, usage = score_oracle_replies(EMERGENT, emergent_items(), REPLIES, settings)
    assert usage is not None and usage.failures == 0
    for score, expected in zip(scores, PER_ITEM, strict=True):
        for name, value in expected.items():
            assert score.metrics[name] == pytest.approx(value), name
        assert len(score.samples) == 5
    assert [s.metrics[FORMAT_FAILURES] for s in scores] == [1.0, 0.0]
    # the base metric on the same replies is lower and is not what the oracle reports
    base = [reply.metrics["E"] for score in scores for reply in score.samples]
    assert sum(base) / len(base) == pytest.approx(40 / 3)
    assert "E" not in scores[0].metrics


def test_canceled_picks_the_opposite_relevances() -> None:
    """Cancellation: best C is the highest, R_HMP the highest, R_NP the lowest."""
    replies = [
        {"R_HMP": 100.0, "R_NP": 0.0, "C": 100.0},
        {"R_HMP": 66.0, "R_NP": 33.0, "C": 33.0},
        {"R_HMP": NAN, "R_NP": NAN, "C": 0.0, FORMAT_FAILURES: 1.0},
    ]
    best = best_of(CANCELED, replies)
    assert (best["C_oracle"], best["R_HMP_oracle"], best["R_NP_oracle"]) == (100.0, 100.0, 0.0)
    assert best[FORMAT_FAILURES] == 1.0 and best[JUDGE_FAILURES] == 0.0
    emergent = best_of(EMERGENT, [{k.replace("C", "E"): v for k, v in r.items()} for r in replies])
    assert (emergent["R_HMP_oracle"], emergent["R_NP_oracle"]) == (66.0, 33.0)


def test_a_judge_failure_leaves_the_item_out() -> None:
    """An outage must not move the bound: any failed reply makes the item's values undefined."""
    replies = [{"R_HMP": 0.0, "R_NP": 100.0, "E": 100.0}, {"R_HMP": NAN, "R_NP": NAN, "E": NAN,
               JUDGE_FAILURES: 1.0}]  # fmt: skip
    best = best_of(EMERGENT, replies)
    assert math.isnan(best["E_oracle"]) and best[JUDGE_FAILURES] == 1.0


def test_inspect_oracle_samples_n_and_reports_the_bound(tmp_path: Path, fresh_cache: Path) -> None:
    with LoopbackServer(ratings=RATINGS) as server:
        task = TASKS[EMERGENT.name](judge_base_url=server.base_url)
        log = inspect_eval(
            task, model=mock_model([r for group in REPLIES for r in group]), limit=2,
            max_samples=1, display="none", log_dir=str(tmp_path),
        )[0]  # fmt: skip
    assert log.status == "success", log.error
    assert log.eval.config.epochs in (None, 1)
    generate = log.plan.config
    assert (generate.temperature, generate.top_p) == (0.7, 0.95)  # Appendix B.1
    means = {s.name: s.metrics["mean"].value for s in log.results.scores if "mean" in s.metrics}
    for name, value in MEANS.items():
        assert means[name] == pytest.approx(value), name
    assert "E" not in means  # no main metric in the oracle task
    samples = sorted(log.samples, key=lambda s: str(s.id))
    assert [len(s.output.choices) for s in samples] == [5, 5]


def test_conceptcomb_score_gives_the_same_bound(tmp_path: Path, fresh_cache: Path) -> None:
    path = tmp_path / "replies.jsonl"
    rows = [{"doc": item.as_doc(), "responses": group}
            for item, group in zip(emergent_items(), REPLIES, strict=True)]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with LoopbackServer(ratings=RATINGS) as server:
        settings = JudgeSettings.resolve({"judge_base_url": server.base_url})
        report = rescore_oracle(EMERGENT.name, path, settings, tmp_path / "per_item.jsonl")
    for name, value in MEANS.items():
        assert report.metrics[name].value == pytest.approx(value), name
    assert report.metrics[FORMAT_FAILURES].value == 1.0
    per_item = [json.loads(line) for line in (tmp_path / "per_item.jsonl").read_text().splitlines()]
    assert per_item[1]["metrics"]["E_oracle"] == pytest.approx(100 / 3)


def test_lm_eval_yaml_samples_five_replies_as_appendix_b1() -> None:
    text = (YAML_DIR / "ccpt_pi_emergent_oracle.yaml").read_text()
    for line in ("repeats: 5", "do_sample: true", "temperature: 0.7", "top_p: 0.95"):
        assert line in text
    assert "- metric: E_oracle" in text and "- metric: E\n" not in text


def test_sample_n_keeps_n_replies_each_drawn_with_its_own_seed(tmp_path: Path) -> None:
    """The solver by itself: N calls on the same conversation, the k-th with seed
    ``seed * N + k`` in a seeded run (none in an unseeded one), every reply kept."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model

    from conceptcomb.ccpt.methods.inspect_solvers import sample_n
    from conceptcomb.common.offline import prime_tiktoken_cache

    prime_tiktoken_cache()  # mockllm counts tokens with o200k_base, offline
    for seed, expected in ((4, [12, 13, 14]), (None, [None, None, None])):
        outputs = [ModelOutput.from_content("mockllm/model", text) for text in ("a", "b", "c")]
        model = get_model("mockllm/model", custom_outputs=outputs)
        task = Task(dataset=[Sample(input="Name a property.")], solver=sample_n(3))
        [log] = inspect_eval(task, model=model, seed=seed, log_dir=str(tmp_path), display="none")
        assert log.status == "success", log.error
        [sample] = log.samples
        assert [choice.message.text for choice in sample.output.choices] == ["a", "b", "c"]
        assert sample.metadata["replies"] == ["a", "b", "c"]
        assert [m.role for m in sample.messages] == ["user", "assistant"]  # the first reply
        calls = [event for event in sample.events if event.event == "model"]
        assert sorted((call.config.seed for call in calls), key=str) == expected
        assert all(call.input[-1].text == "Name a property." for call in calls)

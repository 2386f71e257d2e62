"""CGGC relation verification (section 5.3) by an LLM judge, in Inspect and lm-eval.

The judge is the loopback HTTP server: it answers the yes/no prompt "yes" when the sentence
names both concepts of the edge (`deterministic_verdict`), unless a verdict table says
otherwise. Four replies for four items:

  0: every concept of the item's graph          -> every edge yes: verified
  1: the same sentence, but the table says no to its first edge -> not verified
  2: "" (nothing generated)                     -> not verified, no question asked
  3: the first concept only                     -> an edge without both ends: not verified

so verified_share = 100 * 1/4 = 25, and every ``<metric>_verified`` is the metric of item 0
alone: the same value as the plain task on that one reply.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conceptcomb.cggc import verify_hooks
from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.docs import item_doc, task_pairs
from conceptcomb.cggc.inspect_tasks import TASKS
from conceptcomb.cggc.metrics import METRIC_NAMES
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.cggc.verification import edge_questions
from conceptcomb.scorers import lm_eval_judge as lm_eval_support
from conceptcomb.scorers.verification import VERIFICATION_PROMPT, parse_verdict
from conceptcomb.testing.judge_server import LoopbackServer
from tests.cggc.test_inspect import mock_model

SPEC = spec_by_name("cggc_ood_verified")


def test_verdicts_are_read_from_the_dictionary_or_the_first_word() -> None:
    assert parse_verdict('{"answer": "yes"}') is True
    assert parse_verdict('Hmm. {"answer": "maybe"} then {"answer": "No"}') is False
    assert parse_verdict("No, it does not.") is False
    assert parse_verdict("The sentence is fine.") is None  # asked again, then a failure
    assert "{head} --{relation}--> {tail}" in VERIFICATION_PROMPT


def _cases(built_dir: Path) -> tuple[list[CggcItem], list[dict], list[str], dict]:
    options = TaskOptions.resolve({"data_dir": str(built_dir)})
    pairs, seen = [], set()
    for item, demos in task_pairs(spec_by_name("cggc_ood"), options):
        if item.concepts not in seen and len(pairs) < 4:  # four different graphs
            seen.add(item.concepts)
            pairs.append((item, demos))
    items = [item for item, _ in pairs]
    docs = [item_doc(item, demos, SPEC, options) for item, demos in pairs]

    def every_concept(item: CggcItem) -> str:
        ends = dict.fromkeys(e for edge in item.kg_edges() for e in (edge.head, edge.tail))
        return "People see " + " and ".join(ends) + " together."

    replies = [every_concept(items[0]), every_concept(items[1]), "", items[3].concepts[0]]
    first = edge_questions(items[1], replies[1])[0]
    table = {(replies[1].lower(), first.head, first.relation.lower(), first.tail): False}
    return items, docs, replies, table


def test_inspect_reports_the_share_and_the_verified_subset(
    built_dir: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    items, _, replies, table = _cases(built_dir)
    with LoopbackServer(verdicts=table) as server:
        task = TASKS[SPEC.name](data_dir=str(built_dir), judge_base_url=server.base_url)
        log = inspect_eval(task, model=mock_model(replies), max_samples=1, display="none",
                           sample_id=[item.item_id for item in items],
                           log_dir=str(tmp_path / "v"))[0]  # fmt: skip
        asked = server.stats.requests
    assert log.status == "success", log.error
    edges = [len(dict.fromkeys(item.kg_edges())) for item in items]
    assert asked == edges[0] + edges[1] + edges[3]  # nothing asked for the empty reply
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["verified_share"] == pytest.approx(25.0)
    assert metrics["verifier_failures"] == 0
    by_id = {s.id: s.scores["cggc_verified"].metadata["verification"] for s in log.samples}
    assert [by_id[item.item_id]["verified"] for item in items] == [True, False, False, False]
    plain = inspect_eval(
        TASKS["cggc_ood"](data_dir=str(built_dir)), model=mock_model(replies[:1]),
        sample_id=items[0].item_id, display="none", log_dir=str(tmp_path / "plain"),
    )[0]  # fmt: skip
    alone = {name: m.value for name, m in plain.results.scores[0].metrics.items()}
    for name in METRIC_NAMES:
        if name == "spice" and math.isnan(alone[name]):  # no SPICE jars here
            continue
        assert metrics[name + "_verified"] == pytest.approx(alone[name]), name
    assert metrics["coverage"] != pytest.approx(metrics["coverage_verified"])


def test_lm_eval_filter_gives_the_same_numbers(built_dir: Path, fresh_cache: Path) -> None:
    _, docs, replies, table = _cases(built_dir)
    with LoopbackServer(verdicts=table) as server:
        judge = lm_eval_support.resolve_judge_settings({"judge_base_url": server.base_url})
        docs = [{**doc, **judge} for doc in docs]  # as verify_hooks.load_dataset writes them
        filtered = verify_hooks.VerifyFilter().apply([[r] for r in replies], docs)
    per_doc = [verify_hooks.process_results(d, [f]) for d, f in zip(docs, filtered, strict=True)]
    assert [p.get("verified_share") for p in per_doc] == [100.0, 0.0, 0.0, 0.0]
    assert "coverage_verified" in per_doc[0] and "coverage_verified" not in per_doc[1]
    assert [f["verification"]["verified"] for f in filtered] == [True, False, False, False]


def test_judge_off_is_refused_for_verified_tasks(built_dir: Path) -> None:
    from conceptcomb.common.errors import ConfigError
    from conceptcomb.scorers.judge_settings import JudgeSettings
    from conceptcomb.scorers.verification import build_verifier

    with pytest.raises(ConfigError, match="judge is off"):
        build_verifier(JudgeSettings.resolve({"judge": "off"}))


# --- the local verifier's device, dtype and batch options, in both frameworks --------------
def local_options(folder: Path, **extra: object) -> dict[str, object]:
    return {"judge": "local", "judge_model": str(folder), "judge_device": "cpu",
            "judge_dtype": "float32", "judge_batch_size": 4, "judge_cache": "off",
            **extra}  # fmt: skip


@pytest.mark.slow
def test_local_verifier_options_through_lm_eval_and_inspect(
    built_dir: Path, smollm2_folder: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    """The options arrive from --metadata (lm-eval) and -T (Inspect); both runs verify the
    same replies with the batched local verifier (no cache: each asks it) and reach the
    same verdicts."""
    items, docs, replies, _ = _cases(built_dir)
    options = local_options(smollm2_folder)
    judge = lm_eval_support.resolve_judge_settings(options)
    settings = lm_eval_support.doc_judge_settings(judge)
    assert (settings.judge_device, settings.judge_dtype, settings.judge_batch_size) == (
        "cpu", "float32", 4,
    )  # fmt: skip
    filtered = verify_hooks.VerifyFilter().apply(
        [[r] for r in replies], [{**d, **judge} for d in docs]
    )
    lm_eval_verdicts = [f["verification"]["verified"] for f in filtered]
    assert lm_eval_verdicts[2] is False  # the empty reply: nothing to verify
    task = TASKS[SPEC.name](data_dir=str(built_dir), **options)
    log = inspect_eval(task, model=mock_model(replies), max_samples=1, display="none",
                       sample_id=[item.item_id for item in items],
                       log_dir=str(tmp_path / "v"))[0]  # fmt: skip
    assert log.status == "success", log.error
    by_id = {s.id: s.scores["cggc_verified"].metadata["verification"] for s in log.samples}
    assert [by_id[item.item_id]["verified"] for item in items] == lm_eval_verdicts


def test_local_verifier_options_are_checked_before_any_work(
    built_dir: Path, tmp_path: Path
) -> None:
    """A misspelt value, or a device torch does not see, is a one-line error when the task
    is built, in both frameworks: before the model generates anything."""
    import torch

    from conceptcomb.common.errors import ConfigError

    folder = tmp_path / "no-model-needed"
    cases = [({"judge_device": "gpu"}, "judge_device='gpu' is not a device"),
             ({"judge_dtype": "fp8"}, "judge_dtype='fp8': use auto")]  # fmt: skip
    if not torch.cuda.is_available():
        cases.append(({"judge_device": "cuda"}, r"judge_device=cuda: torch .* sees no CUDA"))
    for bad, message in cases:
        with pytest.raises(ConfigError, match=message) as lm_eval_error:
            lm_eval_support.resolve_judge_settings(local_options(folder, **bad))
        with pytest.raises(ConfigError, match=message) as inspect_error:
            TASKS[SPEC.name](data_dir=str(built_dir), **local_options(folder, **bad))
        assert "\n" not in str(lm_eval_error.value) + str(inspect_error.value)

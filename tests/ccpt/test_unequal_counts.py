"""lm-eval's "Metrics were not scored on the same number of documents" (issue 35): a CCPT
task's means are over the items they are defined for, by design; one line of ours says so
instead of lm-eval's warning. A real lm-eval evaluation of our task, the model a stand-in
giving the gold replies, the judge a loopback server that cannot rate one item's concepts."""

from __future__ import annotations

import logging

import pytest
from lm_eval.api.model import LM
from lm_eval.evaluator import simple_evaluate

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.frameworks.lm_eval_metadata import LM_EVAL_AGGREGATION_LOGGER, UnequalCounts
from conceptcomb.testing.judge_server import Faults, LoopbackServer
from tests.ccpt.test_lm_eval import task_manager
from tests.ccpt.test_scoring import gold_reply

SPEC = CcptTaskSpec("pi_emergent")


class CannedReplies(LM):
    """Answers generation requests with the given replies, in order."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = list(replies)

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        return [self.replies[i % len(self.replies)] for i in range(len(requests))]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError


@pytest.mark.shared_data
def test_unequal_counts_are_one_line_of_ours(fresh_cache, capsys, caplog) -> None:
    items = load_items(SPEC)[:4]
    unratable = {c.lower() for c in (items[1].combination, items[1].root, items[1].modifier)}
    faults = Faults(garbage_pairs=frozenset(unratable))
    replies = [gold_reply("pi_emergent", item) for item in items]
    with LoopbackServer(faults=faults) as server, caplog.at_level(logging.WARNING):
        results = simple_evaluate(
            model=CannedReplies(replies),
            tasks=[SPEC.name],
            task_manager=task_manager(judge_base_url=server.base_url, judge_max_retries=0),
            limit=4,
        )
    assert results is not None
    out = capsys.readouterr().out
    ours = [line for line in out.splitlines() if "each metric is over the items" in line]
    assert len(ours) == 1 and ours[0].startswith(f"[conceptcomb] {SPEC.name}: ")
    assert "judge_failures 4" in ours[0] and "E 3" in ours[0]  # counted: 4, the mean: 3
    assert "not scored on the same number" not in caplog.text


def test_other_tasks_keep_lm_eval_s_warning() -> None:
    message = (
        "[arc_easy] Metrics were not scored on the same number of documents (acc,none=3, "
        "acc_norm,none=2). Each metric was aggregated over only the documents that produced it"
    )
    record = logging.LogRecord(
        LM_EVAL_AGGREGATION_LOGGER, logging.WARNING, "", 0, message, (), None
    )
    assert UnequalCounts().filter(record)

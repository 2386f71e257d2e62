"""The capitals example's corpus metric shows something (issue 54): its answers are one
word, so lm-eval's ``bleu`` (4-grams) was 0.00 on every run, right or wrong. Each corpus
aggregation of examples/capitals/capitals_qa.yaml, lm-eval's own, must give full marks to
the right capitals, part of them to near misses, and nothing to wrong words."""

from __future__ import annotations

import json

import pytest
import yaml
from lm_eval.api.registry import get_aggregation

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "capitals"
BUILT_IN = {"mean", "median"}  # per-item means (exact_match): not corpus metrics


def _capitals() -> list[str]:
    lines = (EXAMPLE / "capitals.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["capital"] for line in lines if line]


def _corpus_aggregations() -> list[str]:
    config = yaml.safe_load((EXAMPLE / "capitals_qa.yaml").read_text(encoding="utf-8"))
    return [m["aggregation"] for m in config["metric_list"] if m["aggregation"] not in BUILT_IN]


@pytest.mark.parametrize("aggregation", _corpus_aggregations())
def test_the_corpus_metric_tells_right_near_and_wrong_answers_apart(aggregation: str) -> None:
    score = get_aggregation(aggregation)
    capitals = _capitals()
    right = score([(c, c) for c in capitals])
    near = score([(c, c[:-1]) for c in capitals])  # "Canberr" for "Canberra"
    wrong = score([(c, "Atlantis") for c in capitals])
    assert right > near > wrong >= 0, (right, near, wrong)

"""AbsPyramid's formats in the report (issue 46): CoT against the zero-shot generated answer
on the same detection items, paired; lm-eval runs both against a loopback model whose answer
depends on the prompt it is sent. The difference equals the per-item accuracies' and its p
statsmodels' exact McNemar."""

from __future__ import annotations

import csv
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from conceptcomb.cli import main
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.model_server import ModelServer
from tests.leaderboard.run_support import run_ok

pytestmark = pytest.mark.slow
TASKS = ("abspyramid_det_noun_zs", "abspyramid_det_noun_cot")


def _answer(chat: dict[str, Any]) -> str:
    text = json.dumps(chat["messages"])
    return "Answer: Yes" if zlib.crc32(text.encode()) % 3 else "Answer: No"


def _accuracy(out: Path, task: str) -> dict[str, float]:
    (samples,) = list(out.rglob(f"samples_{task}_2*.jsonl"))
    rows = [json.loads(line) for line in samples.read_text().splitlines() if line.strip()]
    return {str(r["doc_id"]): float(r["accuracy"]) for r in rows}


def test_cot_against_the_zero_shot_answer(abspyramid_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "lm-eval"
    with ModelServer({}, reply_for=_answer) as server:
        run_ok(lm_eval_command(
            TASKS, model="local-chat-completions",
            model_args=f"model=loopback,base_url={server.base_url}/chat/completions,"
            "num_concurrent=4,max_retries=1",
            program=OUR_LM_EVAL, apply_chat_template=True,
            log_samples=True, metadata={"data_dir": str(abspyramid_dir)}, output_path=out,
        ))  # fmt: skip
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report), "--no-plots"]) == 0
    with (report / "abspyramid_detection_differences.csv").open() as handle:
        rows = {r["column"]: r for r in csv.DictReader(handle)}
    row = rows["noun:accuracy"]
    assert (row["a"], row["b"]) == ("CoT", "zero-shot, generated answer")
    cot, zs = (_accuracy(out, task) for task in reversed(TASKS))
    ids = sorted(cot.keys() & zs.keys())
    a, b = np.array([cot[i] for i in ids]), np.array([zs[i] for i in ids])
    assert int(row["n"]) == len(ids) == 20
    assert float(row["difference"]) == pytest.approx(np.mean(a) - np.mean(b))
    ra, rb = a == (a.max() or 1.0), b == (a.max() or 1.0)  # right items (0/1 or 0/100)
    table = [[np.sum(ra & rb), np.sum(ra & ~rb)], [np.sum(~ra & rb), np.sum(~ra & ~rb)]]
    assert row["method"].startswith("exact McNemar")
    assert float(row["p"]) == pytest.approx(mcnemar(table, exact=True).pvalue)

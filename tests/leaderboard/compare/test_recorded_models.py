"""Two real models compared on one CCPT task: the CCPT authors' recorded noun phrase
completion replies of GPT-4o and Llama-3.1-70B-Instruct (Base, seed 0), each scored by
``conceptcomb score`` with a loopback judge replaying GPT-4o's ratings the authors recorded
for that model, then ``conceptcomb compare``. The difference and its interval are checked
against statsmodels on the runs' per-item scores, and against the authors' own per-item
emergence columns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.regression.linear_model import OLS

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import csv_rows, recorded_replies, score_predictions
from tests.ccpt.test_npc_modifier import results_dir  # noqa: F401
from tests.leaderboard.eee_support import run_cli

pytestmark = pytest.mark.shared_data
TASK = "ccpt_npc_emergent"
MODELS = {
    "gpt-4o": ("npc_emergent_gpt-4o_naive.csv", "gpt-4o_naive_0"),
    "llama-3.1-70b": (
        "npc_emergent_Meta-Llama-3.1-70B-Instruct_naive.csv",
        "Meta-Llama-3.1-70B-Instruct_naive_0",
    ),
}


def _score(folder_of_results: Path, out: Path, model: str) -> tuple[Path, list[float]]:
    """The model's recorded replies scored; (results file, the authors' per-item E x 100)."""
    name, prefix = MODELS[model]
    recorded = list(recorded_replies(folder_of_results / name, prefix))
    items = load_items(CcptTaskSpec(NPC_EMERGENT))
    assert len(recorded) == len(items) == 167
    predictions = out / f"{model}.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for item, reply in zip(items, recorded, strict=True):
            handle.write(json.dumps({"doc": item.as_doc(), "response": reply.reply}) + "\n")
    ratings: dict[tuple[str, str], int] = {}
    for r in recorded:
        prop = r.prop.strip().lower()
        for concept, rating in zip((r.combination, r.modifier, r.root), r.ratings, strict=True):
            ratings.setdefault((concept.strip().lower(), prop), rating)
    folder = out / model
    folder.mkdir()
    with LoopbackServer(ratings=ratings) as judge:
        result = score_predictions(
            folder, TASK, predictions, model, "--judge-base-url", judge.base_url,
            "--judge-model", "gpt-4o", "--judge-cache", "off",
        )  # fmt: skip
        assert len(judge.stats.unknown) <= 10  # the authors' rule judged a few others
    rows = csv_rows(folder_of_results / name)
    authors = [100 * float(row[f"{prefix}_emergence"]) for row in rows]
    return Path(result), authors


def test_gpt4o_against_llama_on_noun_phrase_completion(
    results_dir: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    scored = {model: _score(results_dir, tmp_path, model) for model in MODELS}
    code, printed = run_cli("compare", *(str(path) for path, _ in scored.values()), "--json")
    assert code == 0, printed
    found = json.loads(printed)
    (row,) = [r for r in found["comparisons"] if r["metric"] == "E"]
    samples = {
        model: [json.loads(line) for line in (tmp_path / model / f"{TASK}.samples.jsonl").open()]
        for model in MODELS
    }
    a, b = (np.array([s["metrics"]["E"] for s in samples[m]]) for m in MODELS)
    phrases = [s["item_id"] for s in samples["gpt-4o"]]
    items = {item.item_id: item for item in load_items(CcptTaskSpec(NPC_EMERGENT))}
    groups = np.unique([items[i].combination.lower() for i in phrases], return_inverse=True)[1]
    d = a - b
    fit = OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert row["n"] == 167 and row["method"] == "t, clustered" and row["unit"] == "noun phrase"
    assert row["difference"] == pytest.approx(np.mean(d))
    assert (row["lower"], row["upper"]) == tuple(pytest.approx(v) for v in fit.conf_int()[0])
    assert row["p"] == pytest.approx(fit.pvalues[0])
    # The authors' own per-item emergence gives the same difference, up to the few replies
    # whose modifier they judged differently (tests/ccpt/test_npc_modifier.py).
    authors = np.array(scored["gpt-4o"][1]) - np.array(scored["llama-3.1-70b"][1])
    assert row["difference"] == pytest.approx(np.mean(authors), abs=1.0)
    assert row["mdd"] > 0 and -100 < row["lower"] < row["upper"] < 100

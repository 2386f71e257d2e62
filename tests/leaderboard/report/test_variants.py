"""The papers' comparison tables with their tests (issue 46): a variant's paired difference
from the paper's reference variant, with its 95% interval and Holm-adjusted p, on small
real runs:

* CGGC's Table 4 (id - ood) and Table 7 (easy-to-hard - hard-to-easy): lm-eval runs the four
  tasks against a loopback model whose reply depends on the demonstrations it is shown, so
  the variants' replies differ; ``conceptcomb cggc report`` and ``conceptcomb report`` print
  the differences, equal to statsmodels' regression clustered by concept set (CGGC's unit)
  on the samples' per-item scores;
* CCPT's Table 3 (CoT - Base): the authors' recorded GPT-4o replies of both methods, scored by
  ``conceptcomb score`` against a loopback judge replaying the ratings they recorded; equal
  to statsmodels' clustered regression on the per-item scores.
"""

from __future__ import annotations

import csv
import json
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.multitest import multipletests

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.cli import main
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from conceptcomb.testing.recorded import recorded_replies, score_predictions
from tests.ccpt.test_npc_modifier import results_dir  # noqa: F401
from tests.leaderboard.run_support import run_ok

CGGC_TASKS = ("cggc_id", "cggc_ood", "cggc_ood_easy2hard", "cggc_ood_hard2easy")
LIMIT = 12


def concepts_reply(chat: dict[str, Any]) -> str:
    """Some of the asked concepts, as many as the first demonstration's checksum says: the
    same question shown other demonstrations gets another reply."""
    users = [m["content"] for m in chat["messages"] if m["role"] == "user"]
    concepts = re.search(r"concepts: (.*)", users[-1])
    words = concepts.group(1).split(", ") if concepts else ["nothing"]
    keep = 1 + zlib.crc32(users[0].encode()) % len(words)
    return "the " + " and ".join(words[:keep]) + " ."


@pytest.fixture(scope="module")
def cggc_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One lm_eval process on the four CGGC tasks, 12 items each, against the loopback
    model, through lm-eval's command line indexing our tasks only (`OUR_LM_EVAL`): each task
    built draws every test item's demonstrations, and the scoring starts METEOR's JVM. Its
    first user pays it: 150 s of setup, 70 s of CPU for the module (195 s and 87 s of CPU
    with the plain `lm_eval`, which first indexes lm-eval's ~14,000 task files; both alone
    with -n 0 on 2 cores at load 12, 2026-12-06; 69 s of setup at load 4-7 before)."""
    out = tmp_path_factory.mktemp("cggc-variants") / "lm-eval"
    with ModelServer({}, reply_for=concepts_reply) as server:
        run_ok(lm_eval_command(
            CGGC_TASKS, model="local-chat-completions",
            model_args=f"model=loopback,base_url={server.base_url}/chat/completions,"
            "num_concurrent=4,max_retries=1",
            limit=LIMIT, program=OUR_LM_EVAL, apply_chat_template=True, log_samples=True,
            output_path=out,
        ))  # fmt: skip
    return out


def _per_item(run: Path, task: str, metric: str) -> dict[str, tuple[float, int]]:
    """Item id -> (its score, its concept set)."""
    (samples,) = list(run.rglob(f"samples_{task}_2*.jsonl"))  # _2026-...: not _ood_...
    rows = [json.loads(line) for line in samples.read_text().splitlines() if line.strip()]
    return {str(r["doc"]["item_id"]): (float(r[metric]), r["doc"]["concept_set_idx"]) for r in rows}


def _paired(run: Path, a: str, b: str, metric: str) -> tuple[float, Any, int]:
    """The mean difference, statsmodels' fit clustered by concept set (CGGC's unit), n."""
    first, second = _per_item(run, a, metric), _per_item(run, b, metric)
    ids = sorted(first.keys() & second.keys())
    d = np.array([first[i][0] - second[i][0] for i in ids])
    groups = np.unique([first[i][1] for i in ids], return_inverse=True)[1]
    fit = OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    return float(np.mean(d)), fit, len(ids)


def _difference_rows(printed: str, title: str) -> list[list[str]]:
    block = printed.split(f"Paired differences: {title}")[1].split("\nA - B:")[0]
    return [re.split(r"\s{2,}", line) for line in block.strip().splitlines()[2:]]


@pytest.mark.slow
def test_cggc_report_prints_table_4_and_7_paired_differences(cggc_run: Path, capsys) -> None:
    """`conceptcomb cggc report` prints Tables 4 and 7's paired differences. Over 60 s only
    as the first user of `cggc_run` (its docstring): 9 s of its own at load 12."""
    assert main(["cggc", "report", str(cggc_run)]) == 0
    printed = capsys.readouterr().out
    table4 = _difference_rows(printed, "CGGC in-distribution")
    table7 = _difference_rows(printed, "CGGC difficulty-based")
    assert [row[3] for row in table4][:3] == ["ROUGE-2", "ROUGE-L", "BLEU-3"]
    for rows, (a, b) in ((table4, CGGC_TASKS[:2]), (table7, CGGC_TASKS[2:])):
        found = {row[3]: row for row in rows}
        assert set(found) >= {"ROUGE-2", "ROUGE-L", "Coverage", "BLEU-3", "BLEU-4", "CIDEr"}
        assert "METEOR" not in found  # a jar: cannot be paired, said in a note
        for metric, title in (("coverage", "Coverage"), ("rougeL", "ROUGE-L")):
            mean, fit, n = _paired(cggc_run, a, b, metric)
            low, high = fit.conf_int()[0]
            row = found[title]
            assert row[-1] == str(n) == str(LIMIT)
            assert row[6] == f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]"
    assert "order easy-to-hard (cggc_ood_easy2hard) − order hard-to-easy" in printed
    assert "id − ood" in printed


@pytest.mark.slow
def test_the_report_shows_the_differences_and_their_figure(cggc_run: Path, tmp_path: Path) -> None:
    """`conceptcomb report` shows the paired differences, their figures and Holm's p. Over
    60 s only as the first user of `cggc_run` (its docstring: an lm_eval run of four CGGC
    tasks, 150 s at load 12, 2026-12-06); 6 s of its own."""
    out = tmp_path / "report"
    assert main(["report", str(cggc_run), "--out", str(out), "--no-published"]) == 0
    markdown = (out / "cggc.md").read_text()
    assert "#### Paired differences: CGGC difficulty-based demonstrations" in markdown
    assert (out / "cggc_table7_differences.png").stat().st_size > 5000
    assert (out / "cggc_table4_differences.png").is_file()
    with (out / "cggc_table7_differences.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    ps = [float(r["p"]) for r in rows]
    assert [float(r["p_holm"]) for r in rows] == pytest.approx(
        list(multipletests(ps, method="holm")[1])
    )
    coverage = next(r for r in rows if r["column"] == "coverage")
    mean, fit, n = _paired(cggc_run, "cggc_ood_easy2hard", "cggc_ood_hard2easy", "coverage")
    assert float(coverage["difference"]) == pytest.approx(mean) and int(coverage["n"]) == n
    assert float(coverage["p"]) == pytest.approx(fit.pvalues[0])
    assert coverage["method"] == "t, clustered"
    assert "Paired differences" in (out / "cggc.html").read_text()


# --- CCPT: the authors' recorded replies, Base and CoT ------------------------------------------
def _scored(results: Path, out: Path, task: str, prefix: str, name: str) -> Path:
    recorded = list(recorded_replies(results / name, prefix))
    items = load_items(spec_by_name(task))
    predictions = out / f"{task}.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for item, reply in zip(items, recorded, strict=True):
            handle.write(json.dumps({"doc": item.as_doc(), "response": reply.reply}) + "\n")
    ratings: dict[tuple[str, str], int] = {}
    for r in recorded:
        for concept, rating in zip((r.combination, r.modifier, r.root), r.ratings, strict=True):
            ratings.setdefault((concept.strip().lower(), r.prop.strip().lower()), rating)
    folder = out / task
    folder.mkdir()
    with LoopbackServer(ratings=ratings) as judge:
        options = ["--judge-base-url", judge.base_url, "--judge-model", "gpt-4o",
                   "--judge-cache", "off"]  # fmt: skip
        return Path(score_predictions(folder, task, predictions, "gpt-4o", *options))


@pytest.mark.shared_data
def test_ccpt_cot_against_base_on_the_authors_recorded_replies(
    results_dir: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    base = _scored(results_dir, tmp_path, "ccpt_npc_emergent", "gpt-4o_naive_0",
                   "npc_emergent_gpt-4o_naive.csv")  # fmt: skip
    cot = _scored(results_dir, tmp_path, "ccpt_npc_emergent_cot", "gpt-4o_cot_0",
                  "npc_emergent_gpt-4o_cot.csv")  # fmt: skip
    out = tmp_path / "report"
    assert main(["report", str(base), str(cot), "--out", str(out), "--no-plots"]) == 0
    with (out / "ccpt_generative_differences.csv").open() as handle:
        rows = {r["column"]: r for r in csv.DictReader(handle)}
    row = rows["npc_emergent:E"]
    assert (row["a"], row["b"]) == ("CoT", "Base") and row["method"] == "t, clustered"
    per_item = {}
    for task, path in (("cot", cot), ("base", base)):
        samples = path.parent / f"{path.name.split('.')[0]}.samples.jsonl"
        lines = [json.loads(x) for x in samples.read_text().splitlines()]
        per_item[task] = {s["item_id"]: s["metrics"]["E"] for s in lines}
    ids = list(per_item["base"])
    d = np.array([per_item["cot"][i] - per_item["base"][i] for i in ids])
    items = {i.item_id: i for i in load_items(spec_by_name("ccpt_npc_emergent"))}
    groups = np.unique([items[i].combination.lower() for i in ids], return_inverse=True)[1]
    fit = OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert int(row["n"]) == len(ids) == 167
    assert float(row["difference"]) == pytest.approx(np.mean(d))
    assert (float(row["lower"]), float(row["upper"])) == tuple(
        pytest.approx(v) for v in fit.conf_int()[0]
    )
    assert float(row["p"]) == pytest.approx(fit.pvalues[0])
    assert "CoT − Base" in (out / "ccpt.md").read_text()

"""``conceptcomb compare`` on real CCPT runs: the dataset's own answers scored by
``conceptcomb score`` (type prediction has no judge; property induction asks a loopback
judge over HTTP), against replies with some answers changed. The expected numbers are
computed here from the runs' own per-item records, with scipy and statsmodels."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.regression.linear_model import OLS

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.cli import main
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import (
    gold_reply,
    score_predictions,
    submit_bundle,
)
from tests.leaderboard.eee_support import run_cli

pytestmark = pytest.mark.shared_data
TYPES = ("emergent", "component", "canceled", "others")


def _predictions(task: str, path: Path, changed: float, seed: int) -> Path:
    """The task's items with their own answers, a share of them changed."""
    spec = spec_by_name(task)
    items = load_items(spec)
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for n, item in enumerate(items):
            reply = gold_reply(spec, item)
            if rng.random() < changed:
                if task == "ccpt_tp":
                    wrong = rng.choice([t for t in TYPES if t != item.label])
                    reply = json.dumps({"property_type": wrong})
                else:
                    reply = json.dumps({"property": items[(n + 7) % len(items)].property})
            handle.write(json.dumps({"doc": item.as_doc(), "response": reply}) + "\n")
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``conceptcomb score`` outputs of two "models" on ccpt_tp and ccpt_pi_emergent."""
    root = tmp_path_factory.mktemp("scored")
    found = {}
    with LoopbackServer() as judge:
        options = ["--judge-base-url", judge.base_url, "--judge-model", "gpt-4o",
                   "--judge-cache", str(root / "judge.sqlite")]  # fmt: skip
        for model, changed in (("model-a", 0.1), ("model-b", 0.35)):
            out = root / model
            out.mkdir()
            for task in ("ccpt_tp", "ccpt_pi_emergent"):
                predictions = _predictions(task, out / f"{task}.jsonl", changed, len(model) + 3)
                extra = options if task != "ccpt_tp" else []
                score_predictions(out, task, predictions, model, *extra)
            found[model] = out
    return found


def _samples(out: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (out / f"{task}.samples.jsonl").read_text().splitlines()]


def _compare_json(*args: str) -> dict:
    code, printed = run_cli("compare", *args, "--json")
    assert code == 0, printed
    return json.loads(printed)


def _row(found: dict, task: str, metric: str) -> dict:
    (row,) = [r for r in found["comparisons"] if r["task"] == task and r["metric"] == metric]
    return row


def test_a_run_compared_with_itself_is_zero_with_an_empty_interval_and_p_one(
    group_bundle: Path,
) -> None:
    bundle = group_bundle  # the session's (tests/leaderboard/conftest.py), read only
    found = _compare_json(str(bundle), str(bundle))
    tasks = {row["task"] for row in found["comparisons"]}
    assert tasks == {"ccpt_tp", "ccpt_pi_emergent", "ccpt_pi_canceled", "ccpt_npc_emergent"}
    for row in found["comparisons"]:
        assert (row["difference"], row["lower"], row["upper"], row["p"]) == (0, 0, 0, 1), row
    assert all(u["only_a"] == u["only_b"] == [] for u in found["unpaired"])
    code, printed = run_cli("compare", str(bundle), str(bundle))
    assert code == 0 and "ccpt_npc_emergent  E" in printed
    assert "t, clustered by noun phrase" in printed


def test_judged_scores_pair_item_by_item_as_scipy_gives(scored: dict[str, Path]) -> None:
    """Property induction: no two items share a noun phrase, so ttest_rel on the items."""
    task = "ccpt_pi_emergent"
    found = _compare_json(str(scored["model-a"] / f"{task}.results.json"),
                          str(scored["model-b"] / f"{task}.results.json"))  # fmt: skip
    a = {row["item_id"]: row["metrics"]["E"] for row in _samples(scored["model-a"], task)}
    b = {row["item_id"]: row["metrics"]["E"] for row in _samples(scored["model-b"], task)}
    ids = sorted(a)
    x, y = np.array([a[i] for i in ids]), np.array([b[i] for i in ids])
    test = scipy_stats.ttest_rel(x, y)
    low, high = test.confidence_interval()
    row = _row(found, task, "E")
    assert row["n"] == len(ids) == 200 and row["method"] == "t"
    assert row["difference"] == pytest.approx(np.mean(x - y))
    assert (row["lower"], row["upper"]) == (pytest.approx(low), pytest.approx(high))
    assert row["p"] == pytest.approx(test.pvalue)
    assert row["a"] == pytest.approx(np.mean(x)) and row["b"] == pytest.approx(np.mean(y))
    assert row["correlation"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert found["runs"][0]["label"] == "model-a (conceptcomb score)"


def test_type_prediction_is_clustered_by_noun_phrase_as_statsmodels_gives(
    scored: dict[str, Path],
) -> None:
    task = "ccpt_tp"
    found = _compare_json(str(scored["model-a"]), str(scored["model-b"]))
    items = {item.item_id: item for item in load_items(spec_by_name(task))}
    a = {r["item_id"]: r["metrics"]["accuracy"] for r in _samples(scored["model-a"], task)}
    b = {r["item_id"]: r["metrics"]["accuracy"] for r in _samples(scored["model-b"], task)}
    ids = sorted(a)
    d = np.array([a[i] - b[i] for i in ids])
    groups = np.unique([items[i].combination.lower() for i in ids], return_inverse=True)[1]
    fit = OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    row = _row(found, task, "accuracy")
    assert row["method"] == "t, clustered" and row["unit"] == "noun phrase"
    assert row["clusters"] == groups.max() + 1 < len(ids) == row["n"] == 1000
    assert row["difference"] == pytest.approx(np.mean(d))
    assert row["stderr"] == pytest.approx(fit.bse[0])
    assert row["p"] == pytest.approx(fit.pvalues[0])
    assert (row["lower"], row["upper"]) == tuple(pytest.approx(v) for v in fit.conf_int()[0])
    holm = [r["p_holm"] for r in found["comparisons"]]
    assert all(h >= r["p"] for h, r in zip(holm, found["comparisons"], strict=True))


def test_csv_and_the_table_say_the_same(scored: dict[str, Path]) -> None:
    args = (str(scored["model-a"]), str(scored["model-b"]))
    code, printed = run_cli("compare", *args, "--csv")
    assert code == 0
    header, *lines = printed.splitlines()
    assert header.startswith("task,metric,run_a,run_b,a,b,difference,lower,upper")
    assert any(line.startswith("ccpt_tp,accuracy,A,B,") for line in lines)
    code, printed = run_cli("compare", *args)
    assert code == 0
    assert "A - B [95% CI]" in printed and "p Holm" in printed and "MDD" in printed
    assert "A = model-a (conceptcomb score)" in printed


def test_no_shared_task_is_one_line_and_exit_1(scored: dict[str, Path], tmp_path: Path) -> None:
    tp = scored["model-a"] / "ccpt_tp.results.json"
    pi = scored["model-b"] / "ccpt_pi_emergent.results.json"
    code, printed = run_cli("compare", str(tp), str(pi))
    assert code == 1
    errors = [line for line in printed.splitlines() if line.startswith("conceptcomb: error:")]
    assert len(errors) == 1 and "no task is held by two of the runs" in errors[0]
    code, printed = run_cli("compare", str(tp))
    assert code == 1 and "compare needs two runs" in printed
    code, printed = run_cli("compare", str(tp), str(tmp_path / "missing"))
    assert code == 2 and "no such file or folder" in printed and "Traceback" not in printed


def test_the_items_needed_come_from_the_pilots_spread(scored: dict[str, Path]) -> None:
    """``--target-difference``: statsmodels' solve_power on the pilot's effect size; type
    prediction's items share noun phrases, so its n is inflated by the design effect."""
    from statsmodels.stats.power import TTestPower

    args = (str(scored["model-a"]), str(scored["model-b"]), "--target-difference", "3")
    found = _compare_json(*args)
    assert found["target_difference"] == 3.0
    row = _row(found, "ccpt_tp", "accuracy")
    plan = row["items_needed"]
    samples = [_samples(scored[m], "ccpt_tp") for m in ("model-a", "model-b")]
    a, b = (np.array([s["metrics"]["accuracy"] for s in run]) for run in samples)
    d = a - b
    n = TTestPower().solve_power(effect_size=3 / np.std(d, ddof=1), alpha=0.05, power=0.8)
    design = (row["stderr"] * np.sqrt(len(d)) / np.std(d, ddof=1)) ** 2
    assert plan["effect_size"] == pytest.approx(3 / np.std(d, ddof=1))
    assert plan["design_effect"] == pytest.approx(design)
    assert plan["items"] == int(np.ceil(n * design)) and plan["unit"] == "noun phrase"
    code, printed = run_cli("compare", *args)
    assert code == 0
    line = next(x for x in printed.splitlines() if x.startswith("  ccpt_tp accuracy:"))
    assert f"{plan['items']:,} items" in line and "noun phrase" in line
    assert ("fewer than needed" in line) == (plan["items"] > 1000)
    code, printed = run_cli("compare", *args[:2], "--target-difference", "0")
    assert code == 2 and "--target-difference" in printed


def test_an_argument_with_nothing_comparable_is_named(
    scored: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, printed = run_cli("compare", str(empty), str(scored["model-a"] / "ccpt_tp.results.json"))
    assert code == 1
    assert f"{empty}: none" in printed and "ccpt_tp.results.json: 1 run (model-a" in printed


def test_a_task_one_run_holds_is_named(scored: dict[str, Path]) -> None:
    pi = scored["model-a"] / "ccpt_pi_emergent.results.json"
    code, printed = run_cli("compare", str(scored["model-b"]), str(pi))
    assert code == 0
    assert "note: ccpt_tp: only A holds it, not compared" in printed


def test_items_of_two_bundles_show_their_replies(scored: dict[str, Path], tmp_path: Path) -> None:
    """``--items K`` on bundles: the type predictions whose accuracy differs most, with each
    run's reply as its predictions file holds it (issue 51)."""
    bundles = [submit_bundle([str(scored[m] / "ccpt_tp.results.json")], tmp_path / m)
               for m in ("model-a", "model-b")]  # fmt: skip
    found = _compare_json(*map(str, bundles), "--items", "5")
    largest = _row(found, "ccpt_tp", "accuracy")["largest_differences"]
    samples = [{s["item_id"]: s for s in _samples(scored[m], "ccpt_tp")} for m in scored]
    keys = sorted(samples[0])
    accuracy = [np.array([s[k]["metrics"]["accuracy"] for k in keys]) for s in samples]
    differ = [k for k, x, y in zip(keys, *accuracy, strict=True) if x != y]
    assert largest["differing"] == len(differ) > 5
    replies = []
    for m in scored:
        lines = (scored[m] / "ccpt_tp.jsonl").read_text().splitlines()
        by_item = {}
        for line in lines:
            row = json.loads(line)
            by_item[row["doc"]["item_id"]] = row["response"]
        replies.append(by_item)
    for item in largest["items"]:
        key = item["item"].split(":", 1)[1]  # the stable id: the file's sha256, then the key
        assert len(item["item"].split(":", 1)[0]) == 64 and key in differ
        assert (item["a"], item["b"]) == (samples[0][key]["metrics"]["accuracy"],
                                          samples[1][key]["metrics"]["accuracy"])  # fmt: skip
        assert (item["reply_a"], item["reply_b"]) == (replies[0][key], replies[1][key])
    ranked = sorted(
        differ,
        key=lambda k: (
            -abs(samples[0][k]["metrics"]["accuracy"] - samples[1][k]["metrics"]["accuracy"]),
            k,
        ),
    )
    assert [item["item"].split(":", 1)[1] for item in largest["items"]] == ranked[:5]


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--items", "0"], "--items 0: a whole number"),
        (["--items", "2.5"], "--items 2.5: a whole number"),
        (["--items", "x"], "--items x: a whole number"),
        (["--items", "3", "--csv"], "--items: the table and --json"),
        (["--json", "--csv"], "argument --csv: not allowed with argument --json"),
        (["--n-resamples", "many"], "argument --n-resamples: invalid int value"),
        (["--n-resamples", "10"], "--n-resamples: at least 100"),
        (["--seed", "-1"], "--seed -1: a seed is a whole number from 0 up"),
        (["--seed", "0.5"], "argument --seed: invalid int value"),
        (["--target-difference", "-5"], "--target-difference: a positive difference"),
        (["--target-difference", "500"], "--target-difference 500: as large as the whole scale"),
        (["--variants", "ccpt_tp"], "--variants: pairs are written TASK_A=TASK_B"),
        (["--data-dir", "/nonexistent/ccpt"], "--data-dir /nonexistent/ccpt: no such folder"),
    ],
)
def test_every_impossible_option_value_is_one_line(
    scored: dict[str, Path], option: list[str], named: str
) -> None:
    """Each option of `compare --help` given a value it cannot take: one line naming it,
    exit 2, no usage block or traceback (issue 54)."""
    runs = [str(scored[m] / "ccpt_tp.results.json") for m in scored]
    printed_to = io.StringIO()
    with contextlib.redirect_stdout(printed_to), contextlib.redirect_stderr(printed_to):
        try:
            code = main(["compare", *runs, *option])
        except SystemExit as exit:  # argparse's own refusals exit
            code = exit.code
    printed = printed_to.getvalue()
    assert code == 2 and printed.count("\n") == 1, printed
    assert printed.startswith("conceptcomb: error: ") and named in printed, printed

"""Each run's own 95% interval in bundles (`conceptcomb.leaderboard.statistics.intervals`):
recorded per metric, equal to scipy / statsmodels on the items, recomputed by
``validate-bundle`` (which names an edited bound), written in full by ``export --to eee``
(EEE's own validator passes)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.regression.linear_model import OLS

from conceptcomb.cggc.docs import item_doc, task_pairs
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.testing.recorded import score_predictions, submit_bundle
from tests.leaderboard.eee_support import assert_eee_valid, run_cli, samples_for, task_lines

MODEL_ID = ("--model-id", "conceptcomb/recorded-answers")


@pytest.fixture(scope="module")
def group(group_bundle: Path) -> Path:
    """The session's bundle of the full CCPT group (tests/leaderboard/conftest.py)."""
    return group_bundle


@pytest.fixture(scope="module")
def cggc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cggc_ood's first 300 items (the shipped data), every other reply its reference less a
    word: BLEU and CIDEr below their maximum, bootstrapped."""
    out = tmp_path_factory.mktemp("cggc")
    task, rng = "cggc_ood", random.Random(4)
    spec, options = spec_by_name(task), TaskOptions()
    predictions = out / f"{task}.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for item, demos in task_pairs(spec, options)[:300]:
            words = item.target.split()
            reply = " ".join(words[:-1]) if rng.random() < 0.5 else item.target
            doc = item_doc(item, demos, spec, options)
            handle.write(json.dumps({"doc": doc, "response": reply}) + "\n")
    return submit_bundle([score_predictions(out, task, predictions, "cggc-trimmed")], out)


def _task(bundle: Path, name: str) -> tuple[dict, list[dict]]:
    (task,) = [
        t for t in json.loads(bundle.read_text(encoding="utf-8"))["tasks"] if t["task"] == name
    ]
    return task, decode(task["evidence"], name)


def test_every_mean_metric_has_its_interval_as_scipy_and_statsmodels_give(group: Path) -> None:
    task, items = _task(group, "ccpt_pi_emergent")
    e = np.array([item["scores"]["E"] for item in items])
    interval = task["metrics"]["E"]["interval"]
    low, high = scipy_stats.ttest_1samp(e, 0).confidence_interval()
    assert interval["value"] == pytest.approx(task["metrics"]["E"]["value"])
    assert (interval["lower"], interval["upper"]) == (pytest.approx(low), pytest.approx(high))
    assert interval["method"] == "t" and interval["n"] == 200
    task, items = _task(group, "ccpt_tp")
    accuracy = np.array([item["scores"]["accuracy"] for item in items])
    groups = np.unique([item["unit"] for item in items], return_inverse=True)[1]
    fit = OLS(accuracy, np.ones(len(accuracy))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    interval = task["metrics"]["accuracy"]["interval"]
    assert interval["method"] == "t, clustered" and interval["unit"] == "noun phrase"
    assert interval["clusters"] == groups.max() + 1
    assert interval["stderr"] == pytest.approx(fit.bse[0])
    assert (interval["lower"], interval["upper"]) == tuple(
        pytest.approx(v) for v in fit.conf_int()[0]
    )
    assert "interval" not in task["metrics"]["format_failures"]  # a count has none


def test_validate_bundle_recomputes_the_intervals_and_names_an_edited_one(
    group: Path, tmp_path: Path
) -> None:
    code, printed = run_cli("validate-bundle", str(group))
    assert code == 0 and "INVALID" not in printed, printed
    bundle = json.loads(group.read_text(encoding="utf-8"))
    (task,) = [t for t in bundle["tasks"] if t["task"] == "ccpt_npc_emergent"]
    task["metrics"]["E"]["interval"]["lower"] -= 1.0  # a narrower claim would look better too
    bundle["content_sha256"] = content_sha256(bundle)  # resealed: only the interval is wrong
    edited = tmp_path / "edited.bundle.json"
    edited.write_text(json.dumps(bundle))
    code, printed = run_cli("validate-bundle", str(edited))
    assert code == 1 and f"{edited}: INVALID" in printed
    assert "ccpt_npc_emergent metric E: the bundle claims the interval's lower" in printed
    assert "ccpt_npc_emergent: FAILED" in printed


def test_corpus_metrics_get_a_seeded_bootstrap_interval(cggc: Path, tmp_path: Path) -> None:
    task, _ = _task(cggc, "cggc_ood")
    for metric in ("bleu3", "bleu4", "cider"):
        interval = task["metrics"][metric]["interval"]
        assert interval["method"] == "bootstrap, percentile" and interval["resamples"] == 1000
        assert interval["value"] == pytest.approx(task["metrics"][metric]["value"], rel=1e-9)
        assert interval["lower"] < interval["value"] < interval["upper"]
    rouge = task["metrics"]["rougeL"]["interval"]  # a mean, clustered by concept set
    assert rouge["method"] in ("t", "t, clustered")
    code, printed = run_cli("validate-bundle", str(cggc))
    assert code == 0, printed
    (line,) = task_lines(printed)
    assert line.startswith("cggc_ood: partial (300 of the "), line


def test_validate_bundle_names_an_edited_unit(cggc: Path, tmp_path: Path) -> None:
    """The clustered intervals are recomputed from the units as stored: each item's unit is
    checked against its test item's concept set, so moving an item to another cluster (and
    its intervals with it) is named."""
    bundle = json.loads(cggc.read_text(encoding="utf-8"))
    (task,) = bundle["tasks"]
    items = decode(task["evidence"], "cggc_ood")
    assert len({item["unit"] for item in items}) < len(items)  # items share concept sets
    other = next(item["unit"] for item in items if item["unit"] != items[7]["unit"])
    items[7]["unit"] = other
    task["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    edited = tmp_path / "edited.bundle.json"
    edited.write_text(json.dumps(bundle))
    code, printed = run_cli("validate-bundle", str(edited))
    assert code == 1 and f"{edited}: INVALID" in printed, printed
    key = items[7]["id"].split(":", 1)[1]
    assert (
        f"evidence: cggc_ood item {key}: the bundle stores the unit '{other}', its test "
        "item's concept set is" in printed
    ), printed


def test_the_eee_export_writes_the_uncertainty_in_full_and_validates(
    group: Path, cggc: Path, tmp_path: Path, eee_python: str
) -> None:
    for bundle in (group, cggc):
        out = tmp_path / bundle.stem
        code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(out), *MODEL_ID)
        assert code == 0, printed
        assert_eee_valid(out, eee_python)
        code, printed = run_cli("validate-bundle", str(out))
        assert code == 0, printed
    aggregate, _ = samples_for(tmp_path / group.stem, "ccpt_tp")
    results = {
        r["evaluation_result_id"].split(":")[1]: r["score_details"]
        for r in json.loads(aggregate.read_text())["evaluation_results"]
    }
    task, _ = _task(group, "ccpt_tp")
    interval = task["metrics"]["accuracy"]["interval"]
    uncertainty = results["accuracy"]["uncertainty"]
    assert uncertainty["confidence_interval"] == {
        "lower": interval["lower"],
        "upper": interval["upper"],
        "confidence_level": 0.95,
        "method": f"t, clustered by noun phrase ({interval['clusters']} clusters)",
    }
    assert uncertainty["standard_error"] == {
        "value": interval["stderr"],
        "method": f"clustered (by noun phrase, {interval['clusters']} clusters)",
    }
    assert uncertainty["num_samples"] == 1000 and "num_bootstrap_samples" not in uncertainty
    aggregate, _ = samples_for(tmp_path / cggc.stem, "cggc_ood")
    results = {
        r["evaluation_result_id"].split(":")[1]: r["score_details"]
        for r in json.loads(aggregate.read_text())["evaluation_results"]
    }
    cider = results["cider"]["uncertainty"]
    assert (
        cider["num_bootstrap_samples"] == 1000 and cider["standard_error"]["method"] == "bootstrap"
    )
    assert cider["confidence_interval"]["lower"] < results["cider"]["score"]


def test_an_eee_folder_is_a_run_compare_reads(group: Path, tmp_path: Path) -> None:
    out = tmp_path / "eee"
    code, printed = run_cli("export", "--to", "eee", str(group), "--out", str(out), *MODEL_ID)
    assert code == 0, printed
    code, printed = run_cli("compare", str(group), str(out), "--json")
    assert code == 0, printed
    found = json.loads(printed)
    assert {row["task"] for row in found["comparisons"]} == {
        "ccpt_tp", "ccpt_pi_emergent", "ccpt_pi_canceled", "ccpt_npc_emergent",
    }  # fmt: skip
    assert all(row["difference"] == 0 and row["p"] == 1 for row in found["comparisons"])


@pytest.mark.slow
def test_abspyramid_corpus_metrics_get_their_intervals(tmp_path: Path) -> None:
    """AbsPyramid's macro-F1 and BLEU-1/2 and brevity penalty: bootstrapped, recomputed by
    validate-bundle (Inspect runs on the test records available here, gold replies)."""

    from conceptcomb.testing.full_bundles import abspyramid_bundle
    from tests.abspyramid.conftest import data_folder
    from tests.conftest import require_shared_data

    require_shared_data()
    folder = data_folder(tmp_path / "data" / "abspyramid")
    bundle = abspyramid_bundle(tmp_path / "out", str(folder))
    tasks = {task["task"]: task for task in json.loads(bundle.read_text())["tasks"]}
    detection, generation = tasks["abspyramid_det_noun_zs"], tasks["abspyramid_gen_all"]
    for task, metric in ((detection, "macro_f1"), *((generation, m) for m in ("bleu1", "bleu_bp"))):
        interval = task["metrics"][metric]["interval"]
        assert interval["method"] == "bootstrap, percentile" and interval["resamples"] == 1000
        assert interval["value"] == pytest.approx(task["metrics"][metric]["value"], rel=1e-9)
    assert detection["metrics"]["accuracy"]["interval"]["method"] == "t"
    code, printed = run_cli("validate-bundle", str(bundle), "--data-dir", str(folder))
    assert code == 0 and "abspyramid_gen_all: verified" in printed, printed

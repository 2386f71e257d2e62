"""AbsPyramid bundles of real SmolLM2 runs (lm-eval and Inspect, 3 items of log-likelihood
detection, generated detection and generation, on the test data folder): each item's reply
or log-likelihoods, predicted label or concept and gold, re-checked offline with the tasks'
own code, the corpus metrics recomputed; every edit resealed with the package's own hash
functions is caught. Without the hub files here the tasks stay unverified, saying why.

The session's AbsPyramid runs (tests/conftest.py: one lm-eval and one Inspect process, each
loading SmolLM2) are paid by the first test of the session asking for them, in random order
any of these or of tests/abspyramid: 69 s in CI's clean-clone run of 2026-12-06 (load 3.4).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.checks.validate import check_bundle
from tests.conftest import (
    ABSPYRAMID_INSPECT_TASKS,
    ABSPYRAMID_LM_EVAL_LIMIT,
    ABSPYRAMID_LM_EVAL_TASKS,
    AbspyramidInspectRun,
    LmEvalOutput,
)
from tests.leaderboard.checks.test_evidence import run_cli
from tests.leaderboard.eee_support import (
    edited_reply_is_caught,
    hub_entries,
    partial_results,
    round_trip,
    rows_of,
    samples_for,
)
from tests.leaderboard.run_support import bundles_of, load

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
LL, ZS, GEN = "abspyramid_det_noun", "abspyramid_det_noun_zs", "abspyramid_gen_noun"
ICL = "abspyramid_det_noun_icl"  # in the lm-eval run only (tests/abspyramid's tests read it)
EVENT = "abspyramid_det_event"  # in the Inspect run only (tests/abspyramid's tests read it)
TASKS = (LL, ZS, GEN)
LIMIT = ABSPYRAMID_LM_EVAL_LIMIT
# The tasks each bundle holds: the runs are the session's (tests/conftest.py).
BUNDLED = {"lm-eval": ABSPYRAMID_LM_EVAL_TASKS, "inspect": ABSPYRAMID_INSPECT_TASKS}


@pytest.fixture(scope="module")
def bundles(
    abspyramid_lm_eval: LmEvalOutput,
    abspyramid_inspect: AbspyramidInspectRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """The bundles of the session's lm-eval and Inspect runs of SmolLM2 (`abspyramid_lm_eval`
    and `abspyramid_inspect`, tests/conftest.py, shared with tests/abspyramid: the three
    tasks and, in lm-eval, the in-context one, in Inspect event detection). Its first user
    pays it: `submit-bundle` checking both bundles, and the runs where no test of the
    session has made them yet: with this module alone, 380 s of setup at load 9-11 (the
    module 102 s of CPU); 179 s at load 4-6 when it made runs of its own of three tasks (on
    2 cores, 2026-12-06)."""
    root = tmp_path_factory.mktemp("abspyramid-evidence")
    return bundles_of([abspyramid_lm_eval.out, abspyramid_inspect.logs], root / "b")


def task_of(bundle: dict, task: str) -> dict:
    return next(t for t in bundle["tasks"] if t["task"] == task)


def items_of(bundle: dict, task: str) -> list[dict]:
    return decode(task_of(bundle, task)["evidence"], task)


def resealed(bundle: dict, task: str, items: list[dict]) -> dict:
    """The bundle with these items, its checksums recomputed as an editor would."""
    task_of(bundle, task)["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def test_without_the_test_files_the_tasks_are_unverified(bundles: dict[str, Path]) -> None:
    """The hub files are not in CONCEPTCOMB_DATA_DIR (../shared/data holds a sample only).
    Where it runs first in the module it pays `bundles` (see there: 380 s of setup at load
    9-11 with this module alone, 2026-12-06)."""
    check = check_bundle(load(bundles["lm-eval"]))
    assert check.problems == []
    for task in check.tasks:
        assert task.status == "unverified"
        assert task.detail.startswith("its test set could not be read here: ")


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_bundles_are_partial_and_hold_what_each_task_scored(
    bundles: dict[str, Path],
    abspyramid_dir: Path,
    framework: str,
) -> None:
    bundle = load(bundles[framework])
    check = check_bundle(bundle, str(abspyramid_dir))
    assert check.problems == []
    lines = {task.task: task.line() for task in check.tasks}
    expected = {
        LL: f"{LL}: partial (3 of the 20 test items)",
        ICL: f"{ICL}: partial (3 of the 20 test items)",
        EVENT: f"{EVENT}: partial (3 of the 20 test items)",
        ZS: f"{ZS}: partial (3 of the 20 test items)",
        GEN: f"{GEN}: partial (3 of the 8 test items)",
    }
    assert lines == {task: expected[task] for task in BUNDLED[framework]}
    ll = items_of(bundle, LL)
    stored = "loglikelihoods" if framework == "lm-eval" else "top_logprobs"
    for task in set(BUNDLED[framework]) & {LL, EVENT}:  # log-likelihood detection
        assert all(stored in item and 0 <= item["p_yes"] <= 1 for item in items_of(bundle, task))
    assert [item["gold"] for item in ll] == [0, 0, 1]  # the real sample's first noun records
    assert {item["id"].split(":", 1)[1] for item in ll} == {
        f"AbsPyramid_Detection/noun_dataset/test:noun:test:{n}" for n in range(3)
    }
    for task in set(BUNDLED[framework]) & {ZS, ICL}:  # generated labels
        assert all(
            isinstance(item["reply"], str) and "pred" in item for item in items_of(bundle, task)
        )
    generation = items_of(bundle, GEN)
    assert all(item["prediction"] and item["gold"] for item in generation)
    metrics = task_of(bundle, LL)["metrics"]
    assert {"accuracy", "macro_f1", "auc", "unparsable"} <= metrics.keys()
    assert {"bleu1", "bleu2", "rouge2", "rougeL", "meteor"} <= task_of(bundle, GEN)[
        "metrics"
    ].keys()


def _change_reply(items: list[dict]) -> str:
    items[0]["reply"] = "Yes" if items[0]["pred"] == 0 else "No"
    return "the stored reply gives the label"


def _change_label(items: list[dict]) -> str:
    items[0]["pred"] = 1 - items[0]["pred"]
    return "the bundle stores the label"


def _change_gold(items: list[dict]) -> str:
    items[0]["gold"] = 1 - items[0]["gold"]
    return "is not the pinned file's"


def _change_loglikelihoods(items: list[dict]) -> str:
    item = items[0]
    if "loglikelihoods" in item:
        item["loglikelihoods"] = item["loglikelihoods"][::-1]
    else:  # Yes and No swapped among the first token's alternatives
        swap = {"yes": "No", "no": "Yes"}
        for pair in item["top_logprobs"]:
            pair[0] = swap.get(pair[0].strip().lower(), pair[0])
    return "the stored log-likelihoods give"


def _change_score(items: list[dict]) -> str:
    items[0]["scores"]["accuracy"] = 100.0 - items[0]["scores"]["accuracy"]
    return "the per-item scores stored are not those its reply gives (accuracy: stored"


def _change_prediction(items: list[dict]) -> str:
    items[0]["prediction"] = items[0]["gold"][0]
    return "but the bundle stores the prediction"


def _change_generation_score(items: list[dict]) -> str:
    items[0]["scores"]["rougeL"] += 1.0
    return "the per-item scores stored are not those its reply gives (rougeL: stored"


EDITS = [
    (ZS, _change_reply),
    (ZS, _change_label),
    (ZS, _change_gold),
    (ZS, _change_score),
    (LL, _change_loglikelihoods),
    (LL, _change_label),
    (GEN, _change_prediction),
    (GEN, _change_generation_score),
]


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
@pytest.mark.parametrize(("task", "edit"), EDITS, ids=[f"{t}-{e.__name__}" for t, e in EDITS])
def test_an_edited_item_is_caught_naming_it(
    bundles: dict[str, Path],
    abspyramid_dir: Path,
    framework: str,
    task: str,
    edit: Callable[[list[dict]], str],
) -> None:
    """An edit of one item, resealed, is caught and names that item. The first test of the
    module pays `bundles` (and the session's AbsPyramid runs where no test has made them
    yet: see `bundles`)."""
    bundle = load(bundles[framework])
    items = items_of(bundle, task)
    expected = edit(items)
    key = items[0]["id"].split(":", 1)[1]
    check = check_bundle(resealed(bundle, task, items), str(abspyramid_dir))
    assert not any(p.startswith("checksum") for p in check.problems)
    mine = [p for p in check.problems if p.startswith(f"evidence: {task} item {key}: ")]
    assert mine and expected in mine[0], check.problems


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
@pytest.mark.parametrize(("task", "metric"), [(LL, "auc"), (ZS, "macro_f1"), (GEN, "bleu1")])
def test_an_edited_corpus_metric_is_caught(
    bundles: dict[str, Path],
    abspyramid_dir: Path,
    framework: str,
    task: str,
    metric: str,
) -> None:
    bundle = load(bundles[framework])
    claimed = task_of(bundle, task)["metrics"][metric]
    claimed["value"] = (claimed["value"] or 0.0) + 5.0
    bundle["content_sha256"] = content_sha256(bundle)
    problems = check_bundle(bundle, str(abspyramid_dir)).problems
    assert [p for p in problems if p.startswith(f"evidence: {task} metric {metric}: ")], problems


def test_rescore_recomputes_the_corpus_metrics_too(
    bundles: dict[str, Path], abspyramid_dir: Path
) -> None:
    code, printed = run_cli(
        "validate-bundle", str(bundles["lm-eval"]), "--rescore", "--data-dir", str(abspyramid_dir)
    )
    assert code == 0, printed
    assert printed.count("reproduces the claimed metrics (tolerance 0)") == len(BUNDLED["lm-eval"])
    assert "DIFFERS" not in printed


def test_validate_bundle_and_report_say_partial(
    bundles: dict[str, Path],
    abspyramid_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, printed = run_cli(
        "validate-bundle", *map(str, bundles.values()), "--data-dir", str(abspyramid_dir)
    )
    assert code == 0, printed
    assert printed.count(f"{GEN}: partial (3 of the 8 test items)") == 2
    folder = next(iter(bundles.values())).parent

    def states(*options: str) -> set[str]:
        """The verification states of our rows in the report's AbsPyramid tables."""
        out = tmp_path / "out"
        code, printed = run_cli("report", str(folder), "--out", str(out), "--no-plots", *options)
        assert code == 0, printed
        found: set[str] = set()
        for table in ("abspyramid_detection", "abspyramid_generation"):
            with (out / f"{table}.csv").open(newline="") as handle:
                ours = [row for row in csv.DictReader(handle) if row["origin"] == "ours"]
            assert ours, table
            found |= {row["verification"] for row in ours}
        return found

    # The report checks against the folder it is given, as validate-bundle does, ...
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    assert states() == {"unverified"}
    assert states("--data-dir", str(abspyramid_dir)) == {"partial"}
    # ... or against CONCEPTCOMB_DATA_DIR: there, the test data folder.
    monkeypatch.setenv("CONCEPTCOMB_DATA_DIR", str(abspyramid_dir.parent))
    assert states() == {"partial"}


# --- Every Eval Ever and the Hub ---------------------------------------------------------------
@pytest.fixture(scope="module")
def exported(
    bundles: dict[str, Path],
    abspyramid_dir: Path,
    eee_python: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """Both runs' bundles as EEE files, valid for EEE and checked as the bundles (against
    the test data folder, as the bundles are)."""
    folder = tmp_path_factory.mktemp("abspyramid-eee")
    return round_trip(bundles, folder, eee_python, str(abspyramid_dir))


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_eee_files_of_detection_and_generation(
    exported: dict[str, Path], abspyramid_dir: Path, framework: str, tmp_path: Path
) -> None:
    folder = exported[framework]
    ll = {r["evaluation_result_id"].split(":")[1]: r for r in partial_results(folder, LL, LIMIT)}
    assert ll["auc"]["metric_config"]["metric_id"] == "auroc"
    assert ll["macro_f1"]["metric_config"]["additional_details"]["aggregation"] == "corpus"
    assert ll["macro_f1"]["metric_config"]["additional_details"]["headline"] == "true"
    stored = "loglikelihoods" if framework == "lm-eval" else "top_logprobs"
    for row in rows_of(samples_for(folder, LL)[1]):
        assert stored in row["metadata"] and row["evaluation_result_id"] != f"{LL}:auc"
        assert row["answer_attribution"][0]["source"] == f"metadata.{stored}"
        assert row["input"]["reference"] in (["Yes"], ["No"])
        if row["evaluation_result_id"] == f"{LL}:accuracy":  # correct: the label is the gold's
            correct = (
                row["answer_attribution"][0]["extracted_value"] == row["input"]["reference"][0]
            )
            assert row["evaluation"]["is_correct"] is correct
    if framework == "lm-eval":
        row = rows_of(samples_for(folder, LL)[1])[0]
        assert row["input"]["choices"] == ["No", "Yes"]  # lm-eval's two requests
    assert ll["accuracy"]["source_data"]["hf_repo"] == "ZhaoweiWang/AbsPyramid"
    generation = partial_results(folder, GEN, LIMIT)
    bleu = next(r for r in generation if r["evaluation_result_id"] == f"{GEN}:bleu_bp")
    assert (bleu["metric_config"]["metric_unit"], bleu["metric_config"]["max_score"]) == (
        "proportion",
        1.0,
    )
    for row in rows_of(samples_for(folder, GEN)[1]):
        assert row["input"]["reference"] == json.loads(row["metadata"]["gold"])
    edited_reply_is_caught(folder, ZS, tmp_path, "--data-dir", str(abspyramid_dir))


def test_hub_entries_name_the_hub_dataset(bundles: dict[str, Path], tmp_path: Path) -> None:
    entries = {entry.task_id: entry for entry in hub_entries(bundles["inspect"], tmp_path)}
    assert set(entries) == set(BUNDLED["inspect"])
    for task, entry in entries.items():
        assert entry.dataset_id == "ZhaoweiWang/AbsPyramid"
        assert entry.dataset_revision == "8d48c28"  # the run read that very Hub dataset
        assert f"PARTIAL: {LIMIT} of " in entry.notes
        claimed = task_of(load(bundles["inspect"]), task)["metrics"]
        headline = "macro_f1" if "_det_" in task else "rougeL"
        assert entry.value == pytest.approx(claimed[headline]["value"])

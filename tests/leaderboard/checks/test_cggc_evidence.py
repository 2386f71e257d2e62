"""CGGC per-item evidence in bundles: real lm-eval and Inspect runs of ``cggc_ood_verified``
(SmolLM2, the loopback server as verifier, 3 items), validated, then tampered with and
resealed with the package's own hash functions; and a reference-replies bundle through
``conceptcomb score --samples-output`` and ``conceptcomb report``.

The two runs (each a process that builds the CGGC task, loads SmolLM2 and starts METEOR's
JVM) are paid by the module's first test, in random order any of them: 71 s in CI's
clean-clone run of 2026-12-06 (load 3.4).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conceptcomb.cggc.evidence import file_digests
from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.checks.validate import check_file
from conceptcomb.testing.cggc_references import cggc_bundle
from conceptcomb.testing.commands import OUR_LM_EVAL, inspect_eval_command, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from tests.leaderboard.checks.test_evidence import run_cli
from tests.leaderboard.eee_support import (
    SMOLLM2,
    edited_reply_is_caught,
    hub_entries,
    partial_results,
    reseal,
    round_trip,
    rows_of,
    samples_for,
    write_rows,
)
from tests.leaderboard.run_support import bundles_of, run_ok

TASK = "cggc_ood_verified"
LIMIT = 3


@pytest.fixture(scope="module")
def bundles(
    smollm2_folder: Path, smollm2_inspect_model: list[str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """One real lm-eval run (lm-eval's command line indexing our tasks only) and one real
    Inspect run of the task, each in its bundle, their threads waiting passively
    (`model_run_env`). Its first user pays it: each framework process builds the task (every
    test item's demonstrations, whatever --limit), loads SmolLM2, answers 3 items and scores
    them (METEOR's JVM), the loopback server verifying; then `submit-bundle` checks both
    bundles (METEOR's JVM again). 101 s of setup in
    test_real_runs_give_partial_bundles_with_the_items_evidence[lm-eval] (97 s before the
    two changes above, at a lighter load: building the task and METEOR hold the time; on 2
    cores at load 2-3.6, 2026-12-06; 369 s in CI at load 4-7)."""
    root = tmp_path_factory.mktemp("cggc-runs")
    with LoopbackServer() as server:
        judge = {"judge_base_url": server.base_url, "judge_model": "gpt-4o"}
        metadata = {**judge, "judge_cache": str(root / "judge.sqlite")}
        run_ok(lm_eval_command(
            TASK, model="hf", model_args=f"pretrained={smollm2_folder}", limit=LIMIT,
            apply_chat_template=True, log_samples=True, output_path=root / "lm-eval",
            metadata=metadata, program=OUR_LM_EVAL,
        ), timeout=1200)  # fmt: skip
        run_ok(inspect_eval_command(
            f"conceptcomb/{TASK}", model=smollm2_inspect_model, task_args=metadata, limit=LIMIT,
            log_dir=root / "inspect", display="plain",
        ), timeout=1200)  # fmt: skip
    return bundles_of([root / "lm-eval", root / "inspect"], root / "bundles")


def _task(bundle: dict) -> dict:
    return next(task for task in bundle["tasks"] if task["task"] == TASK)


def _tampered(path: Path, change: Callable[[dict, list[dict]], None], out: Path) -> Path:
    """The bundle with ``change`` applied to it and its items, resealed as a forger would."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    task = _task(bundle)
    items = decode(task["evidence"], TASK)
    change(task, items)
    task["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    out.write_text(json.dumps(bundle), encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_real_runs_give_partial_bundles_with_the_items_evidence(
    bundles: dict[str, Path], framework: str
) -> None:
    """Both bundles valid, the task partial, each item's evidence in them. Where it is the
    first test of the module it pays `bundles` (the real runs): 101 s of setup for
    [lm-eval] (on 2 cores at load 3-3.6, 2026-12-06)."""
    check = check_file(bundles[framework], None)
    assert check.valid, check.problems
    (task,) = [t for t in check.tasks if t.task == TASK]
    assert task.status == "partial" and task.problems == []
    assert task.line().startswith(f"{TASK}: partial (3 of the ")
    assert "spice not re-checked: " in task.line()  # SPICE's jars are not on this machine
    test_sha, pool_sha = file_digests(None)["compos_test"], file_digests(None)["compos_train"]
    for item in task.items:
        assert item["id"].startswith(f"{test_sha}:compos_test:")
        assert item["references"] == [item["id"]]
        assert len(item["demonstrations"]) == 4
        assert all(d.startswith(f"{pool_sha}:compos_train:") for d in item["demonstrations"])
        assert {"rouge2", "rougeL", "coverage", "verifier_failures"} <= set(item["scores"])
        assert isinstance(item["verification"]["edges"], list)
    claimed = _task(json.loads(bundles[framework].read_text()))["metrics"]
    assert {"bleu4", "cider", "meteor", "verified_share"} <= set(claimed)


def _answered(items: list[dict]) -> dict:
    """An item whose verifier answered at least one question."""
    return next(item for item in items if item["verification"]["edges"])


def _reply(task: dict, items: list[dict]) -> None:
    items[0]["reply"] += " and a cat"


def _verdict(task: dict, items: list[dict]) -> None:
    edge = _answered(items)["verification"]["edges"][0]
    edge[3] = not edge[3]


def _demonstration(task: dict, items: list[dict]) -> None:
    items[0]["demonstrations"].reverse()


def _reference(task: dict, items: list[dict]) -> None:
    items[0]["references"] = [items[1]["id"]]


def _score(task: dict, items: list[dict]) -> None:
    items[0]["scores"]["rouge2"] += 1.0


def _metric(task: dict, items: list[dict]) -> None:
    task["metrics"]["bleu4"]["value"] += 0.5


TAMPERING = {
    "reply": (_reply, "the stored reply gives the sentence"),
    "verifier answer": (_verdict, "its verdicts give verified="),
    "demonstration id": (_demonstration, "its demonstrations are not those the task's sampler"),
    "reference id": (_reference, "its reference must be the item's own sentence"),
    "per-item score": (_score, "per-item rouge2: the bundle stores"),
    "metric": (_metric, f"evidence: {TASK} metric bleu4: the bundle claims"),
}


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_each_change_is_caught(
    bundles: dict[str, Path], framework: str, kind: str, tmp_path: Path
) -> None:
    change, expected = TAMPERING[kind]
    path = _tampered(bundles[framework], change, tmp_path / "tampered.bundle.json")
    check = check_file(path, None)
    assert not check.valid
    assert any(expected in problem for problem in check.problems), check.problems
    assert "checksum" not in " ".join(check.problems)  # resealed: only the evidence tells


@pytest.mark.slow
def test_score_samples_output_bundle_and_report_column(tmp_path: Path) -> None:
    """References as replies through `conceptcomb score`: every metric recomputed and at
    its maximum; the report's CGGC row says partial."""
    bundle = cggc_bundle(tmp_path / "refs", tasks=("cggc_ood",), limit=6)
    check = check_file(bundle, None)
    assert check.valid, check.problems
    (task,) = check.tasks
    assert task.status == "partial" and task.line().startswith("cggc_ood: partial (6 of the ")
    claimed = _task_named(json.loads(bundle.read_text()), "cggc_ood")["metrics"]
    assert claimed["bleu4"]["value"] == pytest.approx(100.0)
    assert claimed["rouge2"]["value"] == pytest.approx(100.0)
    code, printed = run_cli(
        "report", str(bundle.parent), "--out", str(tmp_path / "report"), "--no-plots",
        "--no-published",
    )  # fmt: skip
    assert code == 0, printed
    rows = [
        row
        for table in sorted((tmp_path / "report").glob("cggc*.csv"))
        for row in csv.DictReader(table.open(encoding="utf-8"))
    ]
    assert rows and {row["verification"] for row in rows} == {"partial"}, rows


def _task_named(bundle: dict, name: str) -> dict:
    return next(task for task in bundle["tasks"] if task["task"] == name)


# --- Every Eval Ever and the Hub ---------------------------------------------------------------
@pytest.fixture(scope="module")
def exported(
    bundles: dict[str, Path], eee_python: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Both runs' bundles as EEE files, valid for EEE and checked as the bundles."""
    return round_trip(bundles, tmp_path_factory.mktemp("cggc-eee"), eee_python)


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_eee_files_hold_the_verifier_the_demonstrations_and_the_corpus_metrics(
    exported: dict[str, Path], framework: str, tmp_path: Path
) -> None:
    results = {
        r["evaluation_result_id"].split(":")[1]: r
        for r in partial_results(exported[framework], TASK, LIMIT)
    }
    bleu = results["bleu4"]["metric_config"]
    assert bleu["additional_details"]["aggregation"] == "corpus" and "llm_scoring" not in bleu
    verified = results["verified_share"]["metric_config"]["llm_scoring"]
    assert "Relation: " in verified["input_prompt"]  # the verifier's prompt, per relation
    _, samples = samples_for(exported[framework], TASK)
    rows = rows_of(samples)
    assert {row["evaluation_result_id"].split(":")[1] for row in rows} >= {"rouge2", "coverage"}
    assert not any(row["evaluation_result_id"].endswith((":bleu4", ":cider")) for row in rows)
    for row in rows:
        demonstrations = json.loads(row["metadata"]["demonstrations"])
        assert len(demonstrations) == 4 and row["input"]["reference"] == [row["sample_id"]]
        assert isinstance(json.loads(row["metadata"]["verification"])["edges"], list)
        assert row["answer_attribution"][0]["extracted_value"] == json.loads(
            row["metadata"]["answer"]
        )
    edited_reply_is_caught(exported[framework], TASK, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_hub_entries_name_the_dataset_given(
    bundles: dict[str, Path], framework: str, tmp_path: Path
) -> None:
    """The headline of a _verified task is ROUGE-2 (the paper's first column) on the items
    the verifier kept: a run where it kept none has no value to show, and says so."""
    claimed = _task(json.loads(bundles[framework].read_text()))["metrics"]["rouge2_verified"]
    if claimed["value"] is None:
        code, printed = run_cli("export", "--to", "hf", str(bundles[framework]), "--out",
                                str(tmp_path), "--dataset-id", "cggc=someone/cggc",
                                "--model-id", SMOLLM2)  # fmt: skip
        assert code == 2 and "its headline metric rouge2_verified has no value" in printed
        return
    (entry,) = hub_entries(bundles[framework], tmp_path, "cggc=someone/cggc")
    assert (entry.dataset_id, entry.task_id) == ("someone/cggc", TASK)
    assert entry.value == pytest.approx(claimed["value"])
    assert "PARTIAL: 3 of 15985 test items" in entry.notes


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_a_changed_verifier_verdict_in_the_files_is_caught(
    exported: dict[str, Path], framework: str, tmp_path: Path
) -> None:
    """One verifier answer flipped in an item's rows, the files resealed as a forger would:
    only the evidence tells, and it does (INVALID, exit 1)."""
    copy = tmp_path / "edited"
    shutil.copytree(exported[framework], copy)
    _, samples = samples_for(copy, TASK)
    rows = rows_of(samples)
    answered = next(
        row["sample_id"] for row in rows if json.loads(row["metadata"]["verification"])["edges"]
    )
    for row in rows:
        if row["sample_id"] == answered:
            verification = json.loads(row["metadata"]["verification"])
            verification["edges"][0][3] = not verification["edges"][0][3]
            row["metadata"]["verification"] = json.dumps(verification, ensure_ascii=False)
    write_rows(samples, rows)
    reseal(copy)
    code, printed = run_cli("validate-bundle", str(copy))
    assert code == 1 and ": INVALID" in printed and f"{TASK}: FAILED" in printed, printed
    assert "its verdicts give verified=" in printed and "checksum" not in printed, printed

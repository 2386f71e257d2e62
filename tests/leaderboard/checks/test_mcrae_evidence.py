"""McRae bundles of real SmolLM2 runs (lm-eval and Inspect, 2 concepts): each item's reply,
parsed properties and matches against the gold features, re-checked offline; every edit
resealed with the package's own hash functions is caught."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.checks.validate import check_bundle
from conceptcomb.mcrae.evidence import McraeEvidence
from conceptcomb.mcrae.metrics import MODES
from conceptcomb.testing.commands import inspect_eval_command
from tests.conftest import MCRAE_LM_EVAL_LIMIT, MCRAE_LM_EVAL_TASK, LmEvalOutput
from tests.leaderboard.checks.test_evidence import run_cli
from tests.leaderboard.eee_support import (
    edited_reply_is_caught,
    hub_entries,
    partial_results,
    round_trip,
    rows_of,
    samples_for,
)
from tests.leaderboard.run_support import bundles_of, load, run_ok

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
TASK = MCRAE_LM_EVAL_TASK
LIMIT = MCRAE_LM_EVAL_LIMIT


@pytest.fixture(scope="module")
def bundles(
    mcrae_lm_eval: LmEvalOutput,
    smollm2_inspect_model: list[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """The session's lm-eval run of SmolLM2 on 2 concepts (`mcrae_lm_eval`, tests/conftest.py,
    shared with tests/mcrae/test_frameworks.py), one Inspect run of SmolLM2 on them (its
    threads waiting passively, `model_run_env`), and their bundles. Its first user pays it:
    the Inspect process loading SmolLM2 and generating up to 64 tokens per concept, the
    lm-eval run where no test of the session has made it yet, then `submit-bundle` checking
    both bundles: 117 s of setup in test_bundles_are_partial_with_the_matches_of_every_property
    with this module alone, both runs and the SmolLM2 folder's conversion included (on 2
    cores at load 9-10, 2026-12-06)."""
    root = tmp_path_factory.mktemp("mcrae-evidence")
    run_ok(inspect_eval_command(
        f"conceptcomb/{TASK}", model=smollm2_inspect_model, limit=LIMIT, max_tokens=64,
        log_dir=root / "inspect", display="plain",
    ))  # fmt: skip
    return bundles_of([mcrae_lm_eval.out, root / "inspect"], root / "b")


def items_of(bundle: dict) -> list[dict]:
    return decode(next(t for t in bundle["tasks"] if t["task"] == TASK)["evidence"], TASK)


def resealed(bundle: dict, items: list[dict]) -> dict:
    """The bundle with these items, its checksums recomputed as an editor would."""
    next(t for t in bundle["tasks"] if t["task"] == TASK)["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def gold_features(concept: str) -> tuple[str, ...]:
    test = McraeEvidence().test_set(TASK, {}, None)
    return test.items[f"esslli08_clustering_nouns:{concept}"].features


def test_bundles_are_partial_with_the_matches_of_every_property(bundles: dict[str, Path]) -> None:
    """Both bundles valid and partial, each property's matches against the gold features.
    Where it runs first in the module it pays `bundles` (see there: 117 s of setup at load
    9-10, 2026-12-06)."""
    assert set(bundles) == {"lm-eval", "inspect"}
    code, printed = run_cli("validate-bundle", *map(str, bundles.values()))
    assert code == 0, printed
    assert printed.count(f"{TASK}: partial ({LIMIT} of the 44 test items)") == 2
    for path in bundles.values():
        items = items_of(load(path))
        assert len(items) == LIMIT and any(item["answer"] for item in items)
        for item in items:
            features = set(gold_features(item["id"].rsplit(":", 1)[1]))
            for mode in MODES:
                assert len(item["matches"][mode]) == len(item["answer"])
                assert {f for row in item["matches"][mode] for f in row} <= features


def _item_with_properties(items: list[dict]) -> dict:
    return next(item for item in items if item["answer"])


def _change_reply(items: list[dict]) -> str:
    _item_with_properties(items)["reply"] = "1. made up\n2. after the run"
    return "the stored reply parses to"


def _change_answer(items: list[dict]) -> str:
    _item_with_properties(items)["answer"][0] = "something else"
    return "the stored reply parses to"


def _change_match(items: list[dict]) -> str:
    """A miss made a hit (or a hit a miss): the walk over the matches gives other scores."""
    item = _item_with_properties(items)
    row = item["matches"]["phrase"][0]
    claimed = {f for r in item["matches"]["phrase"] for f in r}
    free = [f for f in gold_features(item["id"].rsplit(":", 1)[1]) if f not in claimed]
    item["matches"]["phrase"][0] = [] if row else free[:1]
    return "the per-item scores stored are not those its matches give (P@10: stored"


def _foreign_match(items: list[dict]) -> str:
    _item_with_properties(items)["matches"]["strict"][0] = ["is_made_up"]
    return "'is_made_up'] is not a gold feature of"


def _change_score(items: list[dict]) -> str:
    _item_with_properties(items)["scores"]["P@20"] += 0.05
    return "the per-item scores stored are not those its matches give (P@20: stored"


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
@pytest.mark.parametrize(
    "edit", [_change_reply, _change_answer, _change_match, _foreign_match, _change_score]
)
def test_an_edited_item_is_caught_naming_it(
    bundles: dict[str, Path], framework: str, edit: Callable[[list[dict]], str]
) -> None:
    bundle = load(bundles[framework])
    items = items_of(bundle)
    expected = edit(items)
    key = _item_with_properties(items)["id"].split(":", 1)[1]
    check = check_bundle(resealed(bundle, items))
    assert not any(p.startswith("checksum") for p in check.problems)
    mine = [p for p in check.problems if p.startswith(f"evidence: {TASK} item {key}: ")]
    assert mine and expected in mine[0], check.problems


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_an_edited_metric_is_caught(bundles: dict[str, Path], framework: str) -> None:
    """A claimed metric edited and resealed is caught. The first test of the module pays
    `bundles` (the real runs): 254 s of setup for [inspect] (on 2 cores at load 4-7,
    2026-12-06)."""
    bundle = load(bundles[framework])
    task = next(t for t in bundle["tasks"] if t["task"] == TASK)
    task["metrics"]["R@30"]["value"] += 0.01
    bundle["content_sha256"] = content_sha256(bundle)
    problems = [p for p in check_bundle(bundle).problems if "metric" in p]
    assert len(problems) == 1
    assert problems[0].startswith(f"evidence: {TASK} metric R@30: the bundle claims ")


def test_rescore_rematches_and_reproduces_the_claims(bundles: dict[str, Path]) -> None:
    code, printed = run_cli("validate-bundle", str(bundles["inspect"]), "--rescore")
    assert code == 0, printed
    assert "items whose scores changed: 0" in printed
    assert "reproduces the claimed metrics (tolerance 0)" in printed


def test_report_marks_the_mcrae_rows_partial(bundles: dict[str, Path], tmp_path: Path) -> None:
    folder = next(iter(bundles.values())).parent
    code, _ = run_cli("report", str(folder), "--out", str(tmp_path / "out"), "--no-plots")
    assert code == 0
    with (tmp_path / "out" / "mcrae.csv").open(newline="") as handle:
        ours = [row for row in csv.DictReader(handle) if row["origin"] == "ours"]
    assert sorted(row["verification"] for row in ours) == ["partial", "partial"]


# --- Every Eval Ever and the Hub ---------------------------------------------------------------
@pytest.fixture(scope="module")
def exported(
    bundles: dict[str, Path], eee_python: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Both runs' bundles as EEE files, valid for EEE and checked as the bundles."""
    return round_trip(bundles, tmp_path_factory.mktemp("mcrae-eee"), eee_python)


@pytest.mark.parametrize("framework", ["lm-eval", "inspect"])
def test_eee_rows_carry_each_propertys_matches(
    exported: dict[str, Path], framework: str, tmp_path: Path
) -> None:
    folder = exported[framework]
    results = {
        r["evaluation_result_id"].split(":")[1]: r for r in partial_results(folder, TASK, LIMIT)
    }
    p10 = results["P@10"]["metric_config"]
    assert (p10["metric_unit"], p10["min_score"], p10["max_score"]) == ("proportion", 0.0, 1.0)
    assert results["n_properties"]["metric_config"]["max_score"] == "Infinity"
    for row in rows_of(samples_for(folder, TASK)[1]):
        matches = json.loads(row["metadata"]["matches"])
        answer = json.loads(row["answer_attribution"][0]["extracted_value"])
        assert set(matches) == set(MODES) and all(len(m) == len(answer) for m in matches.values())
        assert row["input"]["reference"] == []  # the norms are not redistributed
    edited_reply_is_caught(folder, TASK, tmp_path)


def test_hub_entries_are_on_a_0_100_scale(bundles: dict[str, Path], tmp_path: Path) -> None:
    (entry,) = hub_entries(bundles["lm-eval"], tmp_path, "mcrae=someone/mcrae-norms")
    claimed = next(t for t in load(bundles["lm-eval"])["tasks"] if t["task"] == TASK)["metrics"]
    assert entry.value == pytest.approx(100 * claimed["P@10"]["value"])  # a proportion, x100
    assert "P@10 (a proportion, x100)" in entry.notes and entry.dataset_id == "someone/mcrae-norms"

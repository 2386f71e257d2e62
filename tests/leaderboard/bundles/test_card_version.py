"""A benchmark's card is what the code reads: a task's version changed in ``eval.yaml`` (a
copy, put where the package looks) changes the version the task runs with, hence the
bundle of a run and both leaderboard exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.common import evalcard
from tests.leaderboard.eee_support import parse_eval_result_entries, run_cli, samples_for

pytestmark = pytest.mark.shared_data
TASK = "ccpt_tp"  # scored against the gold type: no judge needed


def run_and_export(root: Path) -> tuple[dict, dict, list]:
    """`conceptcomb score` on 3 items (their own answers), its bundle, both exports."""
    root.mkdir()
    lines = [
        {"doc": item.as_doc(), "response": json.dumps({"property_type": item.label})}
        for item in load_items(spec_by_name(TASK))[:3]
    ]
    predictions = root / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, printed = run_cli(
        "score", TASK, "--predictions", str(predictions), "--model-name", "m",
        "--output", str(root / "r.json"), "--samples-output", str(root / "s.jsonl"),
    )  # fmt: skip
    assert code == 0, printed
    assert run_cli("submit-bundle", str(root / "r.json"), "--out", str(root))[0] == 0
    (bundle_path,) = root.glob("*.bundle.json")
    bundle = json.loads(bundle_path.read_text())
    model = ("--model-id", "someone/m")
    assert (
        run_cli("export", "--to", "eee", str(bundle_path), "--out", str(root / "eee"), *model)[0]
        == 0
    )
    aggregate = json.loads(samples_for(root / "eee", TASK)[0].read_text())
    code, printed = run_cli(
        "export", "--to", "hf", str(bundle_path), "--out", str(root / "hf"), *model
    )
    assert code == 0, printed
    (hf,) = (root / "hf" / ".eval_results").glob("*.yaml")
    return bundle, aggregate, parse_eval_result_entries(yaml.safe_load(hf.read_text()))


def test_a_version_changed_in_eval_yaml_changes_the_bundle_and_the_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = evalcard.card_path("conceptcomb.ccpt")
    before = evalcard.load_card("conceptcomb.ccpt").version
    bundle, aggregate, entries = run_and_export(tmp_path / "as shipped")

    edited = tmp_path / "eval.yaml"
    text = card.read_text()
    assert f'\nversion: "{before}"\n' in text
    edited.write_text(text.replace(f'\nversion: "{before}"\n', '\nversion: "9.9"\n'))
    real = evalcard.card_path
    monkeypatch.setattr(
        evalcard,
        "card_path",
        lambda package: edited if package == "conceptcomb.ccpt" else real(package),
    )
    evalcard.load_card.cache_clear()
    try:
        from conceptcomb.ccpt.inspect_tasks import ccpt_tp

        assert ccpt_tp().version == "9.9"  # Inspect's task, as `inspect eval` builds it
        changed, changed_aggregate, changed_entries = run_and_export(tmp_path / "edited")
    finally:
        evalcard.load_card.cache_clear()

    versions = [task["version"] for task in (bundle["tasks"][0], changed["tasks"][0])]
    assert versions == [before, "9.9"]
    library = [
        a["eval_library"]["additional_details"]["task_version"]
        for a in (aggregate, changed_aggregate)
    ]
    assert library == [before, "9.9"]
    result = changed_aggregate["evaluation_results"][0]["score_details"]["details"]
    assert result["task_version"] == "9.9"
    assert f"(task version {before})" in entries[0].notes
    assert "(task version 9.9)" in changed_entries[0].notes

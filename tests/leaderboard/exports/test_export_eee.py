"""``conceptcomb export --to eee`` of the full CCPT group (1,534 items scored with the authors'
recorded answers and GPT-4o's recorded ratings, replayed by the loopback judge, through
``conceptcomb score``): every file valid for Every Eval Ever (its schemas, in process, and
``every_eval_ever validate`` in a Python 3.12 environment), and the round trip: the files
checked as the bundle they came from, every edit caught. The export of real lm-eval and
Inspect runs: tests/leaderboard/exports/test_export_runs.py and the benchmarks' evidence tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256, find_secrets
from tests.leaderboard.eee_support import (
    assert_eee_valid,
    eee_files,
    reseal,
    rows_of,
    run_cli,
    samples_for,
    task_lines,
    write_rows,
)

pytestmark = pytest.mark.shared_data
MODEL = (
    "conceptcomb/ccpt-recorded-answers"  # the run names no Hub model: the replies are the data's
)


@pytest.fixture(scope="module")
def exported(group_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eee")
    code, printed = run_cli("export", "--to", "eee", str(group_bundle), "--out", str(out),
                            "--model-id", MODEL, "--organization", "conceptcomb tests")  # fmt: skip
    assert code == 0, printed
    assert printed.count("instance rows") == 4
    return out


@pytest.fixture
def copy(exported: Path, tmp_path: Path) -> Path:
    target = tmp_path / "eee"
    shutil.copytree(exported, target)
    return target


def test_every_file_is_valid_every_eval_ever(exported: Path, eee_python: str) -> None:
    report = assert_eee_valid(exported, eee_python)
    assert {entry["file_type"] for entry in report} == {"aggregate", "instance"}


def test_the_files_hold_what_the_bundle_holds(exported: Path, group_bundle: Path) -> None:
    bundle = json.loads(group_bundle.read_text(encoding="utf-8"))
    aggregates, samples = eee_files(exported)
    assert len(aggregates) == len(samples) == 4
    assert all(p.parent == exported / "data" / "ccpt" / "conceptcomb" / "ccpt-recorded-answers"
               for p in aggregates)  # fmt: skip
    pi = next(t for t in bundle["tasks"] if t["task"] == "ccpt_pi_emergent")
    aggregate, rows_path = samples_for(exported, "ccpt_pi_emergent")
    data = json.loads(aggregate.read_text())
    assert data["model_info"]["id"] == MODEL
    assert data["source_metadata"]["source_organization_name"] == "conceptcomb tests"
    assert data["eval_library"]["additional_details"]["task_version"] == pi["version"] == "1.0"
    results = {r["evaluation_result_id"]: r for r in data["evaluation_results"]}
    e = results["ccpt_pi_emergent:E"]
    assert e["score_details"]["score"] == pi["metrics"]["E"]["value"]
    # the interval's (conceptcomb.leaderboard.statistics.intervals): the framework's, up to rounding
    standard_error = e["score_details"]["uncertainty"]["standard_error"]["value"]
    assert standard_error == pi["metrics"]["E"]["interval"]["stderr"]
    assert standard_error == pytest.approx(pi["metrics"]["E"]["stderr"], rel=1e-12)
    assert e["score_details"]["uncertainty"]["num_samples"] == 200
    config = e["metric_config"]
    assert (config["min_score"], config["max_score"], config["lower_is_better"]) == (0, 100, False)
    assert config["additional_details"]["headline"] == "true"
    assert results["ccpt_pi_emergent:R_HMP"]["metric_config"]["lower_is_better"] is True
    failures = results["ccpt_pi_emergent:format_failures"]["metric_config"]
    assert (failures["metric_unit"], failures["max_score"]) == ("count", "Infinity")
    scoring = config["llm_scoring"]
    assert "Concept: " in scoring["input_prompt"] and "Relevance" in scoring["input_prompt"]
    (judge,) = scoring["judges"]
    assert judge["model_info"]["name"] == "gpt-4o" and judge["temperature"] == 0.0
    assert "llm_scoring" not in failures  # no judge decides it
    source = e["source_data"]
    assert source["url"] == [
        "https://github.com/seokwon99/CCPT/tree/dbd6c08b413b939c3f3878ffb0bd5f048f71dc50"
    ]
    assert source["additional_details"]["partial"] == "false"
    rows = rows_of(rows_path)
    items = decode(pi["evidence"], "pi")
    assert {row["sample_id"] for row in rows} == {item["id"] for item in items}  # all 200
    assert len(rows) == data["detailed_evaluation_results"]["total_rows"] == 6 * 200
    first = next(row for row in rows if row["sample_id"] == items[0]["id"])
    assert json.loads(first["metadata"]["judged"]) == items[0]["judged"]
    assert first["output"]["raw"] == [items[0]["reply"]]
    assert json.loads(first["answer_attribution"][0]["extracted_value"]) == items[0]["answer"]


def test_validate_bundle_checks_the_files_as_the_bundle(exported: Path, group_bundle: Path) -> None:
    code, from_bundle = run_cli("validate-bundle", str(group_bundle))
    assert code == 0, from_bundle
    code, from_files = run_cli("validate-bundle", str(exported))
    assert code == 0, from_files
    assert (
        "(EEE export of ccpt-recorded-answers_conceptcomb-score.bundle.json): valid" in from_files
    )
    assert task_lines(from_files) == task_lines(from_bundle)
    assert "ccpt_tp: verified (all 1000 test items)" in from_files
    aggregate, samples = samples_for(exported, "ccpt_pi_emergent")
    code, one_task = run_cli("validate-bundle", str(aggregate), str(samples))
    assert code == 1 and "missing: ccpt_npc_emergent, ccpt_pi_canceled, ccpt_tp" in one_task


def _change_rating(row: dict) -> None:
    judged = json.loads(row["metadata"]["judged"])
    judged[0][2] = 1.0 if judged[0][2] != 1.0 else 10.0
    row["metadata"]["judged"] = json.dumps(judged)


def test_one_changed_rating_in_a_row_is_invalid(copy: Path) -> None:
    _, path = samples_for(copy, "ccpt_pi_emergent")
    rows = rows_of(path)
    _change_rating(rows[7])  # the second item's second row
    write_rows(path, rows)
    code, printed = run_cli("validate-bundle", str(copy))
    assert code == 1 and ": INVALID" in printed
    assert f"{path}: line 8 (" in printed and "metadata.judged[0][2] is " in printed
    assert "ccpt_pi_emergent: FAILED (checked all 200 test items" in printed
    assert "ccpt_tp: not counted" in printed


@pytest.mark.parametrize("what", ["rating", "reply", "score"])
def test_a_resealed_edit_of_an_item_is_caught_by_its_checks(copy: Path, what: str) -> None:
    """Every row of one item edited alike, and the hashes put right again."""
    _, path = samples_for(copy, "ccpt_pi_emergent")
    rows = rows_of(path)
    target = rows[0]["sample_id"]
    for row in rows:
        if row["sample_id"] != target:
            continue
        if what == "rating":
            _change_rating(row)
        elif what == "reply":
            row["output"]["raw"] = ['{"property": "made up after the run"}']
        else:
            scores = json.loads(row["metadata"]["scores"])
            scores["E"] += 10.0
            row["metadata"]["scores"] = json.dumps(scores)
    write_rows(path, rows)
    reseal(copy)
    code, printed = run_cli("validate-bundle", str(copy))
    assert code == 1, printed
    assert "checksum:" not in printed  # resealed: only the item's own checks tell
    key = target.split(":", 1)[1]
    expected = {
        # the judge's answer, kept beside the rating, gives the rating it had
        "rating": f"ccpt_pi_emergent item {key}: judge question 1 (",
        "reply": f"ccpt_pi_emergent item {key}: the stored reply parses to",
        "score": f"ccpt_pi_emergent item {key}: the per-item scores stored",
    }[what]
    assert expected in printed, printed


def test_a_changed_metric_or_row_score_is_named(copy: Path) -> None:
    aggregate, path = samples_for(copy, "ccpt_tp")
    data = json.loads(aggregate.read_text())
    data["evaluation_results"][0]["score_details"]["score"] += 1.0
    aggregate.write_text(json.dumps(data))
    rows = rows_of(path)
    rows[3]["evaluation"]["score"] = 100.0 - rows[3]["evaluation"]["score"]
    write_rows(path, rows)
    code, printed = run_cli("validate-bundle", str(copy))
    assert code == 1
    assert f"{aggregate}: evaluation_results[0].score_details.score is " in printed
    assert f"{path}: line 4 (" in printed and "evaluation.score is " in printed


def test_files_that_are_not_an_export_get_one_line(copy: Path, tmp_path: Path) -> None:
    _, path = samples_for(copy, "ccpt_tp")
    path.write_text("not json\n")
    foreign = tmp_path / "foreign" / "data" / "x" / "y" / "z"
    foreign.mkdir(parents=True)
    other = foreign / "00000000-0000-4000-8000-000000000000.json"
    other.write_text(json.dumps({"schema_version": "0.3.0", "evaluation_results": []}))
    code, printed = run_cli("validate-bundle", str(copy), str(other))
    assert code == 1 and "Traceback" not in printed
    assert f"{path}: its rows cannot be read (line 1:" in printed
    assert f"INVALID: {other}: not written by `conceptcomb export --to eee`" in printed


def test_export_refuses_bad_input_in_one_line(group_bundle: Path, tmp_path: Path) -> None:
    edited = json.loads(group_bundle.read_text(encoding="utf-8"))
    edited["tasks"][0]["metrics"]["E"]["value"] = 99.0
    path = tmp_path / "edited.bundle.json"
    path.write_text(json.dumps(edited))
    cases = {
        (str(path), "--model-id", MODEL): f"{path}: INVALID bundle (checksum: content_sha256",
        (str(group_bundle),): "has no Hugging Face-style id (a local path, or a name without "
        "its owner): give it with --model-id OWNER/NAME",
        (str(group_bundle), "--model-id", "just-a-name"): "--model-id 'just-a-name': give the "
        "model as the Hugging Face Hub names it",
        (str(tmp_path / "nowhere.bundle.json"),): "nowhere.bundle.json: no such file or folder",
    }
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    for to in ("eee", "hf"):
        code, printed = run_cli("export", "--to", to, str(group_bundle), "--out", str(blocked),
                                "--model-id", MODEL)  # fmt: skip
        assert code == 2 and len(printed.strip().splitlines()) == 1, printed
        assert "cannot be written (" in printed and "choose another --out" in printed
    for args, message in cases.items():
        code, printed = run_cli("export", "--to", "eee", *args, "--out", str(tmp_path / "o"))
        lines = printed.strip().splitlines()
        assert code == 2 and len(lines) == 1 and message in lines[0], printed
    assert not (tmp_path / "o").exists()


def test_no_secret_reaches_the_files(group_bundle: Path, tmp_path: Path) -> None:
    """A key in a reply is redacted in the bundle, hence in the export; a bundle holding
    one anyway is INVALID and not exported."""
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    bundle = json.loads(group_bundle.read_text(encoding="utf-8"))
    task = bundle["tasks"][0]
    items = decode(task["evidence"], "x")
    items[0]["reply"] = f"my key is {key}"
    task["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    leaky = tmp_path / "leaky.bundle.json"
    leaky.write_text(json.dumps(bundle))
    code, printed = run_cli("export", "--to", "eee", str(leaky), "--out", str(tmp_path / "o"),
                            "--model-id", MODEL)  # fmt: skip
    assert (
        code == 2 and "INVALID bundle (secret: bundle.tasks[0].evidence.items[0].reply" in printed
    )


def test_no_secret_in_the_exported_files(exported: Path) -> None:
    aggregates, samples = eee_files(exported)
    for path in aggregates:
        assert find_secrets(json.loads(path.read_text()), str(path)) == []
    for path in samples:
        assert find_secrets(rows_of(path), str(path)) == []


def _edit_aggregate(root: Path, task: str, change) -> Path:
    aggregate, _ = samples_for(root, task)
    data = json.loads(aggregate.read_text())
    change(data["source_metadata"]["additional_details"], data)
    aggregate.write_text(json.dumps(data))
    return aggregate


def _first_row(root: Path, change) -> None:
    _, path = samples_for(root, "ccpt_pi_emergent")
    rows = rows_of(path)
    change(rows[0])
    write_rows(path, rows)


HOSTILE = {
    "task record not JSON": lambda root: _edit_aggregate(
        root, "ccpt_tp", lambda d, _: d.update(conceptcomb_task="{not json")
    ),
    "header without the task list": lambda root: [
        _edit_aggregate(root, t, lambda d, _: d.update(conceptcomb_bundle='{"model": []}'))
        for t in ("ccpt_tp", "ccpt_pi_emergent", "ccpt_pi_canceled", "ccpt_npc_emergent")
    ],
    "a metadata value that is no JSON text": lambda root: _first_row(
        root, lambda row: row["metadata"].update(scores=7)
    ),
    "metadata that is a list": lambda root: _first_row(
        root, lambda row: row.update(metadata=[1, 2])
    ),
    "rows nested 100 deep": lambda root: _first_row(
        root, lambda row: row.update(extra=json.loads("[" * 100 + "]" * 100))
    ),
    "options of another shape": lambda root: _edit_aggregate(
        root, "ccpt_tp", lambda d, _: d.update(conceptcomb_export='{"colour": "blue"}')
    ),
    "an instance file gone": lambda root: samples_for(root, "ccpt_tp")[1].unlink(),
    "source_metadata a list": lambda root: _edit_aggregate(
        root, "ccpt_tp", lambda _, data: data.update(source_metadata=[1])
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_damaged_files_are_invalid_in_lines_never_a_traceback(copy: Path, case: str) -> None:
    HOSTILE[case](copy)
    code, printed = run_cli("validate-bundle", str(copy))
    assert code == 1, printed
    assert "INVALID" in printed and "Traceback" not in printed
    assert "verified (" not in printed.replace("checked all", "")


def test_a_multi_oracle_item_keeps_all_its_replies(tmp_path: Path) -> None:
    """The best of N replies: every reply in output.raw, its answer and its own judge
    ratings (metadata.samples); the round trip checks them reply by reply."""
    from conceptcomb.ccpt.data import load_items
    from conceptcomb.ccpt.tasks import spec_by_name
    from conceptcomb.testing.judge_server import LoopbackServer
    from tests.leaderboard.checks.test_evidence import score_and_bundle

    items = load_items(spec_by_name("ccpt_pi_emergent"))[:4]
    lines = [
        {"doc": item.as_doc(),
         "responses": [json.dumps({"property": item.property}), "I cannot say.", "Maybe red"]}
        for item in items
    ]  # fmt: skip
    with LoopbackServer() as server:
        bundle = score_and_bundle(tmp_path, "ccpt_pi_emergent_oracle", lines,
                                  "--judge-base-url", server.base_url)  # fmt: skip
    out = tmp_path / "eee"
    code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(out),
                            "--model-id", MODEL)  # fmt: skip
    assert code == 0, printed
    aggregate, samples = samples_for(out, "ccpt_pi_emergent_oracle")
    results = json.loads(aggregate.read_text())["evaluation_results"]
    assert {r["evaluation_result_id"].split(":")[1] for r in results} >= {"E_oracle", "R_NP_oracle"}
    for row in rows_of(samples):
        assert len(row["output"]["raw"]) == 3
        assert [a["source"] for a in row["answer_attribution"]] == [
            "output.raw[0]", "output.raw[1]", "output.raw[2]"
        ]  # fmt: skip
        per_reply = json.loads(row["metadata"]["samples"])
        assert len(per_reply) == 3 and "judged" in per_reply[0]
    code, printed = run_cli("validate-bundle", str(out))
    assert code == 0 and "ccpt_pi_emergent_oracle: partial (4 of the 200 test items)" in printed
    rows = rows_of(samples)
    for row in rows:  # the third reply of the first item changed, every row of it, resealed
        if row["sample_id"] == rows[0]["sample_id"]:
            row["output"]["raw"][2] = json.dumps({"property": "sweet"})
    write_rows(samples, rows)
    reseal(out)
    code, printed = run_cli("validate-bundle", str(out))
    key = rows[0]["sample_id"].split(":", 1)[1]
    assert code == 1 and f"ccpt_pi_emergent_oracle item {key}: reply 3: " in printed, printed

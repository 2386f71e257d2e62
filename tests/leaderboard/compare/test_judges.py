"""The judge is part of the result: runs scored by different judges are not paired on the
metrics a judge decides, nor ranked together; the same judge behind two endpoints is one
judge; no bundle or export names the loopback judge's address or a local path.

Real runs: the CCPT authors' recorded ratings replayed by loopback judge servers on the
dataset's own answers (``ccpt_pi_emergent``, 200 items): A by ``gpt-4o`` at one server, B by
a generous judge (every rating 3 points higher) of another model, C by ``gpt-4o`` at a
third server; and ``cggc_ood_verified`` (its reference sentences) verified by two judges of
different models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conceptcomb.ccpt.tasks import default_specs
from conceptcomb.testing.cggc_references import write_reference_predictions
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import (
    recorded_ratings,
    score_predictions,
    submit_bundle,
    write_gold_predictions,
)
from tests.leaderboard.eee_support import run_cli

pytestmark = pytest.mark.shared_data
TASK = "ccpt_pi_emergent"
JUDGED = {"E", "R_HMP", "R_NP"}
GENEROUS = "generous-judge"
CGGC = "cggc_ood_verified"


def _ccpt_run(root: Path, name: str, judge: str, shift: int) -> Path:
    """The recorded answers scored by a loopback judge of model ``judge``; the bundle."""
    out = root / name
    out.mkdir()
    spec = next(spec for spec in default_specs() if spec.name == TASK)
    items = write_gold_predictions(spec, out / "replies.jsonl")
    ratings = {pair: min(10, r + shift) for pair, r in recorded_ratings(items).items()}
    with LoopbackServer(ratings=ratings) as server:
        results = score_predictions(
            out, TASK, out / "replies.jsonl", name,
            "--judge-base-url", server.base_url, "--judge-model", judge,
            "--judge-cache", str(out / "judge.sqlite"),
        )  # fmt: skip
    return submit_bundle([results], out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("judges")
    return {
        "A": _ccpt_run(root, "model-a", "gpt-4o", 0),
        "B": _ccpt_run(root, "model-b", GENEROUS, 3),
        "C": _ccpt_run(root, "model-c", "gpt-4o", 0),
    }


def _compare(*args: str) -> tuple[int, dict | None, str]:
    code, printed = run_cli("compare", *args, "--json")
    start = printed.find("{")
    return code, (json.loads(printed[start:]) if code == 0 else None), printed


def _judge_lines(printed: str) -> list[str]:
    return [line for line in printed.splitlines() if "scored by different judges" in line]


def test_different_judges_are_not_paired(runs: dict[str, Path]) -> None:
    code, found, printed = _compare(str(runs["A"]), str(runs["B"]))
    assert code == 1 and found is None  # nothing else to compare on this task
    (line,) = _judge_lines(printed)
    assert "gpt-4o (API chat" in line and f"{GENEROUS} (API chat" in line
    assert "E, R_HMP, R_NP not paired" in line
    # The command that re-scores B with A's judge, whose endpoint (loopback) is not recorded.
    assert (
        f"conceptcomb score ccpt_pi_emergent --predictions {runs['B']} --judge-model gpt-4o "
        "--judge-base-url URL --output rescored.json --samples-output rescored.samples.jsonl"
    ) in line
    assert "127.0.0.1" not in printed


def test_allow_different_judges_labels_every_row(runs: dict[str, Path]) -> None:
    code, found, printed = _compare(str(runs["A"]), str(runs["B"]), "--allow-different-judges")
    assert code == 0, printed
    rows = found["comparisons"]
    assert {row["metric"] for row in rows} == JUDGED
    assert {row["label"] for row in rows} == {"different judges"}
    (e_row,) = [row for row in rows if row["metric"] == "E"]
    assert e_row["difference"] != 0  # the generous judge moves E: what pairing would hide
    judges = {run["run"]: run["judges"][TASK] for run in found["runs"]}
    assert judges["A"][0]["model"] == "gpt-4o" and judges["B"][0]["model"] == GENEROUS
    assert judges["A"][0]["key"] != judges["B"][0]["key"]
    code, table = run_cli("compare", str(runs["A"]), str(runs["B"]), "--allow-different-judges")
    assert code == 0 and "E (different judges)" in table


def test_the_same_judge_behind_two_endpoints_pairs(runs: dict[str, Path]) -> None:
    code, found, printed = _compare(str(runs["A"]), str(runs["C"]))
    assert code == 0, printed
    rows = found["comparisons"]
    assert {row["metric"] for row in rows} == JUDGED and {row["label"] for row in rows} == {""}
    assert all(row["difference"] == 0 for row in rows)  # the same ratings, the same judge
    assert not _judge_lines(printed)
    (a,), (c,) = (run["judges"][TASK] for run in found["runs"])
    assert a["key"] == c["key"] and a["endpoint"] is None


def test_the_report_ranks_each_judges_runs_apart(runs: dict[str, Path], tmp_path: Path) -> None:
    code, printed = run_cli("report", *map(str, runs.values()), "--out", str(tmp_path))
    assert code == 0, printed
    page = (tmp_path / "ccpt.md").read_text()
    headings = re.findall(rf"^### {TASK}: ranked by E .*$", page, flags=re.MULTILINE)
    assert len(headings) == 2
    sections = page.split(f"### {TASK}: ranked by E")[1:]
    by_judge = {section.split("judge: ")[1].split(" ")[0]: section for section in sections}
    assert set(by_judge) == {"gpt-4o", GENEROUS}
    assert "model-a" in by_judge["gpt-4o"] and "model-c" in by_judge["gpt-4o"]
    assert "model-b" not in by_judge["gpt-4o"] and "model-b" in by_judge[GENEROUS]
    # Every row of the judged table names its judge, the paper's rows too.
    table = page.split("### CCPT generative tasks")[1].split("###")[0]
    header = table.splitlines()[2]
    assert header.split(" | ")[3] == "judge"
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]
    judges = {line.split(" | ")[0].strip("| *"): line.split(" | ")[3] for line in rows}
    assert judges["model-b"].startswith(f"{GENEROUS} (API chat, ")
    assert judges["Gold"] == "GPT-4o"


def _cggc_run(root: Path, name: str, judge: str) -> Path:
    out = root / name
    out.mkdir()
    write_reference_predictions(CGGC, out / "replies.jsonl", limit=40)
    with LoopbackServer() as server:
        results = score_predictions(
            out, CGGC, out / "replies.jsonl", name,
            "--judge-base-url", server.base_url, "--judge-model", judge, "--judge-cache", "off",
        )  # fmt: skip
    return submit_bundle([results], out)


def test_metrics_no_judge_decides_still_compare(tmp_path: Path) -> None:
    a, b = _cggc_run(tmp_path, "cggc-a", "gpt-4o"), _cggc_run(tmp_path, "cggc-b", GENEROUS)
    code, found, printed = _compare(str(a), str(b), "--n-resamples", "200")
    assert code == 0, printed
    metrics = {row["metric"] for row in found["comparisons"]}
    assert metrics and not any(m.endswith("_verified") or m == "verified_share" for m in metrics)
    (line,) = _judge_lines(printed)
    assert "verified_share" in line and "yes/no verifier" in line
    code, found, printed = _compare(
        str(a), str(b), "--n-resamples", "200", "--allow-different-judges"
    )
    labels = {row["metric"]: row["label"] for row in found["comparisons"]}
    assert labels["verified_share"] == "different judges"
    assert all(label == "" for m, label in labels.items() if m in metrics)


def test_no_bundle_or_export_names_the_judges_address(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Every exporter, from a bundle and from the results file it was made of."""
    bundle = runs["A"]
    results = bundle.parent.parent / f"{TASK}.results.json"
    assert "127.0.0.1" in results.read_text()  # the run's own file names its judge's address
    written = [bundle]
    for to in ("eee", "hf"):
        for source in (bundle, results):
            out = tmp_path / f"{to}-{source.suffix}"
            code, printed = run_cli(
                "export", str(source), "--to", to, "--out", str(out), "--model-id", "org/model-a"
            )
            assert code == 0, printed
            written += [path for path in out.rglob("*") if path.is_file()]
    assert len(written) > 5
    local = str(bundle.parent.parent.parent)  # the runs' folder
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert "127.0.0.1" not in text and "localhost" not in text, path
        assert local not in text and "/tmp/" not in text, path


def test_an_old_bundle_still_reads(runs: dict[str, Path], tmp_path: Path) -> None:
    """A bundle written before judge records (its judge the old identity string, with the
    endpoint) reads, validates, and pairs with a run of the same judge: mapped, noted."""
    from conceptcomb.leaderboard.bundles.bundle import content_sha256

    bundle = json.loads(runs["A"].read_text())
    (task,) = bundle["tasks"]
    identity = "openai-chat|http://127.0.0.1:9/v1|gpt-4o|temperature=0|max_tokens=1024"
    task["judge"] = {
        "endpoint_kind": "openai-chat",
        "endpoint": "http://127.0.0.1:9/v1",
        "model": "gpt-4o",
        "decoding": {"temperature": 0, "max_tokens": 1024},
        "identity": identity,
        "prompt_sha256": task["judge"]["prompt_sha256"],
        "calibration": None,
    }
    bundle["content_sha256"] = content_sha256(bundle)
    old = tmp_path / "old.bundle.json"
    old.write_text(json.dumps(bundle))
    code, printed = run_cli("validate-bundle", str(old))
    assert code == 0 and "verified" in printed, printed
    code, found, printed = _compare(str(old), str(runs["C"]))
    assert code == 0 and {row["metric"] for row in found["comparisons"]} == JUDGED, printed
    mapped = found["runs"][0]["judges"][TASK][0]
    assert mapped["kind"] == "api-chat" and mapped["endpoint"] is None
    assert any("identity string" in note for note in mapped["notes"])
    # Its export names no address, though the old bundle's judge entry does; and validates.
    out = tmp_path / "eee"
    code, printed = run_cli(
        "export", str(old), "--to", "eee", "--out", str(out), "--model-id", "o/m"
    )
    assert code == 0, printed
    written = [path for path in out.rglob("*") if path.is_file()]
    assert written and not any("127.0.0.1" in path.read_text() for path in written)
    code, printed = run_cli("validate-bundle", str(out))
    assert code == 0 and "valid" in printed, printed

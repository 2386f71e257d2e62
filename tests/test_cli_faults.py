"""`conceptcomb score`, `judge calibrate` and `seeds` under bad conditions (issue 13):
misbehaving loopback judges, damaged inputs, output paths that do not exist yet."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.cli import main
from conceptcomb.testing.judge_server import Faults, LoopbackServer
from tests.ccpt.test_rescore import mixed_replies, write_jsonl
from tests.ccpt.test_scoring import gold_reply

SPEC = CcptTaskSpec("pi_emergent")


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    items = load_items(SPEC)[:30]
    return write_jsonl(tmp_path / "preds.jsonl", items, mixed_replies(items))


def score(predictions: Path, output: Path, *options: str) -> int:
    return main(["score", SPEC.name, "--predictions", str(predictions), "--output", str(output),
                 "--judge-cache", "off", *options])  # fmt: skip


@pytest.mark.shared_data
def test_one_truncated_body_in_ten_gives_the_clean_metrics(
    predictions: Path, tmp_path: Path, capsys
) -> None:
    with LoopbackServer() as clean:
        assert score(predictions, tmp_path / "clean.json", "--judge-base-url", clean.base_url) == 0
    faults = Faults(bad_body=0.1, bad_body_kind="truncated")
    with LoopbackServer(faults=faults) as faulty:
        assert (
            score(predictions, tmp_path / "faulty.json", "--judge-base-url", faulty.base_url) == 0
        )
        assert faulty.stats.faults >= 5  # of ~80 questions
    clean_results = json.loads((tmp_path / "clean.json").read_text())["results"]
    assert json.loads((tmp_path / "faulty.json").read_text())["results"] == clean_results
    captured = capsys.readouterr()
    assert "0 failures" in captured.out and "transport retries" in captured.out
    assert "WARNING" not in captured.err


# --- a judge that cannot work: non-zero within 5 s, one line, no traceback, no file --------
def run_cli(
    *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "conceptcomb.cli", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})  # fmt: skip
    return done, time.monotonic() - start


def messages(stderr: str) -> list[str]:
    """The lines of stderr, the judging progress bar left out."""
    return [line for line in stderr.splitlines() if line.strip() and "rating/s]" not in line]


def assert_one_line_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = messages(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("conceptcomb: error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.shared_data
@pytest.mark.parametrize("case", ["refused port", "401", "404 model", "no scheme"])
def test_a_judge_that_cannot_work_stops_the_run_at_once(
    case: str, predictions: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out" / "results.json"
    server = LoopbackServer(api_key="sk-right", models=frozenset({"judge-model"})).start()
    try:
        url, model, expected = {
            "refused port": ("http://127.0.0.1:9/v1", "judge-model", "cannot be reached"),
            "401": (server.base_url, "judge-model", "refused the API key"),
            "404 model": (server.base_url, "gpt-4o", "does not know the model"),
            "no scheme": (server.base_url.removeprefix("http://"), "judge-model", "write it as"),
        }[case]
        done, seconds = run_cli(
            "score", SPEC.name, "--predictions", str(predictions), "--output", str(output),
            "--judge-base-url", url, "--judge-model", model,
            env={"OPENAI_API_KEY": "sk-right" if case != "401" else "sk-wrong"},
        )  # fmt: skip
        assert server.stats.requests == 0 and server.stats.refused <= 1
    finally:
        server.stop()
    assert_one_line_error(done, expected)
    assert seconds < 5
    assert not output.exists()


@pytest.mark.shared_data
def test_every_question_failing_is_an_error_without_results(
    predictions: Path, tmp_path: Path
) -> None:
    items = load_items(SPEC)[:30]
    concepts = {c.lower() for i in items for c in (i.combination, i.root, i.modifier)}
    faults = Faults(bad_body_pairs=frozenset(concepts), bad_body_kind="not_json")
    with LoopbackServer(faults=faults) as server:
        done, _ = run_cli(
            "score", SPEC.name, "--predictions", str(predictions), "--output",
            str(tmp_path / "r.json"), "--judge-base-url", server.base_url,
            "--judge-max-retries", "0", "--judge-cache", "off",
        )  # fmt: skip
        assert server.stats.checks == 1 and server.stats.requests > 0
    assert_one_line_error(done, "every one of the", "judge questions failed", "malformed response")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.shared_data
def test_some_questions_failing_is_a_warning_with_the_share(tmp_path: Path, capsys) -> None:
    items = load_items(SPEC)[:20]
    path = write_jsonl(tmp_path / "p.jsonl", items, [gold_reply("pi_emergent", i) for i in items])
    faults = Faults(bad_body_pairs=frozenset({items[0].root.lower()}), bad_body_kind="non_utf8")
    with LoopbackServer(faults=faults) as server:
        assert score(path, tmp_path / "r.json", "--judge-base-url", server.base_url,
                     "--judge-max-retries", "1") == 0  # fmt: skip
    err = messages(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith("conceptcomb: WARNING: ")
    assert "judge questions failed (" in err[0] and "%)" in err[0] and "last error" in err[0]
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["results"]["judge_failures"]["value"] >= 1
    assert "UnicodeDecodeError" in results["judge_usage"]["last_error"]


# --- calibrate: rows checked, output folder made, failures reported ---------------------
@pytest.fixture
def truncated_ccpt(tmp_path: Path, monkeypatch, ccpt_dir: Path) -> Path:
    folder = tmp_path / "ccpt"
    folder.mkdir()
    for name in ("ccpt_emergent.csv", "ccpt_canceled.csv"):
        shutil.copy(ccpt_dir / name, folder / name)
    emergent = folder / "ccpt_emergent.csv"
    text = emergent.read_text(encoding="utf-8")
    cut = text.index("\n", len(text) // 2) + 60  # inside the row after the middle
    emergent.write_text(text[:cut], encoding="utf-8")
    monkeypatch.setenv("CONCEPTCOMB_VERIFY_CHECKSUMS", "0")
    return folder


@pytest.mark.shared_data
def test_calibrate_names_the_line_of_a_cut_row(truncated_ccpt: Path, capsys) -> None:
    with LoopbackServer() as server:
        code = main(["judge", "calibrate", "--n", "9", "--data-dir", str(truncated_ccpt),
                     "--judge-base-url", server.base_url])  # fmt: skip
        assert server.stats.requests == 0 and server.stats.checks == 0
    assert code == 2
    err = messages(capsys.readouterr().err)
    lines = (truncated_ccpt / "ccpt_emergent.csv").read_text().count("\n") + 1
    assert err == [err[0]] and f"ccpt_emergent.csv:{lines}: empty " in err[0]


@pytest.mark.shared_data
def test_calibrate_writes_into_a_new_folder(tmp_path: Path, fresh_cache: Path) -> None:
    output = tmp_path / "missing" / "deeper" / "calibration.json"
    with LoopbackServer() as server:
        assert main(["judge", "calibrate", "--n", "9", "--judge-base-url", server.base_url,
                     "--output", str(output)]) == 0  # fmt: skip
    assert json.loads(output.read_text())["pairs"] == 9


def test_calibrate_refuses_an_unwritable_output_before_judging(tmp_path: Path, capsys) -> None:
    (tmp_path / "a-file").write_text("")
    with LoopbackServer() as server:
        code = main(["judge", "calibrate", "--n", "9", "--judge-base-url", server.base_url,
                     "--output", str(tmp_path / "a-file" / "c.json")])  # fmt: skip
        assert server.stats.requests == server.stats.checks == 0
    assert code == 2 and "--output" in capsys.readouterr().err


@pytest.mark.shared_data
def test_calibrate_with_every_question_failing_exits_non_zero(tmp_path: Path, capsys) -> None:
    from conceptcomb.ccpt.judge_tools.calibration import sample_pairs

    concepts = frozenset(pair.concept.lower() for pair in sample_pairs(9, 0))
    faults = Faults(bad_body_pairs=concepts, bad_body_kind="no_choices")
    with LoopbackServer(faults=faults) as server:
        code = main(["judge", "calibrate", "--n", "9", "--judge-base-url", server.base_url,
                     "--judge-max-retries", "0", "--judge-cache", "off",
                     "--output", str(tmp_path / "c.json")])  # fmt: skip
    assert code == 2 and not (tmp_path / "c.json").exists()
    err = messages(capsys.readouterr().err)
    assert len(err) == 1 and "every one of the 9 judge questions failed" in err[0]


@pytest.mark.shared_data
def test_seeds_writes_into_a_new_folder(tmp_path: Path) -> None:
    items = load_items(CcptTaskSpec("tp"))[:4]
    replies = [json.dumps({"property_type": item.label}) for item in items]
    run = tmp_path / "run.json"
    assert (
        main(
            [
                "score",
                "ccpt_tp",
                "--predictions",
                str(write_jsonl(tmp_path / "tp.jsonl", items, replies)),
                "--output",
                str(run),
            ]
        )
        == 0
    )
    output = tmp_path / "new" / "seeds.json"
    assert main(["seeds", str(run), "--output", str(output)]) == 0  # fmt: skip
    assert json.loads(output.read_text())["results"]["ccpt_tp"]["accuracy"]["mean"] == 100.0


# --- no traceback, whatever the input --------------------------------------------------
BAD_PREDICTIONS = {
    "not JSON": b'{"doc": {"combination": "x", "property": "y"}, "response": "z"}\nnot json\n',
    "no response": b'{"doc": {"combination": "x", "property": "y"}}\n',
    "empty": b"",
    "not UTF-8": b'{"doc": {"combination": "x\xff", "property": "y"}, "response": "z"}\n',
}


@pytest.mark.parametrize("case", sorted(BAD_PREDICTIONS))
def test_bad_predictions_are_one_line(case: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_bytes(BAD_PREDICTIONS[case])
    assert main(["score", SPEC.name, "--predictions", str(path), "--judge", "off"]) == 2
    err = messages(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith(f"conceptcomb: error: {path}")


@pytest.mark.shared_data
def test_url_credentials_are_one_line_and_never_shown(predictions: Path, tmp_path: Path) -> None:
    done, _ = run_cli("score", SPEC.name, "--predictions", str(predictions),
                      "--judge-base-url", "http://judge:s3cret-pw@127.0.0.1:9/v1")  # fmt: skip
    assert_one_line_error(done, "judge_api_key_env", "http://***@127.0.0.1:9/v1")
    assert "s3cret-pw" not in done.stderr + done.stdout

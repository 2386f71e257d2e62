"""`conceptcomb score`: saved replies scored again, with any judge, to the same numbers."""

from __future__ import annotations

import json
import math
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.scoring import score_replies
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.cli import main
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import Faults, LoopbackServer
from tests.ccpt.test_inspect import means, run_task
from tests.ccpt.test_scoring import gold_reply

pytestmark = pytest.mark.shared_data


SPEC = CcptTaskSpec("pi_emergent")


def score_cli(task: str, predictions: Path, output: Path, *judge: str) -> dict:
    assert main(["score", task, "--predictions", str(predictions), "--output", str(output),
                 *judge]) == 0  # fmt: skip
    return json.loads(output.read_text(encoding="utf-8"))["results"]


def write_jsonl(path: Path, items, replies) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item, reply in zip(items, replies, strict=True):
            doc = {
                "combination": item.combination,
                "root": item.root,
                "modifier": item.modifier,
                "property": item.property,
                "human_label_majority": item.label,
            }
            handle.write(json.dumps({"doc": doc, "response": reply}) + "\n")
    return path


def mixed_replies(items) -> list[str]:
    """Gold answers, with a few replies in other shapes and two unusable ones."""
    replies = [gold_reply("pi_emergent", item) for item in items]
    replies[1] = f'The answer is "{items[1].property}"'
    replies[2] = "I cannot answer."
    replies[3] = ""
    return replies


@pytest.mark.slow
def test_lm_eval_samples_rescore_to_lm_evals_numbers(pi_emergent_run, tmp_path: Path) -> None:
    """lm-eval's samples, rescored with a fresh judge cache, give lm-eval's numbers. The
    first user in a worker of the session's `pi_emergent_run` (tests/ccpt/conftest.py: an
    lm_eval run of SmolLM2) pays that run: 20 s of setup here (113 s before the run indexed
    our tasks only and its threads waited passively; both on 2 cores at load 5-7,
    2026-12-06)."""
    run = pi_emergent_run
    judge = ["--judge-base-url", run.server.base_url, "--judge-model", "gpt-4o",
             "--judge-cache", str(tmp_path / "fresh.sqlite")]  # fmt: skip
    before = run.server.stats.requests
    results = score_cli("ccpt_pi_emergent", run.samples_path, tmp_path / "r.json", *judge)
    assert run.server.stats.requests > before  # a fresh cache: the judge was asked again
    for key, value in run.metrics.items():
        metric, _, kind = key.partition(",")
        if kind != "judged":
            continue
        if metric.endswith("_stderr"):
            stderr = results[metric.removesuffix("_stderr")]["stderr"]
            assert value == "N/A" or math.isclose(stderr, value, abs_tol=1e-9), metric
        else:
            assert math.isclose(results[metric]["value"], value, abs_tol=1e-9), metric


def test_inspect_log_rescores_to_inspects_numbers(tmp_path: Path, fresh_cache: Path) -> None:
    items = load_items(SPEC)[:12]
    with LoopbackServer() as server:
        log = run_task(SPEC.name, mixed_replies(items), tmp_path, judge_base_url=server.base_url)
        inspect_values = means(log)
        results = score_cli(SPEC.name, Path(log.location), tmp_path / "r.json",
                            "--judge-base-url", server.base_url)  # fmt: skip
    for name, value in inspect_values.items():
        assert math.isclose(results[name]["value"], value, abs_tol=1e-9), name


def test_jsonl_of_csv_fields(tmp_path: Path, fresh_cache: Path, capsys) -> None:
    items = load_items(SPEC)[:12]
    replies = mixed_replies(items)
    path = write_jsonl(tmp_path / "preds.jsonl", items, replies)
    with LoopbackServer() as server:
        results = score_cli(SPEC.name, path, tmp_path / "r.json", "--judge-base-url",
                            server.base_url)  # fmt: skip
        settings = JudgeSettings.resolve({"judge_base_url": server.base_url})
        direct, _ = score_replies(SPEC, items, replies, settings)
    expected = aggregate(SPEC, [s.metrics for s in direct])
    assert {k: v["value"] for k, v in results.items()} == {k: v.value for k, v in expected.items()}
    assert results["format_failures"]["value"] == 2 and results["non_dict_answers"]["value"] == 1
    printed = capsys.readouterr().out
    assert "|ccpt_pi_emergent|" in printed.replace(" ", "") and "judge usage" in printed


def test_type_prediction_needs_no_judge(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    items = load_items(CcptTaskSpec("tp"))[245:255]  # emergent then component items
    replies = [json.dumps({"property_type": item.label}) for item in items]
    replies[0] = '{"property_type": "others"}'
    path = write_jsonl(tmp_path / "tp.jsonl", items, replies)
    results = score_cli("ccpt_tp", path, tmp_path / "r.json")
    assert results["accuracy"]["value"] == pytest.approx(90.0)
    assert results["cm_emergent_as_others"]["value"] == pytest.approx(20.0)


def test_faulty_judge_gives_the_clean_numbers(tmp_path: Path, fresh_cache: Path, capsys) -> None:
    items = load_items(SPEC)[:60]
    path = write_jsonl(tmp_path / "preds.jsonl", items, mixed_replies(items))
    with LoopbackServer() as clean:
        expected = score_cli(SPEC.name, path, tmp_path / "a.json", "--judge-base-url",
                             clean.base_url, "--judge-cache", "off")  # fmt: skip
    capsys.readouterr()
    faults = Faults(rate_limited=0.04, server_error=0.04, stalled=0.02, stall_seconds=3.0)
    with LoopbackServer(faults=faults) as faulty:
        judge = [
            "--judge-base-url",
            faulty.base_url,
            "--judge-cache",
            "off",
            "--judge-timeout",
            "1",
        ]
        results = score_cli(SPEC.name, path, tmp_path / "b.json", *judge)
        assert faulty.stats.faults >= 10
    assert results == expected
    printed = capsys.readouterr().out
    assert "0 failures" in printed and "transport retries" in printed


def test_garbage_judge_answers_are_counted_and_excluded(tmp_path: Path, fresh_cache: Path):
    items = load_items(SPEC)[:20]
    path = write_jsonl(
        tmp_path / "preds.jsonl", items, [gold_reply("pi_emergent", i) for i in items]
    )
    garbage = frozenset({items[0].root.lower(), items[5].modifier.lower()})
    with LoopbackServer(faults=Faults(garbage_pairs=garbage)) as server:
        results = score_cli(SPEC.name, path, tmp_path / "r.json", "--judge-base-url",
                            server.base_url, "--judge-format-retries", "1")  # fmt: skip
    failed = results["judge_failures"]["value"]
    assert failed >= 2
    assert results["E"]["n"] == len(items) - failed
    usage = json.loads((tmp_path / "r.json").read_text())["judge_usage"]
    assert usage["failures"] >= 2


def test_wrong_task_for_the_file_is_refused(pi_emergent_samples_like: Path, capsys) -> None:
    assert main(["score", "ccpt_pi_canceled", "--predictions", str(pi_emergent_samples_like),
                 "--judge", "off"]) == 2  # fmt: skip
    assert "holds replies of ccpt_pi_emergent" in capsys.readouterr().err


@pytest.fixture
def pi_emergent_samples_like(tmp_path: Path) -> Path:
    item = load_items(SPEC)[0]
    line = {"doc_id": 0, "doc": {**item.as_doc(), "task": SPEC.name}, "resps": [["{}"]]}
    path = tmp_path / "samples_ccpt_pi_emergent_2026-11-22T05-43-53.123456.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path


def test_unreadable_predictions_name_the_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"doc": {"combination": "x"}, "response": "y"}\nnot json\n')
    assert main(["score", SPEC.name, "--predictions", str(path), "--judge", "off"]) == 2
    assert "bad.jsonl:2: not a JSON line" in capsys.readouterr().err


def test_a_killed_run_resumes_without_asking_again(tmp_path: Path) -> None:
    items = load_items(SPEC)[:15]
    path = write_jsonl(
        tmp_path / "preds.jsonl", items, [gold_reply("pi_emergent", i) for i in items]
    )
    cache = tmp_path / "judge.sqlite"
    with LoopbackServer(latency=0.2) as server:
        command = [sys.executable, "-m", "conceptcomb.cli", "score", SPEC.name, "--predictions",
                   str(path), "--judge-base-url", server.base_url, "--judge-cache", str(cache),
                   "--judge-concurrency", "2"]  # fmt: skip
        first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while server.stats.answered < 10 and time.time() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        cached = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
        distinct = len({(i.combination, i.root, i.modifier) for i in items}) * 3
        assert 0 < cached < distinct
        asked_before = server.stats.requests
        assert subprocess.run(command, capture_output=True).returncode == 0
        assert server.stats.requests - asked_before == distinct - cached


def test_a_killed_run_loses_at_most_what_was_in_flight(tmp_path: Path) -> None:
    """Ratings share commits under load, but a request keeps its slot until its rating is on
    disk: every answer the judge gave beyond the requests in flight was committed."""
    items = load_items(SPEC)[:100]
    path = write_jsonl(
        tmp_path / "preds.jsonl", items, [gold_reply("pi_emergent", i) for i in items]
    )
    cache, in_flight = tmp_path / "judge.sqlite", 4
    distinct = len({(i.combination, i.root, i.modifier) for i in items}) * 3
    with LoopbackServer(latency=0.05) as server:
        command = [sys.executable, "-m", "conceptcomb.cli", "score", SPEC.name, "--predictions",
                   str(path), "--judge-base-url", server.base_url, "--judge-cache", str(cache),
                   "--judge-concurrency", str(in_flight)]  # fmt: skip
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while server.stats.answered < 30 and time.time() < deadline:
            time.sleep(0.01)
        run.send_signal(signal.SIGKILL)
        run.wait()
        time.sleep(0.2)  # requests in flight at the kill are answered into closed sockets
        answered = server.stats.answered
    cached = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
    assert 30 <= answered < distinct  # killed mid-way
    assert answered - in_flight <= cached <= answered


def test_calibration_with_the_papers_judge_matches_its_recorded_ratings(
    ccpt_dir: Path, tmp_path: Path, fresh_cache: Path, capsys
) -> None:
    """A judge answering GPT-4o's recorded ratings must correlate exactly like them."""
    from conceptcomb.ccpt.judge_tools.calibration import sample_pairs

    pairs = sample_pairs(120, seed=3)
    ratings = {(p.concept.lower(), p.prop.lower()): round(p.recorded_gpt4o) for p in pairs}
    with LoopbackServer(ratings=ratings) as server:
        assert main(["judge", "calibrate", "--n", "120", "--seed", "3", "--judge-base-url",
                     server.base_url, "--output", str(tmp_path / "c.json")]) == 0  # fmt: skip
    report = json.loads((tmp_path / "c.json").read_text())
    rows = {row["group"]: row for row in report["correlations"]}
    assert rows["all"]["n"] == 120 and rows["noun_phrase"]["n"] == 40
    assert rows["emergent items"]["n"] == rows["canceled items"]["n"] == 60
    for row in rows.values():
        assert row["pearson"] == pytest.approx(row["reference_pearson"])
        assert row["spearman"] == pytest.approx(row["reference_spearman"])
    assert rows["all"]["pearson"] > 0.6
    assert "| all | 120 |" in capsys.readouterr().out


@pytest.mark.slow
def test_calibration_with_the_local_judge(capsys) -> None:
    assert main(["judge", "calibrate", "--judge", "local", "--n", "12"]) == 0
    out = capsys.readouterr().out
    assert "judge: local-expected-rating|" in out
    row = next(line for line in out.splitlines() if line.startswith("| all | 12 |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert all(cell == "n/a" or -1.0 <= float(cell) <= 1.0 for cell in cells[2:])


def test_throughput_curve_compares_the_judge_loop_with_asyncios_and_bare_aiohttp() -> None:
    """``--curve-asyncio`` and ``--curve-bare``: each point again on asyncio's own event loop
    and as a bare aiohttp loop, their ratios and CPU as figures `against.py` reads; the judge's
    own loop is uvloop's (installed with the package)."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "judge_throughput.py"
    options = ["--curve-only", "--curve-latencies", "0.01", "--curve-in-flight", "8",
               "--point-seconds", "1", "--curve-asyncio", "--curve-bare"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(script), *options], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the judge's event loop: uvloop.Loop" in done.stdout
    figures = dict(re.findall(r"^figure: (.+?) = (\S+) ", done.stdout, re.M))
    point = "curve 10 ms, 8 in flight"
    for name in ("", ", asyncio's loop", ", bare aiohttp"):
        assert 0.0 < float(figures[point + name]) <= 1.05, name
    for name in (", client CPU", ", asyncio's loop, client CPU", ", bare aiohttp, client CPU"):
        assert float(figures[point + name]) > 0, name
    judge_over_asyncio = float(figures[point]) / float(figures[point + ", asyncio's loop"])
    assert float(figures[point + ", judge's loop / asyncio's"]) == pytest.approx(
        judge_over_asyncio, rel=1e-3
    )


def test_throughput_benchmark_runs(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "judge_throughput.py"
    done = subprocess.run([sys.executable, str(script), "--items", "150", "--latency", "0.01",
                           "--curve-latencies", "0.01"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "faulty metrics equal clean metrics: True" in done.stdout
    assert re.search(r"ratio \d+\.\d\d", done.stdout)
    # Each curve point against what a client costing nothing would take: at most 1, as the
    # server never answers early (a little over 1 only where requests go out in another order).
    points = re.search(r"curve 10 ms: 1:(\S+) 8:(\S+) 32:(\S+) 128:(\S+) 256:(\S+) \|", done.stdout)
    assert points and all(0.0 < float(ratio) <= 1.05 for ratio in points.groups())
    trials = r"\(median of 3: \d\.\d{3}, \d\.\d{3}, \d\.\d{3}\)"
    assert re.search(r"clean run, latency \+-10% " + trials, done.stdout)
    assert re.search(r"clean run, lockstep: one latency for all " + trials, done.stdout)
    held = re.findall(r"the server held each answer (\d+\.\d\d) ms on average", done.stdout)
    spread, lockstep = (float(ms) for ms in held)
    assert 9.0 < spread < 13.0  # 10 ms +-10%: the mean stays near it (plus timer steps)
    assert lockstep >= 10.0  # the loopback judge never answers early
    assert ", 0 failures," in done.stdout
    # The collector's part: per curve point, and the rating loop quiet against Python's own.
    assert re.search(r"us/request, collector \d+ ms, longest \d+ ms\)", done.stdout)
    quiet = r"collector at 256: quiet (\S+)/(\S+), as Python's (\S+)/(\S+) \|"
    both = re.search(quiet, done.stdout)
    assert both and all(0.0 < float(ratio) <= 1.05 for ratio in both.groups())

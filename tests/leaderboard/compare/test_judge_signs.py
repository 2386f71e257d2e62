"""``conceptcomb compare`` of two models' replies each scored by two judges: per pair of
models, task and judge-dependent metric, one line saying whether the sign of A - B holds
under every judge, with each judge's difference (issue 45, item 5).

Model "own" replies with the CCPT items' own answers, model "shifted" with each next item's
property; judge one replays GPT-4o's recorded ratings (a hash of the question where none is
recorded), judge two is the loopback server's hash judge under another model name."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import TASK, gold_predictions, loopback

pytestmark = pytest.mark.shared_data
ITEMS = 40


def _score(out: Path, replies: Path, model: str, server: LoopbackServer, judge: str) -> Path:
    results = out / f"{model}-{judge}.json"
    code, printed = run_cli(
        "score", TASK, "--predictions", str(replies), *loopback(server, judge),
        "--model-name", model, "--output", str(results),
        "--samples-output", str(out / f"{model}-{judge}.samples.jsonl"),
    )  # fmt: skip
    assert code == 0, printed
    return results


def test_the_sign_of_a_difference_under_every_judge(tmp_path: Path) -> None:
    own, items = gold_predictions(tmp_path, ITEMS)
    lines = [json.loads(line) for line in own.read_text().splitlines()]
    shifted = tmp_path / "shifted.jsonl"
    replies = [line["response"] for line in lines]
    moved = [{**line, "response": replies[(n + 1) % ITEMS]} for n, line in enumerate(lines)]
    shifted.write_text("".join(json.dumps(line) + "\n" for line in moved))
    runs = []
    with LoopbackServer(ratings=recorded_ratings(items)) as gpt4o, LoopbackServer() as other:
        for server, judge in ((gpt4o, "gpt-4o"), (other, "other-judge")):
            runs += [_score(tmp_path, path, model, server, judge)
                     for model, path in (("own", own), ("shifted", shifted))]  # fmt: skip
    code, printed = run_cli("compare", *map(str, runs))
    assert code == 0, printed
    code, text = run_cli("compare", *map(str, runs), "--json")
    data = json.loads(text)
    signs = {(s["task"], s["metric"]): s for s in data["judge_signs"]}
    assert {metric for _, metric in signs} == {"E", "R_HMP", "R_NP"}
    letters = {run["run"]: run["label"].split(" (")[0] for run in data["runs"]}
    for row in data["comparisons"]:
        if row["metric"] not in ("E", "R_HMP", "R_NP"):
            continue
        entry = signs[(row["task"], row["metric"])]
        assert (entry["model_a"], entry["model_b"]) == ("own", "shifted")
        a, b = letters[row["run_a"]], letters[row["run_b"]]
        value = row["difference"] if (a, b) == ("own", "shifted") else -row["difference"]
        assert any(value == pytest.approx(v) for v in entry["differences_by_judge"].values()
                   for v in v)  # fmt: skip
    for entry in signs.values():
        values = [v for judge in entry["differences_by_judge"].values() for v in judge]
        assert set(entry["differences_by_judge"]) == {"gpt-4o", "other-judge"}
        assert entry["sign_holds"] == (all(v > 0 for v in values) or all(v < 0 for v in values))
        verdict = "holds under" if entry["sign_holds"] else "does NOT hold under"
        assert f"{entry['task']} {entry['metric']}: the sign of own - shifted {verdict}" in printed


def test_the_rescore_command_compare_prints_runs(tmp_path: Path) -> None:
    """compare's line for two runs of different judges names the command that re-scores one
    with the other's judge: run as printed (the judge's address for URL, the outputs in a
    folder of the test), it re-scores, and the result pairs with the other run."""
    own, items = gold_predictions(tmp_path, 12)
    ratings = recorded_ratings(items)
    with LoopbackServer(ratings=ratings) as gpt4o, LoopbackServer() as other:
        a = _score(tmp_path, own, "own", gpt4o, "gpt-4o")
        b = _score(tmp_path, own, "own", other, "other-judge")
    _, printed = run_cli("compare", str(a), str(b))
    (line,) = [line for line in printed.splitlines() if "re-score B with A's judge: " in line]
    command = shlex.split(line.split("re-score B with A's judge: ", 1)[1].split(";")[0])
    assert command[:2] == ["conceptcomb", "score"] and "URL" in command
    out = {"rescored.json": str(tmp_path / "r.json")}
    out["rescored.samples.jsonl"] = str(tmp_path / "r.samples.jsonl")
    with LoopbackServer(ratings=ratings) as gpt4o_again:
        args = [gpt4o_again.base_url if word == "URL" else out.get(word, word) for word in command]
        code, printed = run_cli(*args[1:])
    assert code == 0, printed
    code, printed = run_cli("compare", str(a), str(tmp_path / "r.json"), "--json")
    rows = [row for row in json.loads(printed)["comparisons"] if row["metric"] == "E"]
    assert len(rows) == 1 and rows[0]["difference"] == 0  # the same replies, the same judge

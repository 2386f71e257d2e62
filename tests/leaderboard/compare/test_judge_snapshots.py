"""The judge's snapshot is part of its record (issue 45): the model an API's answers name
(``gpt-4o-2024-08-06`` for ``gpt-4o``) is kept with each rating in the cache and in each
item's record, and a bundle's judge record carries it; two snapshots of one model name are
two judges, a run whose answers named none pairs with either.

Real runs: the CCPT authors' recorded ratings on the dataset's own answers
(``ccpt_pi_emergent``, 200 items), scored by ``conceptcomb score`` against loopback judge
servers that answer ``gpt-4o`` under a dated name, as OpenAI's API does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.ccpt.tasks import default_specs
from conceptcomb.scorers.judge_cache import JudgeCache
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
AUGUST, NOVEMBER = "gpt-4o-2024-08-06", "gpt-4o-2024-11-20"


def _score(out: Path, server: LoopbackServer, cache: Path) -> Path:
    """The recorded answers of ``out`` scored by ``gpt-4o`` at ``server``; the bundle."""
    results = score_predictions(
        out, TASK, out / "replies.jsonl", out.name,
        "--judge-base-url", server.base_url, "--judge-model", "gpt-4o",
        "--judge-cache", str(cache),
    )  # fmt: skip
    return submit_bundle([results], out)


def _folder(root: Path, name: str) -> Path:
    out = root / name
    out.mkdir()
    spec = next(spec for spec in default_specs() if spec.name == TASK)
    write_gold_predictions(spec, out / "replies.jsonl")
    return out


def _judge(bundle: Path) -> dict:
    data = json.loads(bundle.read_text(encoding="utf-8"))
    (task,) = [task for task in data["tasks"] if task["task"] == TASK]
    return task["judge"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | int]:
    root = tmp_path_factory.mktemp("snapshots")
    august, cached, november, plain = (
        _folder(root, name) for name in ("august", "cached", "november", "plain")
    )
    spec = next(spec for spec in default_specs() if spec.name == TASK)
    ratings = recorded_ratings(write_gold_predictions(spec, root / "all.jsonl"))
    found: dict[str, Path | int] = {}
    with LoopbackServer(ratings=ratings, snapshots={"gpt-4o": AUGUST}) as server:
        found["august"] = _score(august, server, root / "shared.sqlite")
        # The API moves gpt-4o to a newer snapshot: every rating of the second run comes
        # from the cache, asked of the August one.
        server.snapshots = {"gpt-4o": NOVEMBER}
        before = server.stats.requests
        found["cached"] = _score(cached, server, root / "shared.sqlite")
        found["cached_requests"] = server.stats.requests - before
        found["november"] = _score(november, server, root / "november.sqlite")
    with LoopbackServer(ratings=ratings) as server:  # answers name the model asked
        found["plain"] = _score(plain, server, root / "plain.sqlite")
    found["cache"] = root / "shared.sqlite"
    return found


def test_the_bundle_names_the_snapshot_its_answers_named(runs: dict) -> None:
    judge = _judge(runs["august"])
    assert judge["model"] == "gpt-4o" and judge["snapshot"] == AUGUST
    assert f"gpt-4o ({AUGUST})" in judge["description"]
    samples = runs["august"].parent.parent / f"{TASK}.samples.jsonl"
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    judged = [r for r in records if r.get("judge")]
    assert judged and all(r["judge_snapshot"] == AUGUST for r in judged)
    assert _judge(runs["plain"])["snapshot"] is None  # the server named the model asked
    plain = runs["plain"].parent.parent / f"{TASK}.samples.jsonl"
    assert not any("judge_snapshot" in json.loads(line) for line in plain.read_text().splitlines())


def test_a_rating_from_the_cache_keeps_the_snapshot_that_gave_it(runs: dict) -> None:
    assert runs["cached_requests"] == 0
    assert _judge(runs["cached"])["snapshot"] == AUGUST
    assert _judge(runs["november"])["snapshot"] == NOVEMBER
    cache = JudgeCache(runs["cache"])
    try:
        assert len(cache) > 0
        (identity,) = {row[0] for row in cache._conn.execute("SELECT judge FROM ratings")}
        prompts = [row[0] for row in cache._conn.execute("SELECT prompt FROM ratings")]
        assert set(cache.snapshots(identity, prompts).values()) == {AUGUST}
    finally:
        cache.close()


def test_two_snapshots_are_two_judges_and_an_unnamed_one_pairs(runs: dict) -> None:
    code, printed = run_cli("compare", str(runs["august"]), str(runs["november"]))
    assert code == 1, printed  # nothing else to compare on this task
    (line,) = [line for line in printed.splitlines() if "scored by different judges" in line]
    assert AUGUST in line and NOVEMBER in line
    code, printed = run_cli("compare", str(runs["august"]), str(runs["cached"]), "--json")
    assert code == 0, printed
    code, printed = run_cli("compare", str(runs["august"]), str(runs["plain"]), "--json")
    assert code == 0, printed
    rows = json.loads(printed[printed.find("{") :])["comparisons"]
    assert {row["metric"] for row in rows} == {"E", "R_HMP", "R_NP"}
    assert {row["label"] for row in rows} == {""}


def test_an_old_cache_gains_the_table_and_reads_as_before(tmp_path: Path) -> None:
    """A cache of before snapshots (one table) opens, answers, and takes snapshots."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE ratings (key TEXT PRIMARY KEY, judge TEXT NOT NULL, prompt TEXT NOT "
        "NULL, rating REAL NOT NULL, reply TEXT NOT NULL, created REAL NOT NULL)"
    )
    old.commit()
    old.close()
    cache = JudgeCache(path)
    try:
        cache.put("judge", "old prompt", 4.0, "4")
        cache.put("judge", "new prompt", 7.0, "7", AUGUST)
        assert cache.get("judge", "old prompt") == (4.0, "4")
        assert cache.snapshots("judge", ["old prompt", "new prompt"]) == {"new prompt": AUGUST}
        cache.put("judge", "new prompt", 6.0, "6")  # asked again, of an API naming none
        assert cache.snapshots("judge", ["new prompt"]) == {}
    finally:
        cache.close()


def test_the_cggc_verifier_names_its_snapshot_too(tmp_path: Path) -> None:
    """``cggc_ood_verified``'s references verified by ``gpt-4o`` answering as August's: each
    item's verification and the bundle's yes/no verifier record name the snapshot."""
    task = "cggc_ood_verified"
    write_reference_predictions(task, tmp_path / "replies.jsonl", limit=10)
    with LoopbackServer(snapshots={"gpt-4o": AUGUST}) as server:
        results = score_predictions(
            tmp_path, task, tmp_path / "replies.jsonl", "cggc-august",
            "--judge-base-url", server.base_url, "--judge-model", "gpt-4o", "--judge-cache", "off",
        )  # fmt: skip
    samples = tmp_path / f"{task}.samples.jsonl"
    verifications = [json.loads(line)["verification"] for line in samples.read_text().splitlines()]
    assert verifications and all(v["snapshot"] == AUGUST for v in verifications if v["edges"])
    (entry,) = json.loads(submit_bundle([results], tmp_path).read_text())["tasks"]
    assert entry["judge"]["question"] == "yes-no" and entry["judge"]["snapshot"] == AUGUST


def test_rejudging_says_when_the_api_answers_as_another_snapshot(runs: dict) -> None:
    """The August bundle re-checked against gpt-4o now answering as November's: the same
    ratings (the loopback judge replays them), so it agrees, and the line says which
    snapshot answered and which rated the bundle."""
    spec = next(spec for spec in default_specs() if spec.name == TASK)
    folder = runs["august"].parent.parent
    ratings = recorded_ratings(write_gold_predictions(spec, folder / "again.jsonl"))
    with LoopbackServer(ratings=ratings, snapshots={"gpt-4o": NOVEMBER}) as server:
        code, printed = run_cli(
            "validate-bundle", str(runs["august"]), "--rejudge", "6",
            "--judge-base-url", server.base_url, "--judge-model", "gpt-4o", "--judge-cache", "off",
        )  # fmt: skip
    assert code == 0, printed
    (line,) = [line for line in printed.splitlines() if "asked again" in line]
    assert "agrees with the stored ratings" in line
    assert f"the API now answers as {NOVEMBER}, the bundle's ratings came from {AUGUST}" in line

"""``conceptcomb score`` re-scores the replies a run stores with another judge, from a
bundle, an ``export --to eee`` folder, lm-eval samples and an Inspect log; the results make
a bundle that validates, and a second re-score with the same judge sends no request
(issue 45, item 3: a maintainer pins one judge and re-scores every submission with it).

The replies are the CCPT items' own answers (ccpt_pi_emergent); the submission's judge
replays the GPT-4o ratings the CCPT files record, the maintainer's is another loopback
judge, counting the requests it is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.common.evidence import decode
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.ccpt.test_inspect import run_task
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import (
    TASK,
    bundle_of,
    gold_predictions,
    loopback,
    ratings_of,
    score,
)

pytestmark = pytest.mark.shared_data
ITEMS = 12


@pytest.fixture(scope="module")
def submission(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The submission's bundle (judged by the recorded GPT-4o ratings) and its EEE export."""
    out = tmp_path_factory.mktemp("submission")
    predictions, items = gold_predictions(out, ITEMS)
    with LoopbackServer(ratings=recorded_ratings(items), strict=True) as gpt4o:
        results = score(out, "submitted", predictions, *loopback(gpt4o))
    bundle = bundle_of(results, out / "bundle")
    code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(out / "eee"),
                            "--model-id", "ccpt/gold")  # fmt: skip
    assert code == 0, printed
    return bundle, out / "eee"


def _rescore(
    source: Path, out: Path, server: LoopbackServer, cache: Path, *options: str
) -> tuple[Path, int]:
    """`score` of the stored replies with the maintainer's judge: (results, requests sent)."""
    before = server.stats.requests
    out.mkdir(parents=True, exist_ok=True)
    judge = loopback(server, "maintainers-judge", str(cache))
    code, printed = run_cli(
        "score", TASK, "--predictions", str(source), *judge,
        "--output", str(out / "r.json"), "--samples-output", str(out / "s.jsonl"), *options,
    )  # fmt: skip
    assert code == 0, printed
    return out / "r.json", server.stats.requests - before


def _judged_by(results: Path, server: LoopbackServer, out: Path) -> dict:
    """The bundle of the re-scored results: valid, every rating the maintainer's judge's."""
    bundle = bundle_of(results, out)
    code, printed = run_cli("validate-bundle", str(bundle))
    assert code == 0 and f"{TASK}: partial ({ITEMS} of the 200 test items)" in printed, printed
    (task,) = json.loads(bundle.read_text())["tasks"]
    ratings = [row for item in decode(task["evidence"], TASK) for row in item["judged"]]
    assert len(ratings) >= 3 * ITEMS - 3
    for concept, prop, rating, answer in ratings:  # the maintainer's judge's answers too
        assert rating == server.rating(concept, prop)
        assert answer == json.dumps({"relevance": int(rating)})
    return task


@pytest.mark.parametrize("source", ["bundle", "eee"])
def test_a_bundle_or_its_export_is_rescored_with_another_judge(
    submission: tuple[Path, Path], source: str, tmp_path: Path
) -> None:
    bundle, eee = submission
    given = bundle if source == "bundle" else eee
    with LoopbackServer() as maintainers:
        cache = tmp_path / "judge.sqlite"
        results, sent = _rescore(given, tmp_path / "first", maintainers, cache)
        assert sent > 2 * ITEMS  # the maintainer's judge rated every question
        _, again = _rescore(given, tmp_path / "second", maintainers, cache)
        assert again == 0  # what the cache holds for this judge costs nothing
        task = _judged_by(results, maintainers, tmp_path / "bundle")
    data = json.loads(results.read_text())
    assert data["model_name"] == "gold"  # the model the submission names
    assert data["predictions_format"] == "bundle"
    submitted = json.loads(bundle.read_text())["tasks"][0]["metrics"]
    assert task["metrics"]["E"] != submitted["E"]  # another judge, another E


def test_a_bundle_without_the_task_or_edited_is_named(
    submission: tuple[Path, Path], tmp_path: Path
) -> None:
    bundle, _ = submission
    code, printed = run_cli("score", "ccpt_pi_canceled", "--predictions", str(bundle),
                            "--judge", "off")  # fmt: skip
    assert code == 2 and printed.strip().count("\n") == 0
    assert f"{bundle}: holds no run of ccpt_pi_canceled." in printed
    edited = tmp_path / "edited.bundle.json"
    edited.write_text(bundle.read_text().replace('"gold"', '"better"', 1))
    code, printed = run_cli("score", TASK, "--predictions", str(edited), "--judge", "off")
    assert code == 2 and printed.strip().count("\n") == 0
    assert "edited after `conceptcomb submit-bundle` wrote it" in printed


def test_an_inspect_log_is_rescored_with_another_judge(tmp_path: Path) -> None:
    out = tmp_path / "run"
    predictions, items = gold_predictions(tmp_path, ITEMS)
    replies = [json.loads(line)["response"] for line in predictions.read_text().splitlines()]
    with LoopbackServer(ratings=recorded_ratings(items), strict=True) as gpt4o:
        log = run_task(TASK, replies, out, judge_base_url=gpt4o.base_url, judge_cache="off")
    log_path = Path(log.location)
    with LoopbackServer() as maintainers:
        cache = tmp_path / "judge.sqlite"
        named = ("--model-name", "gold")  # the log's model is Inspect's mockllm
        results, sent = _rescore(log_path, tmp_path / "first", maintainers, cache, *named)
        assert sent > 2 * ITEMS
        _, again = _rescore(log_path, tmp_path / "second", maintainers, cache, *named)
        assert again == 0
        _judged_by(results, maintainers, tmp_path / "bundle")
    stored = ratings_of(tmp_path / "first" / "s.jsonl")
    assert stored == {key: float(maintainers.rating(*key)) for key in stored}


@pytest.mark.slow
def test_lm_eval_samples_are_rescored_with_another_judge(pi_emergent_run, tmp_path: Path) -> None:
    """SmolLM2's replies to 4 items in a real lm-eval run (tests/ccpt/conftest.py)."""
    samples = pi_emergent_run.samples_path
    with LoopbackServer() as maintainers:
        cache = tmp_path / "judge.sqlite"
        results, sent = _rescore(samples, tmp_path / "first", maintainers, cache)
        assert sent > 0
        _, again = _rescore(samples, tmp_path / "second", maintainers, cache)
        assert again == 0
    code, printed = run_cli("submit-bundle", str(results), "--out", str(tmp_path / "b"))
    assert code == 0 and "(valid)" in printed and "partial (4 of the 200" in printed, printed

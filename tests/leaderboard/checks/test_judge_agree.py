"""``conceptcomb judge agree``: two scorings of the same replies by two judges, each figure
checked against scipy's and the krippendorff package's on the same arrays (issue 45, item 5).

The replies are the CCPT items' own answers (ccpt_pi_emergent, the first 40 items); judge A
replays the GPT-4o ratings the CCPT files record for them, judge B is the loopback server's
other judge (a rating from a hash of the question), both real HTTP servers on loopback."""

from __future__ import annotations

import json
import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats

from conceptcomb.leaderboard.statistics.stats import SEED, paired_difference
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import TASK, gold_predictions, loopback, ratings_of, score

pytestmark = pytest.mark.shared_data
ITEMS = 40
RESAMPLES = 200


@pytest.fixture(scope="module")
def scorings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("agree")
    predictions, items = gold_predictions(out, ITEMS)
    with LoopbackServer(ratings=recorded_ratings(items), strict=True) as gpt4o:
        a = score(out, "a", predictions, *loopback(gpt4o, "judge-a"))
    with LoopbackServer() as other:
        b = score(out, "b", predictions, *loopback(other, "judge-b"))
    return a, b


def _scores(samples: Path, metric: str) -> np.ndarray:
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    return np.array([row["metrics"].get(metric, math.nan) for row in rows], dtype=float)


def _bootstrap(statistic, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    result = stats.bootstrap(
        (a, b), statistic, paired=True, vectorized=False, n_resamples=RESAMPLES,
        method="percentile", random_state=np.random.default_rng(SEED),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_each_figure_is_the_librarys(scorings: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = scorings
    output = tmp_path / "agree.json"
    code, printed = run_cli(
        "judge", "agree", str(a), str(b), "--json", str(output), "--resamples", str(RESAMPLES)
    )
    assert code == 0, printed
    assert f"{TASK}: A judged by " in printed and "judge-a" in printed and "judge-b" in printed
    (task,) = json.loads(output.read_text())["tasks"]
    ra, rb = ratings_of(a.with_name("a.samples.jsonl")), ratings_of(b.with_name("b.samples.jsonl"))
    keys = [key for key in ra if key in rb]
    x, y = np.array([ra[k] for k in keys]), np.array([rb[k] for k in keys])
    q = task["questions"]
    assert q["n"] == len(keys) > 100  # three questions per item, a few shared
    assert len(set(x)) > 3 and len(set(y)) > 3  # both judges spread their ratings

    def rho(p, s):
        return stats.spearmanr(p, s).statistic

    def tau(p, s):
        return stats.kendalltau(p, s).statistic

    domain = np.unique(np.concatenate([x, y]))

    def alpha(p, s):
        return krippendorff.alpha(
            reliability_data=np.vstack([p, s]), value_domain=domain,
            level_of_measurement="ordinal",
        )  # fmt: skip

    for name, statistic in (("spearman", rho), ("kendall", tau),
                            ("krippendorff_alpha_ordinal", alpha)):  # fmt: skip
        assert q[name]["value"] == pytest.approx(statistic(x, y), abs=1e-12), name
        low, high = _bootstrap(statistic, x, y)
        assert (q[name]["lower"], q[name]["upper"]) == pytest.approx((low, high), abs=1e-12)
    # the alpha of the ratings alone (the domain the package infers) is the same
    both = np.vstack([x, y])
    inferred = krippendorff.alpha(reliability_data=both, level_of_measurement="ordinal")
    assert q["krippendorff_alpha_ordinal"]["value"] == pytest.approx(inferred, abs=1e-12)
    assert q["share_equal"] == pytest.approx(np.mean(x == y))
    assert q["share_within_one"] == pytest.approx(np.mean(np.abs(x - y) <= 1))
    mean = q["mean_difference_a_minus_b"]
    test = stats.ttest_rel(x, y)
    low, high = test.confidence_interval(0.95)
    assert mean["difference"] == pytest.approx(np.mean(x - y), abs=1e-12)
    assert (mean["a"], mean["b"]) == pytest.approx((np.mean(x), np.mean(y)))
    assert (mean["lower"], mean["upper"]) == pytest.approx((low, high), abs=1e-9)
    absolute = stats.ttest_1samp(np.abs(y - x), 0.0).confidence_interval(0.95)
    assert q["mean_abs_difference"]["value"] == pytest.approx(np.mean(np.abs(y - x)))
    assert (q["mean_abs_difference"]["lower"], q["mean_abs_difference"]["upper"]) == (
        pytest.approx((absolute.low, absolute.high), abs=1e-9)
    )
    # per metric: A - B on the paired items, as compare computes it
    e_a = _scores(a.with_name("a.samples.jsonl"), "E")
    e_b = _scores(b.with_name("b.samples.jsonl"), "E")
    e = task["metrics_a_minus_b"]["E"]
    assert task["items"] == ITEMS
    assert e["difference"] == pytest.approx(np.nanmean(e_a - e_b), abs=1e-9)
    units = [json.loads(line)["doc"]["combination"].strip().lower() for line in
             a.with_name("a.samples.jsonl").read_text().splitlines()]  # fmt: skip
    expected = paired_difference(e_a, e_b, units, "noun phrase")
    assert (e["lower"], e["upper"]) == pytest.approx((expected.lower, expected.upper), abs=1e-9)


def test_a_run_without_judged_evidence_is_named(scorings: tuple[Path, Path], tmp_path) -> None:
    a, _ = scorings
    plain = tmp_path / "r.json"
    data = json.loads(a.read_text())
    data.pop("samples_output", None)
    plain.write_text(json.dumps(data))
    code, printed = run_cli("judge", "agree", str(a), str(plain))
    assert code == 2
    assert printed.count("\n") == 1 and "no judged task with per-item evidence" in printed


def test_alpha_counts_the_scales_points() -> None:
    """Ratings read as expected values (the local judge's) are rounded to the scale's points
    for alpha alone; Spearman and Kendall take them as they are."""
    from conceptcomb.leaderboard.statistics.agreement import agreement

    rng = np.random.default_rng(0)
    x = rng.integers(1, 11, 60).astype(float)
    y = np.clip(x + rng.normal(0, 1.5, 60), 1, 10)
    found = agreement(x, y, n_resamples=50)
    rounded = np.vstack([x, np.rint(y)])
    expected = krippendorff.alpha(reliability_data=rounded, level_of_measurement="ordinal")
    assert found.alpha.value == pytest.approx(expected, abs=1e-12)
    assert found.spearman.value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert found.equal == pytest.approx(np.mean(x == y)) and found.n == 60


def test_a_figure_left_out_says_why(tmp_path: Path) -> None:
    """Two judges that rate every question alike (no variation) and a scoring of one item
    (too few questions to resample): each "–" and each missing interval says why (issue 54)."""
    predictions, items = gold_predictions(tmp_path, 4)
    constant = dict.fromkeys(recorded_ratings(items), 6)
    scorings = []
    for name in ("a", "b"):
        with LoopbackServer(ratings=constant, strict=True) as judge:
            scorings.append(score(tmp_path, name, predictions, *loopback(judge, f"judge-{name}")))
    code, printed = run_cli("judge", "agree", *map(str, scorings), "--resamples", "50")
    assert code == 0, printed
    undefined = "– (undefined: every rating is 6, no variation)"
    assert f"Spearman {undefined}, Kendall tau-b {undefined}" in printed
    assert f"Krippendorff's alpha (ordinal) {undefined}" in printed

    (tmp_path / "one").mkdir()
    one, _ = gold_predictions(tmp_path / "one", 1)
    with LoopbackServer() as other:
        few = [score(tmp_path / "one", n, one, *loopback(other, f"judge-{n}")) for n in "xy"]
    output = tmp_path / "few.json"
    code, printed = run_cli("judge", "agree", *map(str, few), "--json", str(output))
    assert code == 0, printed
    (task,) = json.loads(output.read_text())["tasks"]
    n = task["questions"]["n"]
    assert 0 < n <= 3  # one item's questions: too few to resample
    for name in ("spearman", "kendall", "krippendorff_alpha_ordinal"):
        figure = task["questions"][name]
        assert figure["lower"] is None and "questions" in figure["why"]
        assert f"(no interval: {figure['why']})" in printed or f"– ({figure['why']})" in printed

"""What making a bundle costs (issue 54: one 10-item CGGC run took 21.7 s where the docs
say seconds): most of it was importing scipy.stats (seconds on 2 cores) for a t quantile.
A bundle's intervals now take it from scipy.special: submit-bundle never imports
scipy.stats, and its t intervals are scipy.stats.ttest_1samp's to the last digits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from conceptcomb.leaderboard.statistics.stats import mean_interval
from conceptcomb.testing.judge_server import LoopbackServer
from tests.leaderboard.judge_support import gold_predictions, loopback, score

CHECK = """
import sys
from conceptcomb.cli import main
code = main(["submit-bundle", sys.argv[1], "--out", sys.argv[2]])
print("exit", code, "scipy.stats" in sys.modules)
"""


@pytest.mark.shared_data
def test_submit_bundle_does_not_import_scipy_stats(tmp_path: Path) -> None:
    predictions, _ = gold_predictions(tmp_path, 10)
    with LoopbackServer() as server:
        results = score(tmp_path, "run", predictions, *loopback(server))
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(results), str(tmp_path / "bundles")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "exit 0 False", done.stdout + done.stderr


@pytest.mark.parametrize("n", [2, 3, 10, 200])
def test_the_t_interval_is_ttest_1samps(n: int) -> None:
    values = np.random.default_rng(n).normal(size=n)
    found = mean_interval(values)
    expected = scipy_stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    assert found is not None
    assert (found.lower, found.upper) == pytest.approx((expected.low, expected.high), rel=1e-12)

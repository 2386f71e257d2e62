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


def test_the_results_file_names_name_the_tasks_before_they_are_read(tmp_path: Path) -> None:
    """submit-bundle starts METEOR's JVM (~12 s of CPU) before it reads the runs, when
    their file names name a CGGC task: lm-eval's samples files, Inspect's logs."""
    from conceptcomb.benchmarks import known_tasks
    from conceptcomb.leaderboard.cli import _named_tasks

    lm_eval = tmp_path / "lm_eval" / "model"
    lm_eval.mkdir(parents=True)
    for name in ("results_2026-12-06T02-55-15.123.json",
                 "samples_cggc_ood_easy2hard_2026-12-06T02-55-15.123.jsonl"):  # fmt: skip
        (lm_eval / name).write_text("{}")
    log = tmp_path / "2026-12-06T02-57-10-00-00_ccpt-pi-emergent_9FbXdEq3GkjPGjvwL9ELDu.eval"
    log.write_text("")
    named = _named_tasks([tmp_path / "lm_eval", log])
    assert {"cggc_ood_easy2hard", "ccpt_pi_emergent"} <= named
    assert {known_tasks()[task] for task in named} == {"cggc", "ccpt"}
    assert _named_tasks([tmp_path / "lm_eval" / "model" / "results_2026.json"]) == set()

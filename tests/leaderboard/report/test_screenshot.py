"""The report's HTML page in a real headless browser: the screenshot shows the table and a plot.

Needs Chromium (Debian: ``apt-get install chromium``; .ci/run installs it). Set
CONCEPTCOMB_BROWSER to another Chromium-family binary. Without a browser this test skips with
the reason, except under CI=true, where it fails: CI must run it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import missing
from tests.leaderboard.report.test_report import run_cli
from tests.leftovers import system_tempdir

pytestmark = pytest.mark.slow

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
OURS_ROW = (0xEA, 0xF3, 0xFF)  # background of our rows (render.CSS: tr.ours td)
PAPER_BAR = (0xB8, 0xB8, 0xB8)  # the papers' bars in the plots (plots.PAPER_COLOR)
DIFFERENCE_DOT = (0xC0, 0x39, 0x2B)  # a difference in the ranking's figure (ranking.DOT_COLOR)


def find_browser() -> str:
    named = os.environ.get("CONCEPTCOMB_BROWSER")
    found = [named] if named else [shutil.which(name) for name in BROWSERS]
    for path in found:
        if path and Path(path).is_file():
            return path
    if named:
        pytest.fail(f"CONCEPTCOMB_BROWSER={named} is not a file: name a Chromium binary.")
    missing(
        "no headless browser for the report screenshot test: install Chromium "
        "(Debian/Ubuntu: apt-get install -y chromium) or set CONCEPTCOMB_BROWSER to a "
        "Chromium or Chrome binary"
    )
    raise AssertionError("unreachable")


def screenshot(page: Path, png: Path, profile: Path, size: str = "1400,2600") -> None:
    command = [
        find_browser(), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
        f"--screenshot={png}", f"--window-size={size}", page.as_uri(),
    ]  # fmt: skip
    # Its temporary files in a folder of its own, removed after: its socket path there must
    # stay under 108 characters (a test's tmp_path is longer).
    with tempfile.TemporaryDirectory(prefix="cr-", dir=system_tempdir()) as own_tmp:
        env = {**os.environ, "TMPDIR": own_tmp}
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]


def colour_count(image: Image.Image, colour: tuple[int, int, int]) -> int:
    return sum(count for count, rgb in image.getcolors(1 << 24) if rgb == colour)


def test_screenshot_shows_the_table_and_a_plot(real_runs, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert run_cli("report", str(real_runs.lm_eval_dir), str(real_runs.inspect_dir), "--out",
                   str(out))[0] == 0  # fmt: skip
    png = tmp_path / "ccpt.png"
    screenshot(out / "ccpt.html", png, tmp_path / "profile")
    image = Image.open(png).convert("RGB")
    assert image.size == (1400, 2600)
    assert colour_count(image, OURS_ROW) > 2_000, "our rows of the table are not visible"
    assert colour_count(image, PAPER_BAR) > 5_000, "the emergence plot is not visible"
    keep = os.environ.get("CONCEPTCOMB_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(png, keep)
    # The whole page: the ranking with confidence below the tables, and its figure of the
    # pairwise differences (the lm-eval and the Inspect run of one model), at 1,400 px.
    whole = tmp_path / "ccpt-whole.png"
    screenshot(out / "ccpt.html", whole, tmp_path / "profile", "1400,7000")
    image = Image.open(whole).convert("RGB")
    assert colour_count(image, DIFFERENCE_DOT) > 40, "the differences figure is not visible"
    assert "ccpt_pi_emergent: ranked by E" in (out / "ccpt.html").read_text()

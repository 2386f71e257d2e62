"""benchmarks/demo_startup.py runs end to end (the figures are the script's to print, never
a test's to assert); the conversion part, which converts twice, is left to the script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "demo_startup.py"
ROW = r"before +\d+\.\d\d s +after +\d+\.\d\d s +ratio \d+\.\d\d"


def test_demo_startup_benchmark_runs() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--no-conversion", "--repeats", "1"],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    rows = [line for line in lines if not line.startswith("figure: ")]  # benchmarks/against.py's
    figures = [line.split(" = ")[0] for line in lines if line.startswith("figure: ")]
    assert figures == ["figure: gguf parse", "figure: task index"]
    assert [row.split()[:2] for row in rows] == [["gguf", "parse"], ["task", "index"]]
    assert all(re.search(ROW, row) for row in rows), rows
    assert "overrides existing task" not in done.stderr

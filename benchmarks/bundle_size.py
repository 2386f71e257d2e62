"""Size and offline validation time of a full CCPT group bundle (1,534 items), in one run.

Scores the four tasks of the ``ccpt`` group on all their test items with the CCPT authors'
recorded answers (each item's own answer, judged by a loopback server replaying GPT-4o's
ratings recorded in the dataset: `conceptcomb.testing.recorded`) through ``conceptcomb
score --samples-output``, writes one bundle with ``submit-bundle``, and prints:

* the bundle's size, against the 2 MB budget, as a ratio;
* the time ``validate-bundle`` takes on it without --rescore, in this process (after the
  imports) and as a fresh ``conceptcomb validate-bundle`` command, against 5 s, as ratios;
* each task's verification state.

    python benchmarks/bundle_size.py [--out DIR] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conceptcomb.report.validate import check_file
from conceptcomb.testing.recorded import build_group_bundle

SIZE_BUDGET = 2 * 1024 * 1024
BUDGET = 5.0  # seconds


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="keep the files here (default: a temp folder)")
    parser.add_argument("--data-dir", help="the CCPT files (default: CONCEPTCOMB_DATA_DIR)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        bundle = build_group_bundle(args.out or Path(temp), args.data_dir)
        size = bundle.stat().st_size
        started = time.perf_counter()
        check = check_file(bundle, args.data_dir)
        in_process = time.perf_counter() - started
        command = [sys.executable, "-m", "conceptcomb.cli", "validate-bundle", str(bundle)]
        if args.data_dir:
            command += ["--data-dir", args.data_dir]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        fresh = time.perf_counter() - started
    items = sum(len(task.items) for task in check.tasks)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"bundle: {items} items, {size / 1024:.0f} KB")
    print(f"size / 2 MB budget: ratio {size / SIZE_BUDGET:.3f}")
    print(f"valid: {check.valid}; command exit code {done.returncode}")
    for task in check.tasks:
        print(f"  {task.line()}")
    print(f"validate-bundle in process: {in_process:.2f} s; ratio to 5 s {in_process / BUDGET:.3f}")
    print(
        f"validate-bundle as a command (imports included): {fresh:.2f} s wall, "
        f"{cpu.ru_utime + cpu.ru_stime:.2f} s CPU; ratio of the wall time to 5 s "
        f"{fresh / BUDGET:.3f}"
    )


if __name__ == "__main__":
    main_benchmark()

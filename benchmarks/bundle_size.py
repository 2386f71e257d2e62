"""Size and offline validation time of full-test-set bundles, one section per benchmark.

* CCPT: the four tasks of the ``ccpt`` group on all 1,534 items, the authors' recorded
  answers judged by a loopback server replaying GPT-4o's recorded ratings
  (`conceptcomb.testing.recorded`), against 2 MB and 5 s;
* CGGC: ``cggc_ood`` on all its test items, each answered by its own reference sentence
  (`conceptcomb.testing.cggc_references`), against 12 MB and 2 minutes (METEOR's JVM
  included: every corpus metric is recomputed);
* AbsPyramid (zero-shot detection and generation, every relation) and McRae (both tasks),
  each reply the gold answer (`conceptcomb.testing.full_bundles`), against 1 MB and 10 s.
  AbsPyramid's test files come from the hub: ``--abspyramid-dir`` names a folder in the
  hub's layout (without it the section is skipped and says so).

Each bundle goes through ``conceptcomb score --samples-output`` and ``submit-bundle``; the
script prints its size and the time ``validate-bundle`` takes on it (in this process, and
as a fresh command) as ratios to the budgets, and each task's state.

    python benchmarks/bundle_size.py [--benchmark ccpt|cggc|abspyramid|mcrae|all] [--out DIR]
        [--data-dir DIR] [--abspyramid-dir DIR]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.leaderboard.checks.validate import check_file

MB = 1024 * 1024


@dataclass(frozen=True)
class Budget:
    size: int  # bytes
    seconds: float  # validate-bundle, offline


BUDGETS = {
    "ccpt": Budget(2 * MB, 5.0),
    # Each item carries the prompt it is sent, four demonstrations with their graphs
    # included, as an Inspect run's items do: ~8.8 MB for cggc_ood's 15,985 items.
    "cggc": Budget(12 * MB, 120.0),
    "abspyramid": Budget(1 * MB, 10.0),
    "mcrae": Budget(1 * MB, 10.0),
}


def ccpt_bundle(out: Path, data_dir: str | None) -> Path:
    from conceptcomb.testing.recorded import build_group_bundle

    return build_group_bundle(out, data_dir)


def cggc_bundle(out: Path, data_dir: str | None) -> Path:
    from conceptcomb.testing.cggc_references import cggc_bundle as build

    return build(out, None)  # the shipped dataset (data_dir names the CCPT/McRae files)


def builders() -> dict[str, Callable[[Path, str | None], Path]]:
    from conceptcomb.testing.full_bundles import abspyramid_bundle, mcrae_bundle

    return {
        "ccpt": ccpt_bundle,
        "cggc": cggc_bundle,
        "abspyramid": abspyramid_bundle,
        "mcrae": mcrae_bundle,
    }


def measure(name: str, bundle: Path, data_dir: str | None) -> None:
    """Print the bundle's size, validation times and task states against its budget."""
    budget = BUDGETS[name]
    size = bundle.stat().st_size
    started = time.perf_counter()
    check = check_file(bundle, data_dir)
    in_process = time.perf_counter() - started
    command = [sys.executable, "-m", "conceptcomb.cli", "validate-bundle", str(bundle)]
    if data_dir:
        command += ["--data-dir", data_dir]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    fresh = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    items = sum(len(task.items) for task in check.tasks)
    limit = f"{budget.seconds:g} s"
    print(f"== {name}: {items} items, {size / 1024:.0f} KB")
    print(f"size / {budget.size // MB} MB budget: ratio {size / budget.size:.3f}")
    print(f"valid: {check.valid}; command exit code {done.returncode}")
    for task in check.tasks:
        print(f"  {task.line()}")
    print(
        f"validate-bundle in process: {in_process:.2f} s; ratio to {limit} "
        f"{in_process / budget.seconds:.3f}"
    )
    print(
        f"validate-bundle as a command (imports included): {fresh:.2f} s wall, {cpu:.2f} s "
        f"CPU; ratio of the wall time to {limit} {fresh / budget.seconds:.3f}"
    )


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", choices=[*BUDGETS, "all"], default="all")
    parser.add_argument("--out", type=Path, help="keep the files here (default: a temp folder)")
    parser.add_argument("--data-dir", help="the CCPT/McRae files (default: CONCEPTCOMB_DATA_DIR)")
    parser.add_argument("--abspyramid-dir", help="AbsPyramid's test files, in the hub's layout")
    args = parser.parse_args()
    chosen = list(BUDGETS) if args.benchmark == "all" else [args.benchmark]
    for name in chosen:
        # CGGC: the dataset shipped with the package (--data-dir names CCPT's and McRae's).
        data_dir = {"abspyramid": args.abspyramid_dir, "cggc": None}.get(name, args.data_dir)
        if name == "abspyramid" and not data_dir:
            print("== abspyramid: skipped (its test files come from the hub: --abspyramid-dir)")
            continue
        with tempfile.TemporaryDirectory() as temp:
            out = (args.out or Path(temp)) / name
            started = time.perf_counter()
            bundle = builders()[name](out, data_dir)
            print(f"{name}: bundle built in {time.perf_counter() - started:.1f} s")
            measure(name, bundle, data_dir)


if __name__ == "__main__":
    main_benchmark()

"""Rebuild the full CGGC dataset and check it equals the one shipped in the package.

Runs `conceptcomb cggc build` (seed 0, CommonGen v1.1 train + valid, CN-100K: the shipped
dataset's options) into a temporary folder, by default with an empty embedding cache (a cold
build, as on a new machine), then compares the sha256 of the built pool and test files with
the shipped ``SHA256SUMS``; where they differ, it names the items whose records differ (SBERT's
and numpy's floating point vary across CPUs, and a near-tie between two shortest paths can
then flip one item's graph). Prints the build's stage times and one summary line, with the load
average at start and end (other jobs on the machine slow the build down).

    python benchmarks/cggc_rebuild_check.py [--data-dir DIR] [--warm] [--keep DIR]

``--data-dir`` names a folder holding ``cggc/commongen_v1.1`` and ``cggc/conceptnet100k``
(default: ``CONCEPTCOMB_DATA_DIR``, else they are downloaded at their pinned revisions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conceptcomb.cggc.data import MANIFEST, PACKAGED_DIR, POOL_FILE, TEST_FILE, manifest, read_bytes

BUDGET_S = 600  # issue 16: a cold full build in at most 10 minutes on 2 idle cores


def built_manifest(folder: Path) -> str:
    digests = {
        f"{stem}.jsonl": hashlib.sha256((folder / f"{stem}.jsonl").read_bytes()).hexdigest()
        for stem in (POOL_FILE, TEST_FILE)
    }
    return manifest(digests)


def differing_items(folder: Path) -> dict[str, list[str]]:
    """Per file, the item ids of the records (concept sets, in file order) that differ from
    the shipped file's: what a rebuild that is not byte-identical changed."""
    found: dict[str, list[str]] = {}
    for stem in (POOL_FILE, TEST_FILE):
        built = (folder / f"{stem}.jsonl").read_bytes().splitlines()
        shipped = read_bytes(PACKAGED_DIR / f"{stem}.jsonl.gz").splitlines()
        changed = [
            ref["item_id"]
            for ours, theirs in zip(built, shipped, strict=False)
            if ours != theirs
            for ref, other in zip(
                json.loads(ours)["refs"], json.loads(theirs)["refs"], strict=False
            )
            if ref != other
        ]
        if len(built) != len(shipped):
            changed.append(f"({len(built)} records built, {len(shipped)} shipped)")
        found[f"{stem}.jsonl"] = changed
    return found


def run_sampling_load(command: list[str], env: dict[str, str]) -> list[float]:
    """Run the build; the 1-minute load average before it and every 10 s while it runs."""
    loads, sampled = [os.getloadavg()[0]], time.perf_counter()
    with subprocess.Popen(command, env=env) as process:
        while process.poll() is None:
            time.sleep(0.5)
            if time.perf_counter() - sampled >= 10:
                loads.append(os.getloadavg()[0])
                sampled = time.perf_counter()
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    return [*loads, os.getloadavg()[0]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("CONCEPTCOMB_DATA_DIR"))
    parser.add_argument("--warm", action="store_true", help="keep the user's embedding cache")
    parser.add_argument("--keep", type=Path, help="build here and keep the files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cggc-rebuild-") as scratch:
        out = args.keep or Path(scratch) / "build"
        env = dict(os.environ)
        if not args.warm:
            env["CONCEPTCOMB_CACHE_DIR"] = str(Path(scratch) / "cache")
        # the console script of this interpreter's environment (its bin/ may not be on PATH)
        script = Path(sys.executable).with_name("conceptcomb")
        command = [str(script) if script.is_file() else "conceptcomb", "cggc", "build"]
        command += ["--out", str(out), "--seed", "0"]
        if args.data_dir:
            command += ["--data-dir", args.data_dir]
        print("running:", " ".join(command), flush=True)
        start = time.perf_counter()
        loads = run_sampling_load(command, env)
        seconds = time.perf_counter() - start
        built = built_manifest(out)
        timings = json.loads((out / "build_info.json").read_text())["timings_s"]
        shipped = (PACKAGED_DIR / MANIFEST).read_text()
        same = built == shipped
        changed = {} if same else differing_items(out)
    print(f"stage times (s): {timings}")
    if not same:
        print(f"built:\n{built}shipped:\n{shipped}", end="")
        for name, items in changed.items():
            print(f"{name}: {len(items)} items differ from the shipped file {items[:10]}")
    differ = ", ".join(f"{len(items)} in {name}" for name, items in changed.items())
    verdict = "yes" if same else f"NO (items differing: {differ})"
    kind = "warm" if args.warm else "cold"
    print(
        f"summary: {kind} build {seconds:.0f} s on {os.cpu_count()} cores "
        f"(1-min load average {loads[0]:.1f} at start, {sum(loads) / len(loads):.1f} mean "
        f"with the build's own, {loads[-1]:.1f} at end), "
        f"time/budget({BUDGET_S} s) = {seconds / BUDGET_S:.2f}; "
        f"byte-identical to the shipped dataset: {verdict}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

"""How long the leaderboard commands take on CGGC bundles, against the goals of issue 42.

Bundles of ``cggc_ood`` with ``--items`` test items each (20), every reply the item's own
reference sentence (`conceptcomb.testing.cggc_references`), each bundle a different slice
of the test set, made through ``conceptcomb score --samples-output`` and
``submit-bundle`` into a fresh cache folder (``CONCEPTCOMB_CACHE_DIR``: the verdicts this
script relies on or not are its own; the CGGC dataset is parsed into it once, as on a
machine that ran CGGC before). Then, each a fresh ``conceptcomb`` command, timed (wall and
the CPU of the command and its children, METEOR's JVM included), best of ``--repeats``:

* ``validate-bundle`` of one bundle, against 8 s;
* ``export --to eee``, ``export --to hf`` and ``report`` of that bundle, now validated (the
  verdict reused), against 2 s, and each with ``--recheck`` (the bundle checked again, as
  every command did before verdicts were remembered);
* ``validate-bundle`` of ``--bundles`` bundles (20) in one call, against that many times
  one (the fixed costs, METEOR's JVM, spaCy, ROUGE, the dataset, paid once).

With ``--before DIR`` (a checkout of earlier code), that code's ``validate-bundle`` and
``export`` are timed on the same bundle too. Prints each time, its ratio to the goal, and
the machine's load before and after (the figures are only comparable on an idle machine).
``--only-validate`` makes one bundle and times its ``validate-bundle`` alone (what
`benchmarks/against.py` compares between a commit and the working tree: each time is also
printed as a ``figure: NAME = VALUE s`` line, wall and CPU). ``--recheck-once`` times
``--recheck`` for ``export --to eee`` alone (each check again starts METEOR's JVM, and the
three commands check a bundle through the same code): a quicker run of the script.

    python benchmarks/leaderboard_commands.py [--items 20] [--bundles 20] [--repeats 3]
        [--before DIR] [--only-validate] [--recheck-once]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_VALIDATE = 8.0  # s, one 20-item CGGC bundle
GOAL_REUSED = 2.0  # s, export or report of a bundle validated before


def make_bundles(root: Path, items: int, count: int) -> list[Path]:
    from conceptcomb.testing.cggc_references import cggc_bundle

    return [
        cggc_bundle(root / f"b{number:02d}", limit=items, start=number * items)
        for number in range(count)
    ]


def timed(
    command: list[str], repeats: int, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """Best wall time of the command over ``repeats`` runs, its CPU then (with children),
    and what it printed last; exits when the command fails."""
    best: tuple[float, float, str] | None = None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            output = done.stdout[-2000:] + done.stderr[-2000:]
            sys.exit(f"{' '.join(command[2:5])} failed:\n{output}")
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        if best is None or wall < best[0]:
            best = (wall, cpu, done.stdout)
    assert best is not None
    return best


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def line(name: str, wall: float, cpu: float, goal: float | None = None) -> None:
    against = f"; ratio to {goal:g} s {wall / goal:.2f}" if goal else ""
    print(f"{name:<44} {wall:6.2f} s wall {cpu:6.2f} s CPU{against}", flush=True)
    print(f"figure: {name}, wall = {wall:.3f} s\nfigure: {name}, CPU = {cpu:.3f} s", flush=True)


def compare_before(
    checkout: Path, cli: list[str], bundle: str, root: Path, repeats: int, after: float
) -> None:
    """The code of ``checkout`` on the same bundle: validate-bundle, and export (which
    checked every bundle then)."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve() / "src")}
    found = subprocess.run([*cli[:1], "-c", "import conceptcomb; print(conceptcomb.__file__)"],
                           capture_output=True, text=True, env=env).stdout.strip()  # fmt: skip
    assert found.startswith(str(checkout.resolve())), found
    wall, cpu, _ = timed([*cli, "validate-bundle", bundle], repeats, env)
    line("validate-bundle, one bundle, before", wall, cpu, GOAL_VALIDATE)
    print(f"  after / before: {after / wall:.2f}")
    export = ["export", "--to", "eee", bundle, "--out", str(root / "eee-before"),
              "--model-id", "someone/model"]  # fmt: skip
    line("export --to eee, before", *timed([*cli, *export], repeats, env)[:2], GOAL_REUSED)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20, help="test items per bundle (20)")
    parser.add_argument("--bundles", type=int, default=20, help="bundles in one call (20)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command (3)")
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of the code before (e.g. `git worktree add /tmp/before 937e78b`): "
        "its validate-bundle and export are timed too, its src/ first on PYTHONPATH",
    )
    parser.add_argument(
        "--only-validate",
        action="store_true",
        help="one bundle, its validate-bundle alone (no exports, no report, no 20 bundles)",
    )
    parser.add_argument(
        "--recheck-once",
        action="store_true",
        help="--recheck timed for the first command (export --to eee) only",
    )
    args = parser.parse_args()
    if args.only_validate:
        args.bundles = 1
    java = shutil.which("java") or "none (METEOR not re-checked)"
    print(f"load before: {load()}; {os.cpu_count()} CPUs; java: {java}")
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        os.environ["CONCEPTCOMB_CACHE_DIR"] = str(root / "cache")
        started = time.perf_counter()
        bundles = make_bundles(root / "bundles", args.items, max(args.bundles, 1))
        made = time.perf_counter() - started
        print(f"{len(bundles)} bundles of {args.items} items made in {made:.0f} s")
        cli = [sys.executable, "-m", "conceptcomb.cli"]
        one = str(bundles[0])
        wall, cpu, printed = timed([*cli, "validate-bundle", one], args.repeats)
        line("validate-bundle, one bundle", wall, cpu, GOAL_VALIDATE)
        print("  " + printed.strip().splitlines()[-1].strip())
        one_wall, one_cpu = wall, cpu
        if args.before:
            compare_before(args.before, cli, one, root, args.repeats, one_wall)
        if args.only_validate:
            print(f"load after: {load()}")
            return
        exports = {
            "export --to eee": ["export", "--to", "eee", one, "--out", str(root / "eee"),
                                "--model-id", "someone/model"],
            "export --to hf": ["export", "--to", "hf", one, "--out", str(root / "hf"),
                               "--model-id", "someone/model", "--dataset-id", "cggc=someone/cggc"],
            "report": ["report", one, "--out", str(root / "report")],
        }  # fmt: skip
        for number, (name, command) in enumerate(exports.items()):
            reused = timed([*cli, *command], args.repeats)
            assert "--recheck checks it again" in reused[2], reused[2][-500:]
            line(f"{name}, validated bundle (verdict reused)", *reused[:2], GOAL_REUSED)
            if args.recheck_once and number > 0:
                continue
            again = timed([*cli, *command, "--recheck"], args.repeats)
            line(f"{name} --recheck (checked again)", *again[:2])
            print(f"  reused / checked again: {reused[0] / again[0]:.2f}")
        many = [str(path) for path in bundles]
        wall, cpu, printed = timed([*cli, "validate-bundle", *many], 1)
        assert printed.count(": valid") == len(many), printed[-2000:]
        line(f"validate-bundle, {len(many)} bundles in one call", wall, cpu)
        times = len(many)
        print(
            f"  ratio to {times} x one: wall {wall / (times * one_wall):.3f} ({times} x "
            f"{one_wall:.2f} s), CPU {cpu / (times * one_cpu):.3f} ({times} x {one_cpu:.2f} s); "
            f"each bundle after the first: {(cpu - one_cpu) / max(times - 1, 1):.2f} s of CPU"
        )
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()

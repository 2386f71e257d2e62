"""What building a CGGC task costs: the Inspect task and the lm-eval docs, each in a fresh
process, twice: as the first run on a machine (a cache of its own holding the parsed items of
the dataset alone) and as any run after it (the same cache, now also holding the task's
drawn pairs: `conceptcomb.cggc.docs.task_pairs`).

* ``inspect cggc_ood`` / ``inspect cggc_id`` / ``inspect cggc_ood_typeB``: the ``@task``
  function called as ``inspect eval conceptcomb/NAME`` calls it (every sample, with its
  demonstrations drawn, and the other setting's draws for the items both score);
* ``lm-eval cggc_ood``: the docs of lm-eval's ``custom_dataset`` hook
  (`conceptcomb.cggc.lm_eval_hooks.load_dataset`): the test docs and the few-shot split,
  which lm-eval then lists (``list(fewshot_docs())`` in ``ConfigurableTask.__init__``);
* ``lm-eval cggc_ood+cggc_id+cggc_ood_script+cggc_id_script``: the same for four tasks in
  one process, as ``lm_eval --tasks cggc`` builds its 17 tasks one after the other.

METEOR's JVM, which both start while the task is built, is not started here: it loads on a
core of its own in a real run, and here it would only add noise to the figures. Prints, for
each, the wall and CPU seconds and the peak memory of the process, best of ``--repeats``, as
``figure:`` lines (``NAME`` for a run after the first, ``NAME, first run`` for the first);
`benchmarks/against.py` runs it on a commit and on the working tree and prints the ratios:

    python benchmarks/cggc_build.py [--repeats 1] [--only NAME ...]
    python benchmarks/against.py 9a4b073 --rounds 2 -- cggc_build
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The child: build one target, print its costs as one JSON line.
CHILD = """
import json, resource, sys, time
from conceptcomb.cggc import metrics
metrics.start_meteor = lambda: None  # see the module's docstring
framework, name = sys.argv[1], sys.argv[2]
if framework == "inspect":
    from conceptcomb.cggc.inspect_tasks import TASKS
    build = TASKS[name]
else:  # each task's docs, then its few-shot split listed, as lm-eval lists it
    from conceptcomb.cggc import lm_eval_hooks
    build = lambda: [list(lm_eval_hooks.load_dataset(task)["demonstrations"])
                     for task in name.split("+")]
wall, cpu = time.perf_counter(), time.process_time()
build()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak}))
"""

TARGETS = [
    ("inspect", "cggc_ood"),
    ("inspect", "cggc_id"),
    ("inspect", "cggc_ood_typeB"),
    ("lm-eval", "cggc_ood"),
    ("lm-eval", "cggc_ood+cggc_id+cggc_ood_script+cggc_id_script"),
]


def measure(framework: str, name: str, cache: Path) -> dict[str, float]:
    """One build in a fresh interpreter with ``cache`` as conceptcomb's cache: its wall and
    CPU seconds, its peak memory (MiB)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, framework, name],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CONCEPTCOMB_CACHE_DIR": str(cache)},
    )
    if done.returncode != 0:
        raise SystemExit(f"{framework} {name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def items_only_cache(folder: Path) -> Path:
    """A cache holding the dataset's parsed items and nothing else."""
    cache = folder / "items-only"
    load = "from conceptcomb.cggc.data import load_dataset; load_dataset(None)"
    env = {**os.environ, "CONCEPTCOMB_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", load], check=True, env=env)
    return cache


def report(label: str, runs: list[dict[str, float]]) -> None:
    best = min(runs, key=lambda run: run["wall"])
    print(f"{label:<40} wall {best['wall']:6.2f} s  cpu {best['cpu']:6.2f} s  "
          f"peak {best['peak']:6.0f} MiB")  # fmt: skip
    print(f"figure: {label}, wall = {best['wall']:.3f} s")
    print(f"figure: {label}, cpu = {best['cpu']:.3f} s")
    print(f"figure: {label}, peak memory = {best['peak']:.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="builds of each, best kept (1)")
    parser.add_argument("--only", nargs="*", default=None, help="task names to build")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cggc-build-") as scratch:
        items = items_only_cache(Path(scratch))
        for framework, name in TARGETS:
            if args.only and name not in args.only:
                continue
            first, after = [], []
            for repeat in range(args.repeats):
                cache = Path(scratch) / f"{framework}-{name}-{repeat}"
                shutil.copytree(items, cache)
                first.append(measure(framework, name, cache))
                after.append(measure(framework, name, cache))
            report(f"{framework} {name}, first run", first)
            report(f"{framework} {name}", after)
    return 0


if __name__ == "__main__":
    sys.exit(main())

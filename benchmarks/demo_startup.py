"""What the demo's first run saves, each part measured before and after in one run.

* ``gguf parse``: the packaged SmolLM2 GGUF read by ``gguf.GGUFReader`` (its data an
  ``np.memmap``) and by the conversion's reader (a plain ndarray over the same mapping,
  `conceptcomb.smollm2._plain_array_reader`), best of ``--repeats``;
* ``conversion``: the whole one-time conversion to a transformers folder
  (`conceptcomb.smollm2.hf_folder`, into a temporary folder) with gguf's reader, then with
  ours; the two folders are compared byte for byte (``--no-conversion`` skips it);
* ``task index``: lm-eval's ``TaskManager`` with our include path (what ``lm_eval
  --include_path`` builds before every run: its ~14,000 built-in task files, then ours)
  against the index of our tasks only that ``conceptcomb demo`` runs lm-eval with
  (`conceptcomb.frameworks.lm_eval_our_tasks`), best of ``--repeats``.

Prints each time and the ratio after/before, and each "after" time as a ``figure: NAME =
VALUE s`` line (what `benchmarks/against.py` compares between a commit and the tree).

``--cold-only`` times the whole ``conceptcomb demo`` instead, as a newcomer's first run: in a
fresh empty HOME (the model converted, the data checked, lm-eval run, METEOR started), the
``conceptcomb`` on PATH, best of ``--repeats`` (wall and CPU of the command and its
children); `benchmarks/against.py` runs it with each side's environment first on PATH:

    python benchmarks/demo_startup.py [--repeats 2] [--no-conversion]
    python benchmarks/against.py 033d064 --rounds 3 -- demo_startup --cold-only --repeats 1
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def best_of(repeats: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def report(name: str, before: float, after: float) -> None:
    print(f"{name:<12} before {before:7.2f} s   after {after:7.2f} s   ratio {after / before:.2f}")
    # For benchmarks/against.py (a commit against the working tree): the code path of now.
    print(f"figure: {name} = {after:.4f} s")


def gguf_parse(repeats: int) -> None:
    import gguf

    from conceptcomb.scorers.local_judge import packaged_smollm2_gguf
    from conceptcomb.smollm2 import _plain_array_reader

    path = packaged_smollm2_gguf()
    plain = _plain_array_reader(gguf.GGUFReader)
    before = best_of(repeats, lambda: gguf.GGUFReader(path))
    after = best_of(repeats, lambda: plain(path))
    report("gguf parse", before, after)


def conversion() -> None:
    import transformers  # noqa: F401  imported before either conversion is timed

    from conceptcomb import smollm2

    with tempfile.TemporaryDirectory() as tmp:
        ours = smollm2._plain_array_reader
        smollm2._plain_array_reader = lambda reader: reader  # gguf's own reader
        try:
            start = time.perf_counter()
            old = smollm2.hf_folder(Path(tmp) / "before")
            before = time.perf_counter() - start
        finally:
            smollm2._plain_array_reader = ours
        start = time.perf_counter()
        new = smollm2.hf_folder(Path(tmp) / "after")
        after = time.perf_counter() - start
        names = sorted(p.name for p in old.iterdir())
        _, differ, missing = filecmp.cmpfiles(old, new, names, shallow=False)
        report("conversion", before, after)
        unequal = differ + missing
        print(f"{'':<12} the two folders: {unequal or 'identical'}")


def task_index(repeats: int) -> None:
    import logging

    import lm_eval.tasks

    # An editable install made by an older conceptcomb keeps a stale copy of our YAML in
    # lm-eval, and every index warns about each task it overrides: the same warnings both
    # ways, which only hide the result.
    logging.getLogger("lm_eval").setLevel(logging.ERROR)

    from conceptcomb.common.lm_eval_paths import tasks_path
    from conceptcomb.frameworks.lm_eval_our_tasks import our_task_manager

    manager = lm_eval.tasks.TaskManager
    ours = our_task_manager(manager)
    before = best_of(repeats, lambda: manager(include_path=str(tasks_path())))
    after = best_of(repeats, lambda: ours(include_path=str(tasks_path())))
    report("task index", before, after)


def cold_demo(repeats: int) -> None:
    """``conceptcomb demo`` in a fresh empty HOME, best wall of ``repeats``, with its CPU."""
    program = shutil.which("conceptcomb")
    if program is None:
        sys.exit("no `conceptcomb` on PATH: install the package first (README)")
    best: tuple[float, float] | None = None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "HOME": home}
            env.pop("CONCEPTCOMB_CACHE_DIR", None)  # the newcomer's cache: under HOME
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([program, "demo"], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"conceptcomb demo failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(f"demo, cold: {wall:.2f} s wall, {cpu:.2f} s CPU (load {os.getloadavg()[0]:.2f})")
        if best is None or wall < best[0]:
            best = (wall, cpu)
    assert best is not None
    print(f"figure: demo cold, wall = {best[0]:.3f} s")
    print(f"figure: demo cold, CPU = {best[1]:.3f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="best of N (2)")
    parser.add_argument("--no-conversion", action="store_true", help="skip the conversion")
    parser.add_argument(
        "--cold-only", action="store_true", help="only the whole demo in a fresh HOME"
    )
    args = parser.parse_args(argv)
    if args.cold_only:
        cold_demo(args.repeats)
        return 0
    gguf_parse(args.repeats)
    if not args.no_conversion:
        conversion()
    task_index(args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long ``conceptcomb compare`` takes on 20 runs of every task of one benchmark.

``--benchmark ccpt`` (the default): CCPT's ``ccpt`` group (its four tasks, 1,534 items per
run): 20 "models" answer each item with its own answer from the dataset, a share of them (5%
to 43%, one share per model) replaced by another item's answer, scored by ``conceptcomb
score --samples-output`` against a loopback judge server and made into one bundle each (the
making is not timed), against a budget of 10 s.

``--benchmark cggc``: CGGC's ``cggc_ood`` (15,985 items per run; the dataset shipped with the
package): 20 "models" answer each item with its own reference sentence, a share of them (5%
to 43%) replaced by another item's reference and as large a share by the reference less its
last word, scored by ``conceptcomb score`` (ROUGE, Coverage, BLEU, CIDEr, METEOR where Java
is on PATH) and made into one bundle each (minutes per bundle: kept in ``--out`` and reused),
against a budget of 60 s. The comparison resamples BLEU-3, BLEU-4 and CIDEr 1,000 times.

Then ``conceptcomb compare`` of the 20 bundles runs as a fresh command (its imports
included), ``--repeats`` times, and the script prints its wall time against the budget and
its CPU time, with the number of comparisons, the machine's cores and its load before and
after (on a shared machine the wall time includes waiting for a core).

    python benchmarks/compare_speed.py [--benchmark ccpt|cggc] [--runs 20] [--repeats 3]
        [--out DIR] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGETS = {"ccpt": 10.0, "cggc": 60.0}  # seconds, for 20 runs


def _replies(spec: object, items: list, share: float, seed: int) -> list[str]:
    from conceptcomb.testing.recorded import gold_reply

    rng = random.Random(seed)
    replies = []
    for n, item in enumerate(items):
        other = items[(n + 1 + rng.randrange(len(items) - 1)) % len(items)]
        replies.append(gold_reply(spec, other if rng.random() < share else item))
    return replies


def make_bundles(out: Path, runs: int, data_dir: str | None) -> list[Path]:
    """One bundle per model (kept in ``out``: made again only where missing)."""
    from conceptcomb.ccpt.data import load_items
    from conceptcomb.ccpt.tasks import default_specs
    from conceptcomb.testing.judge_server import LoopbackServer
    from conceptcomb.testing.recorded import score_predictions, submit_bundle

    bundles = []
    with LoopbackServer() as judge:
        for number in range(runs):
            folder = out / f"model-{number:02d}"
            found = sorted((folder / "bundles").glob("*.bundle.json"))
            if found:
                bundles += found
                continue
            folder.mkdir(parents=True, exist_ok=True)
            share = 0.05 + 0.02 * number
            results = []
            for spec in default_specs():
                items = load_items(spec, data_dir)
                path = folder / f"{spec.name}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for item, reply in zip(
                        items, _replies(spec, items, share, number), strict=True
                    ):
                        handle.write(json.dumps({"doc": item.as_doc(), "response": reply}) + "\n")
                judge_options = ["--judge-base-url", judge.base_url, "--judge-model", "gpt-4o",
                                 "--judge-cache", str(out / "judge.sqlite")]  # fmt: skip
                results.append(
                    score_predictions(
                        folder, spec.name, path, f"model-{number:02d}", *judge_options
                    )
                )
            bundles.append(submit_bundle(results, folder))
    return bundles


def _cggc_reply(targets: list[str], number: int, share: float, rng: random.Random) -> str:
    """Item ``number``'s reference, another item's (``share``), or less its last word
    (``share``)."""
    draw = rng.random()
    if draw < share:
        return targets[(number + 1 + rng.randrange(len(targets) - 1)) % len(targets)]
    if draw < 2 * share:
        return " ".join(targets[number].split()[:-1])
    return targets[number]


def make_cggc_bundles(out: Path, runs: int) -> list[Path]:
    """One ``cggc_ood`` bundle per model (kept in ``out``: made again only where missing)."""
    from conceptcomb.cggc.docs import item_doc, task_pairs
    from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
    from conceptcomb.testing.recorded import score_predictions, submit_bundle

    task = "cggc_ood"
    spec, options = spec_by_name(task), TaskOptions()
    folders = [out / f"cggc-model-{number:02d}" for number in range(runs)]
    made = [sorted((folder / "bundles").glob("*.bundle.json")) for folder in folders]
    if all(made):
        return [bundle for found in made for bundle in found]
    pairs = task_pairs(spec, options, announce=False)
    targets = [item.target for item, _ in pairs]
    bundles = []
    for number, (folder, found) in enumerate(zip(folders, made, strict=True)):
        if found:
            bundles += found
            continue
        folder.mkdir(parents=True, exist_ok=True)
        rng, share = random.Random(number), 0.05 + 0.02 * number
        path = folder / f"{task}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for n, (item, demos) in enumerate(pairs):
                doc = item_doc(item, demos, spec, options)
                reply = _cggc_reply(targets, n, share, rng)
                handle.write(json.dumps({"doc": doc, "response": reply}) + "\n")
        result = score_predictions(folder, task, path, f"cggc-model-{number:02d}")
        bundles.append(submit_bundle([result], folder))
        print(f"  bundle {number + 1} of {runs} made", flush=True)
    return bundles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", choices=sorted(BUDGETS), default="ccpt")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, help="keep the bundles here (reused when present)")
    parser.add_argument("--data-dir", help="the CCPT files (default: CONCEPTCOMB_DATA_DIR)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="compare-speed-"))
    started = time.perf_counter()
    if args.benchmark == "cggc":
        bundles = make_cggc_bundles(out, args.runs)
    else:
        bundles = make_bundles(out, args.runs, args.data_dir)
    budget = BUDGETS[args.benchmark]
    print(f"{len(bundles)} bundles in {out} ({time.perf_counter() - started:.0f} s to make)")
    program = str(Path(sys.executable).parent / "conceptcomb")
    command = [program, "compare", *map(str, bundles), "--json"]
    load_before = os.getloadavg()
    times, cpu, printed = [], [], ""
    for _ in range(args.repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            print(done.stdout[-2000:] + done.stderr[-2000:])
            return 1
        printed = done.stdout
    load_after = os.getloadavg()
    found = json.loads(printed)
    tasks = sorted({row["task"] for row in found["comparisons"]})
    pairs = {(row["run_a"], row["run_b"]) for row in found["comparisons"]}
    best = min(times)
    print(
        f"conceptcomb compare: {len(bundles)} runs x {len(tasks)} tasks ({', '.join(tasks)}): "
        f"{len(pairs)} pairs, {len(found['comparisons']):,} comparisons"
    )
    print(
        "wall time (a fresh command, imports included): "
        + ", ".join(f"{t:.2f} s" for t in times)
        + f"; best {best:.2f} s = {best / budget:.2f} of the {budget:.0f} s budget"
    )
    print(
        "CPU time (user + system): "
        + ", ".join(f"{t:.2f} s" for t in cpu)
        + "; wall time above CPU time is time spent waiting for a core (a loaded machine)"
    )
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{x:.2f}' for x in load_before)}, after "
        f"{', '.join(f'{x:.2f}' for x in load_after)}"
    )
    return 0 if best < budget else 1


if __name__ == "__main__":
    sys.exit(main())

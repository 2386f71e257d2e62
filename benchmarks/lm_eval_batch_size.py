"""What lm-eval's ``--batch_size`` does to a generation run of ours, measured in one run.

``lm_eval --model hf`` generates one item at a time unless given ``--batch_size``. This
runs the same command, on the packaged SmolLM2-135M-Instruct (converted once to a
transformers folder, as ``conceptcomb smollm2`` does), on the first ``--limit`` items of
``--task`` (``cggc_ood``: a reply of one sentence, scored without a judge), once per batch
size of ``--batch-sizes`` (``1,8``), in that order, each a fresh ``lm_eval`` command
(start-up and model load included), and prints the wall time of each, its ratio to batch
size 1, and whether its replies are those of batch size 1 (a batch pads shorter prompts:
in float32 the greedy replies may still differ in a token where two logits are close).
``auto`` is meant for a GPU: lm-eval probes for the largest batch that fits, which on 2 CPU
cores held 14 GB of memory and had not finished these 8 items after 8 minutes (stopped).
``--our-tasks-index`` runs lm-eval's command line with a task index of this package's tasks
only (`conceptcomb.frameworks.lm_eval_our_tasks`, as ``conceptcomb demo`` does): the same
run without first indexing lm-eval's ~14,000 task files (a quicker check of the script; the
figures then leave out a start-up cost every batch size pays alike).

    python benchmarks/lm_eval_batch_size.py [--task cggc_ood] [--limit 8]
        [--batch-sizes 1,8] [--device cpu] [--our-tasks-index]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conceptcomb.common.lm_eval_paths import include_path_args
from conceptcomb.smollm2 import hf_folder

BIN = Path(sys.executable).parent


def run(
    folder: Path, task: str, limit: int, batch: str, device: str, out: Path, program: list[str]
) -> float:
    command = [
        *program, "--model", "hf",
        "--model_args", f"pretrained={folder}",
        "--device", device, "--batch_size", batch,
        "--tasks", task, "--limit", str(limit), "--apply_chat_template",
        "--log_samples", "--output_path", str(out), *include_path_args(),
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"batch size {batch} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    return wall


def replies(out: Path) -> list[str]:
    (samples,) = out.rglob("samples_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    return [row["resps"][0][0] for row in sorted(rows, key=lambda row: row["doc_id"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="cggc_ood")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--batch-sizes", default="1,8")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--our-tasks-index",
        action="store_true",
        help="index this package's tasks only (no lm-eval built-in task indexed first)",
    )
    args = parser.parse_args()
    program = [str(BIN / "lm_eval")]
    if args.our_tasks_index:
        program = [sys.executable, "-m", "conceptcomb.frameworks.lm_eval_our_tasks"]
    folder = hf_folder()
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{args.task}, {args.limit} items, SmolLM2-135M-Instruct on {args.device}; "
          f"{os.cpu_count()} CPUs, load {load}"
          + ("; our tasks indexed only" if args.our_tasks_index else ""))  # fmt: skip
    with tempfile.TemporaryDirectory() as temp:
        first: tuple[float, list[str]] | None = None
        for batch in args.batch_sizes.split(","):
            out = Path(temp) / f"batch-{batch}"
            wall = run(folder, args.task, args.limit, batch, args.device, out, program)
            found = replies(out)
            if first is None:
                first = (wall, found)
            same = sum(a == b for a, b in zip(found, first[1], strict=True))
            print(
                f"--batch_size {batch:<5} {wall:7.1f} s   ratio to batch size 1 "
                f"{wall / first[0]:.2f}   replies as batch size 1: {same}/{len(found)}",
                flush=True,
            )
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load after: {load}")


if __name__ == "__main__":
    main()

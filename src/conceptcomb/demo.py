"""``conceptcomb demo``: real benchmark items end to end, offline, in about a minute.

1. The data first, before any model starts: the CGGC dataset shipped in the package (always
   there), and the CCPT files if they can be had (``data_dir``, ``CONCEPTCOMB_DATA_DIR``, the
   cache, or a download); without them one line says how to get them and the demo runs
   CGGC only.
2. The packaged SmolLM2-135M-Instruct as the model AND the judge: loaded by lm-eval's
   ``hf`` runner with the offline transformers judge (``--engine hf``) from a transformers
   folder converted once from the GGUF under ``~/.cache/conceptcomb/`` (pure Python, no
   compiler); or, with the optional ``conceptcomb[llama]`` extra, served by llama.cpp's
   OpenAI-compatible server on loopback (``--engine llama-cpp``), used by lm-eval's
   ``local-chat-completions`` runner and by the judge through ``judge_base_url``, exactly
   as with a vLLM server. hf is the default: on 2 cores, once the folder is converted, it
   ran this demo in 34 s (37 s of CPU) against llama.cpp's 48 s (61 s of CPU); its local
   judge is one forward pass per rating, not a constrained generation.
3. ``cggc_ood_easy2hard_verified`` (demonstrations chosen out of distribution and ordered
   easy to hard, relation verification by the judge) and ``ccpt_pi_emergent`` (property
   induction, relevance judge), ``--limit`` items each; lm-eval prints its metrics table
   and the judge usage. Then the demonstrations of one item, easy to hard, the commands to
   copy, and the wall time.

A 135M model's answers and ratings mean nothing: the demo shows that the pipeline runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conceptcomb.ccpt.data import CCPT_DATASET, load_items
from conceptcomb.ccpt.tasks import spec_by_name as ccpt_spec
from conceptcomb.cggc.data import describe_dataset as describe_cggc
from conceptcomb.common.datafiles import DATA_DIR_ENV, cache_root
from conceptcomb.common.errors import ConfigError, DataUnavailableError
from conceptcomb.common.lm_eval_paths import include_path_args
from conceptcomb.smollm2 import (
    SERVED_NAME,
    LlamaServer,
    hf_folder,
    hf_folder_ready,
    lm_eval_hf_model_args,
)

CGGC_TASK = "cggc_ood_easy2hard_verified"
CCPT_TASK = "ccpt_pi_emergent"
DEFAULT_CCPT_TOKENS = 128


def available_tasks(data_dir: str | None) -> tuple[list[str], list[str]]:
    """(tasks whose data is here, notes): raises for damaged data, before any model starts."""
    tasks, notes = [CGGC_TASK], [f"CGGC: {describe_cggc(None)}"]
    try:
        load_items(ccpt_spec(CCPT_TASK), data_dir)
    except DataUnavailableError as err:
        notes.append(
            f"CCPT: skipped, its files cannot be had here ({str(err).split(' (')[0]}). To add "
            f"it: run `conceptcomb data fetch ccpt` with internet; without, fetch them on a "
            f"machine that has it (they land in {cache_root() / 'data' / 'ccpt'}), copy that "
            f"folder here and set {DATA_DIR_ENV} to it (docs/install.md, \"CCPT's files on a "
            f'machine without internet"); it must hold the files of {CCPT_DATASET.describe()}.'
        )
    else:
        tasks.append(CCPT_TASK)
    return tasks, notes


def lm_eval_command(
    model_args: list[str], tasks: list[str], args: argparse.Namespace, metadata: dict, out: Path
) -> list[str]:
    return [
        "lm_eval", *model_args,
        "--tasks", ",".join(tasks),
        "--limit", str(args.limit),
        "--apply_chat_template",
        *_gen_kwargs(tasks, args.max_gen_toks),
        "--metadata", json.dumps(metadata),
        "--log_samples", "--output_path", str(out),
        *include_path_args(),
    ]  # fmt: skip


def _gen_kwargs(tasks: list[str], max_gen_toks: int | None) -> list[str]:
    """CGGC writes its 20 tokens (the paper's); CCPT's 1,024 are capped at 128 by default
    (a 135M model rambles): lm-eval's --gen_kwargs applies to every task of the run."""
    if max_gen_toks is None and CCPT_TASK in tasks:
        max_gen_toks = DEFAULT_CCPT_TOKENS
    return ["--gen_kwargs", f"max_gen_toks={max_gen_toks}"] if max_gen_toks else []


def _metadata(args: argparse.Namespace, judge: dict) -> dict:
    return {**judge, **({"data_dir": args.data_dir} if args.data_dir else {})}


def show_demonstrations(out: Path) -> None:
    """The first CGGC item's demonstrations, in the order the sampler gave them."""
    found = sorted(out.rglob(f"samples_{CGGC_TASK}_*.jsonl"))
    if not found:
        return
    first = json.loads(found[0].read_text(encoding="utf-8").splitlines()[0])
    doc = first["doc"]
    shown = [
        f"type {kind or '-'} ({label})"
        for kind, label in zip(doc["demonstration_types"], doc["demonstration_labels"], strict=True)
    ]
    print(
        f"\nEasy-to-hard demonstrations of CGGC item {doc['item_id']} (test relations "
        f"{doc['graph_label']}, unseen together in the pool): " + " -> ".join(shown)
    )
    print(f"Its reply: {first['resps'][0][0].strip()!r}")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    program("lm_eval")  # before any model is converted or loaded
    # torch's OpenMP threads spin while they wait: on a machine busy with other work that
    # made the hf runner's generation ten times slower (and three times the CPU); passive
    # waiting costs little when the machine is idle. Read when torch loads OpenMP, so set
    # before the conversion imports it. A user's own setting wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    tasks, notes = available_tasks(args.data_dir)
    for note in notes:
        print(note, flush=True)
    out = Path(args.output_path or tempfile.mkdtemp(prefix="conceptcomb-demo-"))
    commands: list[str] = []
    if args.engine == "hf":
        folder = str(_converted_folder())
        judge = {"judge": "local", "judge_model": folder}
        model_args = lm_eval_hf_model_args(Path(folder))
        command = lm_eval_command(model_args, tasks, args, _metadata(args, judge), out)
        code = _run(command, commands)
    else:
        with LlamaServer() as server:
            commands.append(shlex.join(server.command[1:]).replace("-m ", "python -m ", 1))
            # A 135M model rarely writes the asked JSON on its own: the server constrains it.
            judge = {
                "judge_base_url": server.base_url,
                "judge_model": SERVED_NAME,
                "judge_response_format": "json_object",
            }
            command = lm_eval_command(
                server.lm_eval_model_args(), tasks, args, _metadata(args, judge), out
            )
            code = _run(command, commands)
    show_demonstrations(out)
    adapt = "; the server's port was a free one" if args.engine == "llama-cpp" else ""
    print(
        f"\nCommands run (copy and adapt{adapt}; the demo ran lm_eval in its own process, "
        "indexing conceptcomb's tasks only: the same results, without lm-eval's ~16 s index):"
    )
    for line in commands:
        print(f"  {line}")
    print(
        f"\nResults and samples: {out}\n"
        "Note: SmolLM2-135M as model and judge only shows that the pipeline runs; its answers "
        "and ratings mean nothing. Use your model and an API judge for real numbers (README)."
    )
    print(f"demo finished in {time.perf_counter() - start:.1f} s (exit {code})", flush=True)
    return code


def _converted_folder() -> Path:
    """The packaged model as a transformers folder (`hf_folder`). When it is converted now
    (the first run), CGGC's items are parsed into the cache meanwhile, on the other core, in
    a process of their own (both are mostly single-threaded Python), for lm-eval's run."""
    if hf_folder_ready():
        return hf_folder()
    warm = subprocess.Popen(
        [sys.executable, "-c", "from conceptcomb.cggc.data import load_dataset; load_dataset()"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return hf_folder()
    finally:
        warm.wait()


def program(name: str) -> str:
    """A command of this Python's environment: on PATH, else beside the interpreter (the
    bin folder of a virtual environment that was not activated: `.venv/bin/conceptcomb`)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise ConfigError(
            f"the demo runs `{name}`, which is not installed with this Python "
            f"({sys.executable}): install the README's way "
            '(pip install -c constraints.txt ".[all,test]").'
        )
    return found


def _run(command: list[str], commands: list[str]) -> int:
    """Run the ``lm_eval`` command in this process (torch and transformers are imported
    already: a second process would import them again), its task index holding our tasks
    only instead of lm-eval's ~14,000 built-in ones (~16 s a run on 2 cores;
    `conceptcomb.frameworks.lm_eval_our_tasks`): the same command line, runner, outputs
    and results as the printed ``lm_eval`` command."""
    from conceptcomb.frameworks.lm_eval_our_tasks import main as lm_eval_main

    commands.append(shlex.join(command))
    print(f"Running: {commands[-1]}", flush=True)
    return lm_eval_main(command[1:])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=3, help="items per task (3)")
    parser.add_argument(
        "--engine",
        choices=["hf", "llama-cpp"],
        default="hf",
        help="hf (default): lm-eval's hf runner and the transformers judge on the packaged "
        "SmolLM2, converted once to ~/.cache/conceptcomb/; llama-cpp: llama.cpp's "
        "OpenAI-compatible server (needs the optional conceptcomb[llama] extra)",
    )
    parser.add_argument(
        "--max-gen-toks",
        type=int,
        default=None,
        help=f"new tokens per reply, for every task (default: the tasks' own, CCPT's capped "
        f"at {DEFAULT_CCPT_TOKENS})",
    )
    parser.add_argument("--data-dir", help=f"folder of the CCPT files (default: {DATA_DIR_ENV})")
    parser.add_argument("--output-path", help="keep results and samples here (default: a temp dir)")

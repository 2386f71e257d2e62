"""GPU runs, measured side by side in one run: the plugin against bare tasks in both
frameworks' GPU runners, and the local judge on the CPU and on the GPU.

On a machine where torch sees a CUDA GPU (without one it refuses, in one line), on the
first ``--limit`` items of each task of the ``ccpt`` group (the CCPT files: ``--data-dir``
or ``CONCEPTCOMB_DATA_DIR``), with ``--model`` (default: the packaged SmolLM2-135M-Instruct,
converted once to a transformers folder), in ``--dtype`` (bfloat16), it runs:

* lm-eval's hf runner (``--model hf --device cuda:0 --batch_size B --apply_chat_template``):
  the bare group of benchmarks/harness_overhead.py (the same docs as plain YAML + JSONL
  tasks with no filter: what a built-in task costs) and the ``ccpt`` group, judge off;
* Inspect's hf provider (``hf/local -M model_path=... -M device=cuda:0 -M do_sample=false
  --max-connections B``): the bare Inspect tasks of harness_overhead.py and the four CCPT
  tasks, judge off;
* the same with lm-eval's vllm runner and Inspect's ``vllm/`` provider when vllm imports;
* lm-eval's hf runner on ``ccpt_pi_emergent`` judged by the local judge on the GPU
  (``judge=local``, the same model); when vllm imports, the same judged by a vLLM server
  of the same model (``judge_response_format=json_schema``), and on a machine with several
  GPUs lm-eval's vllm runner with ``data_parallel_size`` = their count (Ray);
* the local judge alone (`conceptcomb.scorers.rating.rate_prompts`, the lm-eval filter's
  path, no cache), asked the same questions on the CPU (float32) and on the GPU (``--dtype``),
  one at a time and in batches;
* CGGC's local relation verifier alone (`conceptcomb.scorers.verification.verify_prompts`,
  the verification filter's path, no cache) likewise: one yes/no question per edge of the
  reasoning graph of the shipped test items, each item's reference as the sentence.

It prints per run the wall seconds of the command (start-up and model load included), the
tokens generated (counted with the model's tokenizer from lm-eval's samples; Inspect's
usage from its logs) and tokens per second; then the plugin / bare ratios, the judge
questions per second, the device and versions, and one summary line. Runs that fail print
the end of their output and the script goes on; the summary says which failed.

    python benchmarks/gpu_runs.py [--limit 128] [--batch-size 128] [--model DIR] [--data-dir DIR]
        [--max-tokens N] [--judge-questions 512] [--repeats 1] [--only frameworks|judge]
        [--judge-first]

``--judge-first`` runs the judge and verifier part before the framework runs (on a lent
machine with little time, the part that needs the GPU least goes last).

``--repeats N`` runs each framework run and each judge configuration N times, in alternating
order; the fastest counts. ``--cpu-rehearsal`` runs the same steps on the CPU (float32, a
few items, few tokens) so that tests can exercise the script where there is no GPU; every
line it prints says so, and none of its figures is a GPU figure.
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_overhead as overhead

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import GROUP_NAME, default_specs
from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import Placement, load_causal_lm
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.scorers.verification import verify_prompts

BIN = Path(sys.executable).parent
REHEARSAL = "[CPU rehearsal: no GPU figure] "
USAGE_LINE = re.compile(r"judge usage \[[^]]*\]: (\d+) distinct questions")


@dataclass
class Setup:
    """What every run shares."""

    model: str  # a transformers folder or hub id
    device: str  # cuda:0, or cpu for the rehearsal
    dtype: str
    batch_size: int
    limit: int
    max_tokens: int | None
    work: Path
    env: dict[str, str]
    rehearsal: bool
    npc_modifier: str | None

    def say(self, line: str) -> None:
        print((REHEARSAL if self.rehearsal else "") + line, flush=True)


@dataclass
class Run:
    name: str
    seconds: float
    tokens: int | None  # generated tokens; None when they could not be counted
    failed: str | None = None
    judge_questions: int | None = None

    def describe(self) -> str:
        if self.failed:
            return f"{self.name}: FAILED after {self.seconds:.0f} s ({self.failed})"
        rate = f", {self.tokens / self.seconds:.0f} tokens/s" if self.tokens else ""
        tokens = f", {self.tokens} tokens generated" if self.tokens is not None else ""
        judged = f", {self.judge_questions} judge questions" if self.judge_questions else ""
        return f"{self.name}: {self.seconds:.1f} s{tokens}{rate}{judged}"


@dataclass
class Results:
    runs: dict[str, Run] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ratio(self, plugin: str, bare: str) -> float | None:
        a, b = self.runs.get(plugin), self.runs.get(bare)
        if a is None or b is None or a.failed or b.failed:
            return None
        return a.seconds / b.seconds


# --- the runs --------------------------------------------------------------------------
def tool(name: str) -> str:
    """A framework's command beside this Python, else the one on PATH (packages installed
    with ``pip --target`` on a machine whose Python is not ours to change)."""
    beside = BIN / name
    return str(beside) if beside.exists() else shutil.which(name) or str(beside)


def run_command(setup: Setup, name: str, command: list[str], out: Path) -> tuple[Run, str]:
    """Run one framework command; its timing, and its output (for counts)."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    done = subprocess.run(command, env=setup.env, capture_output=True, text=True, timeout=7200)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    (out / "log").write_text(" ".join(command) + "\n\n" + output)
    failed = None
    if done.returncode != 0:
        tail = " | ".join(output.strip().splitlines()[-3:])[-400:]
        failed = f"exit {done.returncode}: {tail}; full log {out / 'log'}"
    return Run(name, seconds, None, failed), output


def generation_args(setup: Setup, framework: str) -> list[str]:
    if setup.max_tokens is None:
        return []
    if framework == "lm-eval":
        return ["--gen_kwargs", f"max_gen_toks={setup.max_tokens}"]
    return ["--max-tokens", str(setup.max_tokens)]


def lm_eval_run(
    setup: Setup, runner: str, tasks: str, include: Path | None, metadata: dict[str, Any], out: Path
) -> list[str]:
    if runner == "hf":
        model = ["--model", "hf", "--model_args", f"pretrained={setup.model},dtype={setup.dtype}",
                 "--device", setup.device, "--batch_size", str(setup.batch_size)]  # fmt: skip
    else:  # vllm batches on its own
        arguments = f"pretrained={setup.model},dtype={setup.dtype},gpu_memory_utilization=0.6"
        model = ["--model", "vllm", "--model_args", arguments]
    command = [tool("lm_eval"), *model, "--tasks", tasks, "--limit", str(setup.limit),
               "--apply_chat_template", "--log_samples", "--output_path", str(out),
               *generation_args(setup, "lm-eval")]  # fmt: skip
    if include is not None:
        command += ["--include_path", str(include)]
    if metadata:
        command += ["--metadata", json.dumps(metadata)]
    return command


def inspect_run(
    setup: Setup, provider: str, tasks: list[str], options: dict[str, str], out: Path
) -> list[str]:
    if provider == "hf":
        model = ["--model", "hf/local", "-M", f"model_path={setup.model}", "-M",
                 f"device={setup.device}", "-M", "do_sample=false", "-M", f"dtype={setup.dtype}",
                 "--max-connections", str(setup.batch_size)]  # fmt: skip
    else:
        model = ["--model", f"vllm/{setup.model}", "-M", f"dtype={setup.dtype}",
                 "--temperature", "0", "--max-connections", str(setup.batch_size)]  # fmt: skip
    command = [tool("inspect"), "eval", *tasks, *model, "--limit", str(setup.limit),
               "--log-dir", str(out), "--display", "none", "--log-level", "warning",
               *generation_args(setup, "inspect")]  # fmt: skip
    for key, value in options.items():
        command += ["-T", f"{key}={value}"]
    return command


def lm_eval_tokens(out: Path, tokenizer: Any) -> int:
    """Tokens generated in an lm-eval run: its logged replies, tokenized."""
    total = 0
    for samples in out.rglob("samples_*.jsonl"):
        for line in samples.read_text(encoding="utf-8").splitlines():
            for resp in json.loads(line).get("resps", []):
                for text in resp if isinstance(resp, list) else [resp]:
                    total += len(tokenizer(str(text), add_special_tokens=False)["input_ids"])
    return total


def inspect_tokens(out: Path) -> int:
    """Output tokens Inspect counted in a run's logs."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    total = 0
    for info in list_eval_logs(str(out)):
        log = read_eval_log(info, header_only=True)
        total += sum(usage.output_tokens for usage in (log.stats.model_usage or {}).values())
    return total


def framework_runs(setup: Setup, results: Results, runners: list[str], repeats: int) -> None:
    """Bare and plugin runs of each runner, ``repeats`` times in alternating order (so that
    neither always runs first, on cold file caches); the fastest of each counts."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(setup.model)
    docs = overhead.ccpt_docs(setup.env.get("CONCEPTCOMB_DATA_DIR"), setup.limit)
    bare_dir = setup.work / "bare"
    bare_dir.mkdir(exist_ok=True)
    overhead.write_bare_lm_eval_tasks(bare_dir, docs)
    bare_inspect = overhead.write_bare_inspect_tasks(bare_dir)
    include = None if lm_eval_has_our_tasks() else tasks_path()
    off = {"judge": "off", **({"npc_modifier": setup.npc_modifier} if setup.npc_modifier else {})}
    ours = [f"conceptcomb/{spec.name}" for spec in default_specs()]
    bare = [f"{bare_inspect}@bare_{spec.name}" for spec in default_specs()]
    for runner in runners:
        commands = {
            f"lm-eval {runner} bare": lambda out, runner=runner: lm_eval_run(
                setup, runner, overhead.BARE_GROUP, bare_dir, {}, out),
            f"lm-eval {runner} plugin": lambda out, runner=runner: lm_eval_run(
                setup, runner, GROUP_NAME, include, off, out),
            f"Inspect {runner} bare": lambda out, runner=runner: inspect_run(
                setup, runner, bare, {}, out),
            f"Inspect {runner} plugin": lambda out, runner=runner: inspect_run(
                setup, runner, ours, off, out),
        }  # fmt: skip
        for repeat in range(repeats):
            order = list(commands.items())[:: 1 if repeat % 2 == 0 else -1]
            for name, command in order:
                out = setup.work / f"{name.replace(' ', '-')}-{repeat}"
                run, _ = run_command(setup, name, command(out), out)
                if not run.failed:
                    run.tokens = (
                        lm_eval_tokens(out, tokenizer) if name.startswith("lm-eval")
                        else inspect_tokens(out)
                    )  # fmt: skip
                setup.say(run.describe())
                best = results.runs.get(name)
                if best is None or best.failed or (not run.failed and run.seconds < best.seconds):
                    results.runs[name] = run


def judged_run(setup: Setup, results: Results) -> None:
    """lm-eval's hf runner on ccpt_pi_emergent, judged by the local judge on the device."""
    name = "lm-eval hf plugin, ccpt_pi_emergent judged by the local judge"
    out = setup.work / "lm-eval-judged"
    include = None if lm_eval_has_our_tasks() else tasks_path()
    judge = {"judge": "local", "judge_model": setup.model, "judge_device": setup.device,
             "judge_dtype": setup.dtype, "judge_cache": str(out / "judge.sqlite")}  # fmt: skip
    command = lm_eval_run(setup, "hf", "ccpt_pi_emergent", include, judge, out)
    run, output = run_command(setup, name, command, out)
    counted = USAGE_LINE.search(output)
    run.judge_questions = int(counted.group(1)) if counted else None
    results.runs[name] = run
    setup.say(run.describe())


def vllm_judged_run(setup: Setup, results: Results) -> None:
    """The same judged run with its judge on a vLLM server (``vllm serve`` of the same model
    beside the hf runner, a third of the GPU's memory), answers constrained to the rating's
    JSON schema (``judge_response_format=json_schema``, vLLM's structured outputs)."""
    from conceptcomb.testing.vllm_server import SERVED_NAME, VllmServer

    name = "lm-eval hf plugin, ccpt_pi_emergent judged by a vLLM server (json_schema)"
    out = setup.work / "lm-eval-vllm-judged"
    include = None if lm_eval_has_our_tasks() else tasks_path()
    extra = ("--gpu-memory-utilization", "0.3")
    try:
        with VllmServer(sys.executable, setup.model, dtype=setup.dtype, extra=extra) as server:
            setup.say(f"vLLM judge server up in {server.startup_seconds:.0f} s")
            judge = {"judge_base_url": server.base_url, "judge_model": SERVED_NAME,
                     "judge_response_format": "json_schema", "judge_concurrency": 64,
                     "judge_cache": str(out / "judge.sqlite")}  # fmt: skip
            command = lm_eval_run(setup, "hf", "ccpt_pi_emergent", include, judge, out)
            run, output = run_command(setup, name, command, out)
    except RuntimeError as err:  # the server did not start: its log's tail
        run, output = Run(name, 0.0, None, failed=str(err)[-400:]), ""
    counted = USAGE_LINE.search(output)
    run.judge_questions = int(counted.group(1)) if counted else None
    results.runs[name] = run
    setup.say(run.describe())


def vllm_data_parallel_run(setup: Setup, results: Results, gpus: int) -> None:
    """lm-eval's vllm runner over ``gpus`` replicas (``data_parallel_size``: Ray), the
    ``ccpt`` group, judge off: against the one-replica run of `framework_runs`."""
    name = f"lm-eval vllm plugin, data_parallel_size={gpus}"
    out = setup.work / f"lm-eval-vllm-dp{gpus}"
    include = None if lm_eval_has_our_tasks() else tasks_path()
    command = lm_eval_run(setup, "vllm", GROUP_NAME, include, {"judge": "off"}, out)
    at = command.index("--model_args") + 1
    command[at] += f",data_parallel_size={gpus}"
    run, _ = run_command(setup, name, command, out)
    results.runs[name] = run
    setup.say(run.describe())


# --- the local judge -------------------------------------------------------------------
def judge_questions(setup: Setup, count: int) -> list[str]:
    """Distinct relevance questions of the CCPT items: (noun phrase | head | modifier,
    the item's property), as the judge gets them."""
    prompts: dict[str, None] = {}
    for spec in default_specs():
        if not spec.generative:
            continue
        for item in load_items(spec, setup.env.get("CONCEPTCOMB_DATA_DIR")):
            for concept in (item.combination, item.root, item.modifier):
                prompts.setdefault(relevance_prompt(concept, item.property))
            if len(prompts) >= count:
                return list(prompts)[:count]
    return list(prompts)


def verifier_questions(count: int) -> list[str]:
    """Distinct yes/no questions of CGGC's verifier on the shipped test items: one per edge
    of each item's pruned graph, the item's reference as the sentence."""
    from conceptcomb.cggc.data import load_dataset
    from conceptcomb.cggc.verification import edge_questions

    prompts: dict[str, None] = {}
    for item in load_dataset().test:
        for question in edge_questions(item, item.target):
            prompts.setdefault(question.prompt)
        if len(prompts) >= count:
            break
    return list(prompts)[:count]


def time_judge(
    setup: Setup, prompts: list[str], device: str, dtype: str, batch: int, verifier: bool = False
) -> tuple[float, dict[str, float]]:
    """Seconds to rate ``prompts`` through the rating session (model loaded beforehand):
    the relevance judge's 1-10 ratings, or the verifier's yes (1.0) / no (0.0)."""
    settings = JudgeSettings.resolve(
        {
            "judge": "local",
            "judge_model": setup.model,
            "judge_device": device,
            "judge_dtype": dtype,
            "judge_batch_size": batch,
            "judge_cache": "off",
        }
    )
    load_causal_lm(setup.model, Placement(device, dtype))
    start = time.perf_counter()
    if verifier:
        replies, usage = verify_prompts(settings, prompts)
    else:
        replies, usage, _ = rate_prompts(
            settings, prompts, description=f"judge {device} {dtype} x{batch}"
        )
    seconds = time.perf_counter() - start
    if usage.failures:
        raise SystemExit(f"the local judge failed {usage.failures} questions: {usage.last_error}")
    return seconds, {prompt: float(reply.rating or 0.0) for prompt, reply in replies.items()}


def judge_runs(
    setup: Setup,
    results: Results,
    counts: tuple[int, int],
    cpu_batch: int,
    repeats: int,
    verifier: bool = False,
) -> None:
    """The local judge (or CGGC's local verifier) on the CPU (float32) and on the GPU, one
    at a time and batched, each ``repeats`` times in alternating order; the fastest counts."""
    questions, cpu_questions = counts
    wanted = max(questions, cpu_questions)
    prompts = verifier_questions(wanted) if verifier else judge_questions(setup, wanted)
    on_cpu = prompts[:cpu_questions]
    configs = [("cpu", "float32", 1, on_cpu), ("cpu", "float32", cpu_batch, on_cpu)]
    if not setup.rehearsal:
        configs += [(setup.device, setup.dtype, 1, prompts[: min(64, len(prompts))]),
                    (setup.device, setup.dtype, setup.batch_size, prompts)]  # fmt: skip
    kind = "local verifier" if verifier else "local judge"
    # Verdicts are 1/0: the share that differ says more than the largest difference.
    compare = "verdicts that differ" if verifier else "largest rating difference"
    reference: dict[str, float] = {}
    for repeat in range(repeats):
        for device, dtype, batch, asked in configs[:: 1 if repeat % 2 == 0 else -1]:
            seconds, ratings = time_judge(setup, asked, device, dtype, batch, verifier)
            name = f"{kind} {device} {dtype} batch {batch}"
            if device == "cpu" and batch == 1:
                reference = reference or ratings
            common = [p for p in asked if p in reference]
            gaps = [abs(ratings[p] - reference[p]) for p in common]
            gap = f"{sum(g > 0 for g in gaps)}" if verifier else f"{max(gaps, default=0):.5f}"
            agree = (
                f"; {compare} from the CPU float32 one-at-a-time run: {gap} over "
                f"{len(common)} questions"
                if common and not (device == "cpu" and batch == 1)
                else ""
            )
            setup.say(f"{name}: {len(asked)} questions in {seconds:.1f} s = "
                      f"{len(asked) / seconds:.2f} questions/s{agree}")  # fmt: skip
            best = results.runs.get(name)
            if best is None or seconds < best.seconds:
                results.runs[name] = Run(name, seconds, None, judge_questions=len(asked))


# --- the machine and the report --------------------------------------------------------
def describe_machine(setup: Setup) -> str:
    import torch

    if setup.rehearsal:
        device = f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"
    else:
        props = torch.cuda.get_device_properties(0)
        memory = props.total_memory / 2**30
        device = f"{torch.cuda.get_device_name(0)} ({memory:.0f} GiB), CUDA {torch.version.cuda}"
    versions = ", ".join(
        f"{name} {_version(name)}"
        for name in ("torch", "transformers", "lm_eval", "inspect_ai", "vllm")
    )
    load = os.getloadavg()[0]
    return (
        f"device: {device}; {versions}; Python {platform.python_version()}; load average "
        f"(1 min) {load:.2f} on {os.cpu_count()} CPUs"
    )


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def commit() -> str:
    """The checkout's commit; GPU_RUNS_COMMIT names it where the copy that runs is not the
    checkout (a lent GPU machine gets the tree without its history, or with another's)."""
    named = os.environ.get("GPU_RUNS_COMMIT")
    if named:
        return f"{named} (GPU_RUNS_COMMIT)"
    here = Path(__file__).resolve().parents[1]
    try:
        git = ["git", "-C", str(here)]
        done = subprocess.run([*git, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        changes = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=30)  # fmt: skip
    except OSError:
        return "unknown (no git)"
    head = done.stdout.strip() or "unknown (not a checkout)"
    return head + (" with local changes" if changes.stdout.strip() else "")


def report(setup: Setup, results: Results, runners: list[str]) -> None:
    parts = []
    for runner in runners:
        for framework in ("lm-eval", "Inspect"):
            ratio = results.ratio(f"{framework} {runner} plugin", f"{framework} {runner} bare")
            bare = results.runs.get(f"{framework} {runner} bare")
            if ratio is None:
                continue
            speed = (
                f", bare {bare.tokens / bare.seconds:.0f} tokens/s" if bare and bare.tokens else ""
            )
            setup.say(
                f"{framework} {runner}, {setup.limit} items per task: plugin / bare "
                f"{ratio:.2f}{speed}"
            )
            parts.append(f"{framework} {runner} plugin/bare {ratio:.2f}")
    for kind in ("local judge", "local verifier"):
        parts += judge_rates(results, kind)
    failed = [name for name, run in results.runs.items() if run.failed]
    if failed:
        parts.append("FAILED: " + ", ".join(failed))
    setup.say("summary: " + "; ".join(parts))


def judge_rates(results: Results, kind: str) -> list[str]:
    """Each configuration's questions per second, against the CPU one at a time."""
    cpu_one = results.runs.get(f"{kind} cpu float32 batch 1")
    if cpu_one is None or not cpu_one.judge_questions:
        return []
    base = cpu_one.judge_questions / cpu_one.seconds
    parts = []
    for name, run in results.runs.items():
        if name.startswith(kind) and run.judge_questions and run is not cpu_one:
            rate = run.judge_questions / run.seconds
            parts.append(f"{name} {rate:.1f} q/s ({rate / base:.1f}x CPU one at a time)")
    return parts


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="transformers folder or hub id (default: the packaged SmolLM2)"
    )
    parser.add_argument("--data-dir", help="the CCPT files (else CONCEPTCOMB_DATA_DIR)")
    parser.add_argument("--limit", type=int, help="items per task (128; rehearsal 1)")
    parser.add_argument(
        "--batch-size",
        type=int,
        help="lm-eval batch, Inspect connections, judge batch (128; rehearsal 4)",
    )
    parser.add_argument("--dtype", default=None, help="bfloat16 (rehearsal: float32)")
    parser.add_argument(
        "--max-tokens", type=int, help="cap on generated tokens (the tasks' own; rehearsal 8)"
    )
    parser.add_argument(
        "--judge-questions", type=int, default=512, help="questions for the GPU judge"
    )
    parser.add_argument(
        "--judge-cpu-questions", type=int, help="questions for the CPU judge (64; rehearsal 8)"
    )
    parser.add_argument("--judge-cpu-batch", type=int, default=16, help="the CPU judge's batch")
    parser.add_argument(
        "--npc-modifier",
        choices=["lemma", "surface"],
        help="for ccpt_npc_emergent (the task's default)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of each (the fastest counts)")
    parser.add_argument("--only", choices=["frameworks", "judge"], help="one part only")
    parser.add_argument(
        "--verifier-questions", type=int, default=512, help="questions for the GPU verifier"
    )
    parser.add_argument("--skip-vllm", action="store_true", help="even when vllm imports")
    parser.add_argument("--judge-first", action="store_true",
                        help="the judge and verifier part before the framework runs")  # fmt: skip
    parser.add_argument("--cpu-rehearsal", action="store_true",
                        help="for tests: the same steps on the CPU, few items and tokens; "
                        "every line says it is no GPU figure")  # fmt: skip
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    import torch

    if not args.cpu_rehearsal and not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else "no GPU visible"
        raise SystemExit(
            f"gpu_runs.py measures GPU runs, and torch {torch.__version__} sees no CUDA GPU here "
            f"({build}): run it on a machine with one (docs/performance.md, GPU runs)."
        )
    from conceptcomb.smollm2 import hf_folder

    rehearsal = args.cpu_rehearsal
    work = Path(tempfile.mkdtemp(prefix="gpu-runs-"))  # scratch (caches): the results are printed
    atexit.register(shutil.rmtree, work, True)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false",
           "CONCEPTCOMB_CACHE_DIR": str(work / "cache")}  # fmt: skip
    if args.data_dir:
        env["CONCEPTCOMB_DATA_DIR"] = args.data_dir
    setup = Setup(
        model=args.model or str(hf_folder()),
        device="cpu" if rehearsal else "cuda:0",
        dtype=args.dtype or ("float32" if rehearsal else "bfloat16"),
        batch_size=args.batch_size or (4 if rehearsal else 128),
        limit=args.limit or (1 if rehearsal else 128),
        max_tokens=args.max_tokens or (8 if rehearsal else None),
        work=work,
        env=env,
        rehearsal=rehearsal,
        npc_modifier=args.npc_modifier,
    )
    os.environ.update({k: v for k, v in env.items() if k.startswith(("CONCEPTCOMB_", "HF_"))})
    setup.say(
        f"{datetime.date.today().isoformat()}, commit {commit()}, model {setup.model} "
        f"({setup.dtype})"
    )
    setup.say(describe_machine(setup))
    runners = ["hf"]
    if importlib.util.find_spec("vllm") and not args.skip_vllm and not rehearsal:
        runners.append("vllm")
    elif not rehearsal:
        setup.say("vllm does not import here (or --skip-vllm): its runs are left out")
    results = Results()
    cpu_questions = args.judge_cpu_questions or (8 if rehearsal else 64)

    def judge_part() -> None:
        judge = (args.judge_questions, cpu_questions)
        judge_runs(setup, results, judge, args.judge_cpu_batch, args.repeats)
        verify = (args.verifier_questions, cpu_questions)
        judge_runs(setup, results, verify, args.judge_cpu_batch, args.repeats, verifier=True)

    def framework_part() -> None:
        framework_runs(setup, results, runners, args.repeats)
        judged_run(setup, results)
        if "vllm" in runners:
            vllm_judged_run(setup, results)
            gpus = torch.cuda.device_count()
            if gpus > 1:
                vllm_data_parallel_run(setup, results, gpus)
            else:
                setup.say("one GPU: lm-eval's vllm data_parallel_size run is left out")

    parts = [(args.only != "frameworks", judge_part), (args.only != "judge", framework_part)]
    for wanted, part in parts if args.judge_first else parts[::-1]:
        if wanted:
            part()
    report(setup, results, runners)


if __name__ == "__main__":
    main()

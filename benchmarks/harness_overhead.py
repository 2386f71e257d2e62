"""What the plugin adds to a framework run, measured side by side in one run.

A loopback OpenAI-compatible model server (in this process) answers every prompt at once
with a fixed reply: the dataset's own answer in the format the task asks for. Against it
the script runs, as a user would from a shell, on all 1534 items of the ``ccpt`` group:

* lm-eval (``local-chat-completions``): the ``ccpt`` group with the judge off, then judged
  by a 0-latency loopback judge in its own process (fresh judge cache); and a bare group of
  four plain ``generate_until`` tasks with no filter and lm-eval's own ``exact_match``,
  written to a temporary folder (YAML and JSONL data, as lm-eval's built-in tasks are
  written) from the very same docs, so both send identical requests and get identical
  replies. No built-in lm-eval task runs offline (they download their data), so the bare
  task stands for one: same indexing of every installed task, same model runner;
* Inspect (``openai-api`` provider): the four CCPT tasks (judge off, then on), and four
  bare tasks over the same chat messages (``generate()``, Inspect's ``match()``).

It prints per run the wall and CPU time of the command and when its first model request
came (the imports, task indexing and dataset building before it), in wall and in CPU
seconds; then the plugin / bare ratios, and ends with one summary line. CPU time is what
other jobs on a shared machine hardly change; wall time is what the goal is about, so
measure on an idle machine. Each configuration runs ``--repeats`` times (2), in
alternating order, and the fastest run counts.

``--our-tasks-index`` runs the lm-eval commands, bare and plugin alike, with a task index of
this package's tasks and the bare ones only (`conceptcomb.frameworks.lm_eval_our_tasks`):
every lm-eval run then skips indexing lm-eval's ~14,000 task files, a quicker check of the
script whose lm-eval figures leave out that start-up cost.

    python benchmarks/harness_overhead.py [--repeats 2] [--data-dir DIR] [--limit N]
        [--our-tasks-index]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import conceptcomb
from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.lm_eval_hooks import build_docs
from conceptcomb.ccpt.tasks import GROUP_NAME, default_specs
from conceptcomb.cli import lm_eval_has_our_tasks, tasks_path
from conceptcomb.testing.judge_server import Request
from conceptcomb.testing.model_server import ModelServer

BIN = Path(sys.executable).parent
MODEL = "loopback-model"


def process_cpu(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class TimedModelServer(ModelServer):
    """Also notes the CPU time the command had used when its first request came."""

    pid: int | None = None
    first_cpu: float | None = None

    async def _route(self, request: Request) -> bytes:
        if self.first is None and request.method == "POST" and self.pid is not None:
            self.first_cpu = process_cpu(self.pid)
        return await super()._route(request)


@dataclass
class Timing:
    wall: float
    cpu: float  # user + system seconds of the command: what other load hardly changes
    first_request: float  # wall seconds from the start to the first model request
    first_request_cpu: float  # CPU seconds the command used before that request
    requests: int


@dataclass
class Runs:
    """Every timing of every configuration; the fastest counts (other load only adds)."""

    timings: dict[str, list[Timing]] = field(default_factory=dict)

    def add(self, name: str, timing: Timing) -> None:
        self.timings.setdefault(name, []).append(timing)
        print(f"{name}: {timing.wall:.1f} s wall, {timing.cpu:.1f} s CPU; first model request "
              f"after {timing.first_request:.1f} s wall, {timing.first_request_cpu:.1f} s CPU",
              flush=True)  # fmt: skip

    def best(self, name: str, what: str) -> float:
        return min(getattr(timing, what) for timing in self.timings[name])


def run_command(
    command: list[str], env: dict[str, str], server: TimedModelServer, expected: int, log: Path
) -> Timing:
    server.reset()
    server.first_cpu = None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    with log.open("w", encoding="utf-8") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        server.pid = process.pid
        returncode = process.wait()
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if returncode != 0:
        tail = log.read_text(encoding="utf-8")[-3000:]
        raise SystemExit(f"command failed ({returncode}): {' '.join(command)}\n{tail}")
    if server.asked != expected or server.unknown:
        raise SystemExit(
            f"{command[0]}: {server.asked} model requests ({server.unknown} unknown prompts), "
            f"expected {expected}; see {log}"
        )
    assert server.first is not None and server.first_cpu is not None
    return Timing(wall, cpu, server.first - start, server.first_cpu, server.asked)


# --- lm-eval ---------------------------------------------------------------------------
BARE_GROUP = "bare_ccpt"


def write_bare_lm_eval_tasks(folder: Path, docs: dict[str, list[dict[str, str]]]) -> None:
    """Plain YAML tasks over the same docs: JSON data, no filter, exact_match."""
    for spec in default_specs():
        data = folder / f"{spec.name}.jsonl"
        data.write_text("".join(json.dumps(doc) + "\n" for doc in docs[spec.name]))
        config = {
            "task": f"bare_{spec.name}",
            "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(data)}},
            "test_split": "test",
            "output_type": "generate_until",
            "num_fewshot": 0,
            "description": "system_prompt",
            "doc_to_text": "prompt",
            "doc_to_target": "target",
            "generation_kwargs": {"until": [], "max_gen_toks": spec.max_tokens, "do_sample": False},
            "metric_list": [
                {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}
            ],
            "metadata": {"version": 1.0},
        }
        (folder / f"bare_{spec.name}.yaml").write_text(json.dumps(config, indent=1))
    group = {"group": BARE_GROUP, "task": [f"bare_{s.name}" for s in default_specs()]}
    (folder / f"{BARE_GROUP}.yaml").write_text(json.dumps(group, indent=1))


def lm_eval_command(
    base_url: str,
    tasks: str,
    include: Path | None,
    out: Path,
    metadata: dict | None,
    program: list[str],
) -> list[str]:
    model_args = (
        f"model={MODEL},base_url={base_url}/chat/completions,num_concurrent=8,max_retries=1"
    )
    command = [
        *program, "--model", "local-chat-completions", "--model_args", model_args,
        "--tasks", tasks, "--apply_chat_template", "--output_path", str(out),
    ]  # fmt: skip
    if include is not None:
        command += ["--include_path", str(include)]
    if metadata is not None:
        command += ["--metadata", json.dumps(metadata)]
    return command


# --- Inspect ---------------------------------------------------------------------------
BARE_INSPECT = '''
"""Bare Inspect tasks over the same chat messages (written by harness_overhead.py)."""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import match
from inspect_ai.solver import generate

HERE = Path(__file__).parent


def bare(name: str, max_tokens: int) -> Task:
    samples = []
    for line in (HERE / f"{name}.jsonl").read_text().splitlines():
        doc = json.loads(line)
        samples.append(Sample(
            id=doc["item_id"],
            input=[ChatMessageSystem(content=doc["system_prompt"]),
                   ChatMessageUser(content=doc["prompt"])],
            target=doc["target"],
            metadata=doc,
        ))
    return Task(dataset=MemoryDataset(samples, name=name), solver=generate(), scorer=match(),
                config=GenerateConfig(temperature=0.0, max_tokens=max_tokens))
'''


def write_bare_inspect_tasks(folder: Path) -> Path:
    """A Python file of @task functions reading the JSONL docs written for lm-eval."""
    source = BARE_INSPECT
    for spec in default_specs():
        source += textwrap.dedent(f"""

            @task
            def bare_{spec.name}():
                return bare("{spec.name}", {spec.max_tokens})
            """)
    path = folder / "bare_inspect.py"
    path.write_text(source)
    return path


def inspect_command(tasks: list[str], log_dir: Path, options: dict[str, str]) -> list[str]:
    command = [
        str(BIN / "inspect"), "eval", *tasks, "--model", f"openai-api/loopback/{MODEL}",
        "--log-dir", str(log_dir), "--display", "none", "--log-level", "warning",
    ]  # fmt: skip
    for key, value in options.items():
        command += ["-T", f"{key}={value}"]
    return command


# --- the run ---------------------------------------------------------------------------
def start_judge() -> tuple[subprocess.Popen, str]:
    """The loopback judge in its own process (as a real endpoint would be)."""
    command = [sys.executable, "-m", "conceptcomb.testing.judge_server", "--port", "0"]
    judge = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = judge.stdout.readline() if judge.stdout else ""
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        judge.kill()
        raise SystemExit(f"the loopback judge did not start: {line!r}")
    return judge, match.group(1)


def ccpt_docs(data_dir: str | None, limit: int | None) -> dict[str, list[dict[str, str]]]:
    return {
        spec.name: build_docs(spec, load_items(spec, data_dir)[:limit]) for spec in default_specs()
    }


def fixed_replies(docs: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    replies = {}
    for spec in default_specs():
        for doc in docs[spec.name]:
            replies[doc["prompt"]] = dataset_answer(spec, CcptItem.from_doc(doc))
    return replies


def installed_from_here() -> bool:
    """Whether the conceptcomb imported is the one installed (Inspect checks which installed
    distribution provides each task; for code imported from elsewhere, e.g. a checkout on
    PYTHONPATH beside an install of another one, it scans every distribution, ~0.5 s a task)."""
    try:
        distribution = importlib.metadata.distribution("conceptcomb")
    except importlib.metadata.PackageNotFoundError:
        return False
    here = Path(conceptcomb.__file__).resolve().parent
    direct = json.loads(distribution.read_text("direct_url.json") or "{}")
    if direct.get("dir_info", {}).get("editable"):
        root = Path(urllib.parse.urlparse(direct["url"]).path).resolve()
        return here.is_relative_to(root)
    return any(
        Path(str(f.locate())).resolve() == here / "__init__.py" for f in distribution.files or []
    )


def entry_point_seconds(env: dict[str, str]) -> float:
    """Import time of the Inspect entry point, which every ``inspect eval`` loads."""
    code = ("import time, inspect_ai; start = time.perf_counter(); "
            "import conceptcomb._inspect_registry; print(time.perf_counter() - start)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return float(done.stdout.strip() or "nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (fastest counts)")
    parser.add_argument("--data-dir", default=None, help="CCPT files (else CONCEPTCOMB_DATA_DIR)")
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--limit", type=int, help="first N items per task (a quick check)")
    parser.add_argument(
        "--our-tasks-index",
        action="store_true",
        help="lm-eval indexes our tasks and the bare ones only, not its ~14,000 own",
    )
    args = parser.parse_args()
    lm_eval = [str(BIN / "lm_eval")]
    if args.our_tasks_index:
        lm_eval = [sys.executable, "-m", "conceptcomb.frameworks.lm_eval_our_tasks"]
        print("lm-eval runs index our tasks and the bare ones only (--our-tasks-index)")
    limit = ["--limit", str(args.limit)] if args.limit else []

    work = Path(tempfile.mkdtemp(prefix="harness-overhead-"))
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LOOPBACK_API_KEY": "unused",
           "OPENAI_API_KEY": "unused", "HF_DATASETS_CACHE": str(work / "hf-datasets")}  # fmt: skip
    if args.data_dir:
        env["CONCEPTCOMB_DATA_DIR"] = args.data_dir
    docs = ccpt_docs(env.get("CONCEPTCOMB_DATA_DIR"), args.limit)
    n_items = sum(len(d) for d in docs.values())
    bare_dir = work / "bare"
    bare_dir.mkdir()
    write_bare_lm_eval_tasks(bare_dir, docs)
    bare_inspect = write_bare_inspect_tasks(bare_dir)
    include = None if lm_eval_has_our_tasks() else tasks_path()
    names = [f"conceptcomb/{spec.name}" for spec in default_specs()]
    bare_names = [f"{bare_inspect}@bare_{spec.name}" for spec in default_specs()]

    runs = Runs()
    judge, judge_url = start_judge()
    try:
        with TimedModelServer(fixed_replies(docs)) as server:
            env["LOOPBACK_BASE_URL"] = server.base_url
            judged = {"judge_base_url": judge_url, "judge_model": "loopback"}
            commands = {
                "lm-eval bare": lambda out: lm_eval_command(
                    server.base_url, BARE_GROUP, bare_dir, out, None, lm_eval),
                "lm-eval plugin, judge off": lambda out: lm_eval_command(
                    server.base_url, GROUP_NAME, include, out, {"judge": "off"}, lm_eval),
                "lm-eval plugin, judge on": lambda out: lm_eval_command(
                    server.base_url, GROUP_NAME, include, out, judged, lm_eval),
            }  # fmt: skip
            if not args.skip_inspect:
                commands |= {
                    "Inspect bare": lambda out: inspect_command(bare_names, out, {}),
                    "Inspect plugin, judge off": lambda out: inspect_command(
                        names, out, {"judge": "off"}),
                    "Inspect plugin, judge on": lambda out: inspect_command(names, out, judged),
                }  # fmt: skip
            for repeat in range(args.repeats):
                # Every other round in reverse order, so that no configuration always runs
                # first (cold file caches) or right after the same neighbour.
                order = list(commands.items())[:: 1 if repeat % 2 == 0 else -1]
                for number, (name, command) in enumerate(order):
                    out = work / f"run-{repeat}-{number}"
                    out.mkdir()
                    env["CONCEPTCOMB_CACHE_DIR"] = str(out / "cache")  # a fresh judge cache
                    command_line = command(out) + limit
                    runs.add(name, run_command(command_line, env, server, n_items, out / "log"))
    finally:
        judge.terminate()
        judge.wait()
    entry_point = None if args.skip_inspect else entry_point_seconds(env)
    shutil.rmtree(work, ignore_errors=True)
    report(runs, n_items, entry_point)


def compare(runs: Runs, framework: str) -> dict[str, float]:
    """Plugin runs against the bare one: time ratios and the first request's lag."""
    bare, off, on = (
        f"{framework} {run}" for run in ("bare", "plugin, judge off", "plugin, judge on")
    )
    return {
        "off": runs.best(off, "wall") / runs.best(bare, "wall"),
        "off_cpu": runs.best(off, "cpu") / runs.best(bare, "cpu"),
        "on": runs.best(on, "wall") / runs.best(bare, "wall"),
        "on_cpu": runs.best(on, "cpu") / runs.best(bare, "cpu"),
        "first": runs.best(off, "first_request") - runs.best(bare, "first_request"),
        "first_cpu": runs.best(off, "first_request_cpu") - runs.best(bare, "first_request_cpu"),
        "bare_first": runs.best(bare, "first_request"),
    }


def report(runs: Runs, n_items: int, entry_point: float | None) -> None:
    summary = []
    for framework in ["lm-eval"] + ([] if entry_point is None else ["Inspect"]):
        r = compare(runs, framework)
        print(
            f"{framework}, {n_items} items, plugin / bare: judge off {r['off']:.2f} wall, "
            f"{r['off_cpu']:.2f} CPU; judge on {r['on']:.2f} wall, {r['on_cpu']:.2f} CPU; "
            f"first model request {r['first']:+.1f} s wall ({r['bare_first']:.1f} s bare), "
            f"{r['first_cpu']:+.1f} s CPU"
        )
        summary.append(
            f"{framework} judge off {r['off']:.2f} (CPU {r['off_cpu']:.2f}), judge on "
            f"{r['on']:.2f} (CPU {r['on_cpu']:.2f}), first request {r['first']:+.1f} s "
            f"({r['first_cpu']:+.1f} s CPU)"
        )
    if entry_point is not None:
        print(f"Inspect entry point, imported by every inspect eval: {entry_point:.2f} s")
        if not installed_from_here():
            print(f"note: {Path(conceptcomb.__file__).parent} is not the installed conceptcomb, "
                  "so Inspect scans every installed distribution for each task (~0.5 s a task, "
                  "before the first request); install this tree (pip install -e .) to measure "
                  "what users get")  # fmt: skip
    print("summary, plugin / bare wall time: " + "; ".join(summary))


if __name__ == "__main__":
    main()

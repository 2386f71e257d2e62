"""What every task of this package sends a model, in both frameworks, and what a bundle of
the two runs records: one JSON, for tests that compare frameworks and installs.

    python -m conceptcomb.testing.sent_prompts --out FILE [--limit 3] [--tasks GLOB...]

In one process, with no model: a loopback server (`ModelServer`) answers every chat request
at once with an empty reply (and "Yes"/"No" log probabilities where they are asked for),
keeping each request body as it arrived. Then

* lm-eval's own command line (``lm_eval run --apply_chat_template --log_samples``, few-shot
  as multi-turn as the command defaults it, lm-eval's default few-shot seed) on every YAML
  task of ours, its model `LoopbackChat`: lm-eval's ``local-chat-completions`` runner,
  which sends the generation requests to the server and answers the log-likelihood
  requests that a chat endpoint cannot serve (the samples file logs their context and
  continuation);
* Inspect's ``eval`` of every ``conceptcomb/<task>``, the model ``openai-api`` at the same
  server;
* `conceptcomb.leaderboard.bundles.bundle.build_bundle` of each run, as ``conceptcomb
  submit-bundle`` makes it (one bundle per Inspect log).

The JSON holds, per task: lm-eval's task config (as its results record it, less the
model's arguments and the YAML's path) and ``task_hashes`` entry, and per item its doc, its
messages (each request's chat history as the runner received it; a log-likelihood
request's continuation) and the hashes it logs (``doc_hash``, ``prompt_hash``,
``target_hash``); Inspect's task (version, arguments, dataset, scorers...) and per sample
its input, target, metadata and the messages of each model call (the body its provider
sent); the server's bodies per framework; and per task what a bundle records (prompt
hashes, datasets, judge prompt hash, per-item evidence). Judges are off
(``CONCEPTCOMB_JUDGE=off``); the data is what the environment names
(``CONCEPTCOMB_DATA_DIR``; CGGC's packaged dataset).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conceptcomb.testing.model_server import ModelServer

MODEL = "loopback"  # the model's name in both frameworks' requests
RUNNER = "conceptcomb-loopback-chat"  # lm-eval's --model name of `LoopbackChat`
LOGPROBS = {"Yes": -0.5, "No": -1.0}  # the server's first-token alternatives, when asked
LOGLIKELIHOOD = -1.0  # what `LoopbackChat` answers for every continuation


# --- the tasks -------------------------------------------------------------------------------


def lm_eval_tasks() -> list[str]:
    """Every YAML task (leaf) of the registered benchmarks."""
    from conceptcomb.benchmarks import benchmarks

    names = []
    for benchmark in benchmarks():
        module = importlib.import_module(
            benchmark.inspect_tasks.rpartition(".")[0] + ".lm_eval_yaml"
        )
        names += [leaf.task for leaf in module.declaration().leaves]
    return names


def inspect_tasks() -> list[str]:
    """Every Inspect task of the registered benchmarks, by the name ``inspect eval`` takes."""
    from conceptcomb.benchmarks import benchmarks

    return [
        f"conceptcomb/{name}"
        for benchmark in benchmarks()
        for name in importlib.import_module(benchmark.inspect_tasks).TASKS
    ]


def _chosen(names: Iterable[str], patterns: list[str]) -> list[str]:
    return [n for n in names if any(fnmatch.fnmatch(n.split("/")[-1], p) for p in patterns)]


# --- lm-eval ---------------------------------------------------------------------------------


def register_runner() -> None:
    """`LoopbackChat` under lm-eval's model name `RUNNER`."""
    from lm_eval.api.registry import register_model
    from lm_eval.models.openai_completions import LocalChatCompletion

    class LoopbackChat(LocalChatCompletion):  # type: ignore[misc]
        """lm-eval's chat-completions runner, which also answers the log-likelihood requests
        a chat endpoint does not serve: `LOGLIKELIHOOD`, not greedy, for each (the samples
        file logs each request's context and continuation)."""

        def loglikelihood(self, requests: list[Any], **kwargs: Any) -> list[tuple[float, bool]]:
            return [(LOGLIKELIHOOD, False)] * len(requests)

    register_model(RUNNER)(LoopbackChat)


def run_lm_eval(tasks: list[str], server: ModelServer, limit: int, out: Path) -> None:
    from conceptcomb.frameworks.lm_eval_our_tasks import main

    register_runner()
    url = f"{server.base_url}/chat/completions"
    code = main(
        [
            "run",
            "--model", RUNNER,
            "--model_args", f"model={MODEL},base_url={url},num_concurrent=4,max_retries=1",
            "--tasks", ",".join(tasks),
            "--limit", str(limit),
            "--apply_chat_template",
            "--log_samples",
            "--output_path", str(out),
        ]
    )  # fmt: skip
    if code:
        raise RuntimeError(f"lm_eval ended with status {code}")


def _messages(context: Any) -> Any:
    """A chat history as the runner received it: lm-eval hands it over as JSON text in a
    ``JsonChatStr`` (a named tuple: a list of one string in the samples file)."""
    text = getattr(context, "prompt", context)
    if isinstance(text, list) and len(text) == 1:
        text = text[0]
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def lm_eval_requests(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """Each request of a logged sample: its messages, and its continuation (log-likelihood)
    or generation settings."""
    requests = []
    for arguments in (sample.get("arguments") or {}).values():
        context, second = arguments.get("arg_0"), arguments.get("arg_1")
        key = "continuation" if isinstance(second, str) else "generation"
        requests.append({"messages": _messages(context), key: second})
    return requests


def task_config(results: dict[str, Any], task: str) -> dict[str, Any]:
    """The task's config as lm-eval's results record it, less what is not the task's: the
    model's arguments that lm-eval copies into its metadata and the YAML file it was read
    from (``config_source``, lm-eval's own entry: an install's path)."""
    config = dict(results["configs"][task])
    model_args = (results.get("config") or {}).get("model_args") or {}
    config["metadata"] = {
        key: value
        for key, value in (config.get("metadata") or {}).items()
        if key not in model_args and key != "config_source"
    }
    return config


def lm_eval_record(out: Path) -> dict[str, Any]:
    """Per task: its ``task_hashes`` entry and each logged sample."""
    path = next(out.rglob("results_*.json"))
    results = json.loads(path.read_text(encoding="utf-8"))
    stamp = path.stem.removeprefix("results_")
    found: dict[str, Any] = {}
    for task in sorted(results.get("configs") or {}):
        samples = path.with_name(f"samples_{task}_{stamp}.jsonl")
        lines = samples.read_text(encoding="utf-8").splitlines()
        rows = sorted((json.loads(line) for line in lines if line), key=lambda r: r["doc_id"])
        found[task] = {
            "task_hash": (results.get("task_hashes") or {}).get(task),
            "config": task_config(results, task),
            "repeats": results["configs"][task].get("repeats") or 1,
            "items": [
                {
                    "doc_id": row["doc_id"],
                    "doc": row["doc"],
                    "target": row.get("target"),
                    "doc_hash": row.get("doc_hash"),
                    "prompt_hash": row.get("prompt_hash"),
                    "target_hash": row.get("target_hash"),
                    "requests": lm_eval_requests(row),
                }
                for row in rows
            ],
        }
    return found


# --- Inspect ---------------------------------------------------------------------------------


def run_inspect(tasks: list[str], server: ModelServer, limit: int, log_dir: Path) -> None:
    from inspect_ai import eval as inspect_eval

    os.environ["LOOPBACK_API_KEY"] = "none"  # openai-api/<service>/...: <SERVICE>_API_KEY
    logs = inspect_eval(
        tasks,
        model=f"openai-api/loopback/{MODEL}",
        model_base_url=server.base_url,
        limit=limit,
        log_dir=str(log_dir),
        display="none",
        max_tasks=4,
    )
    failed = [f"{log.eval.task}: {log.error.message if log.error else log.status}"
              for log in logs if log.status != "success"]  # fmt: skip
    if failed:
        raise RuntimeError("Inspect runs failed: " + "; ".join(failed))


# What an Inspect log records of the task itself (not of the run: ids, times, the model).
TASK_SPEC = {"task", "task_version", "task_attribs", "task_args", "dataset", "metadata",
             "solver", "solver_args", "scorers", "metrics"}  # fmt: skip


def _chat(messages: Iterable[Any]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.text} for m in messages]


def inspect_record(log_dir: Path) -> dict[str, Any]:
    """Per task: each sample, and the messages of each model call as its provider sent them."""
    from inspect_ai.log import read_eval_log, resolve_sample_attachments

    found: dict[str, Any] = {}
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        items = []
        for sample in log.samples or []:
            sample = resolve_sample_attachments(sample, "full")
            calls = [e for e in sample.events if getattr(e, "event", None) == "model"]
            items.append(
                {
                    "id": sample.id,
                    "input": sample.input if isinstance(sample.input, str)
                    else _chat(sample.input),
                    "target": sample.target,
                    "metadata": sample.metadata,
                    "requests": [
                        {
                            "messages": e.call.request.get("messages") if e.call else None,
                            "config": e.config.model_dump(exclude_none=True),
                        }
                        for e in calls
                    ],
                }
            )  # fmt: skip
        spec = log.eval.model_dump(mode="json", include=TASK_SPEC)
        found[log.eval.task] = {"spec": spec, "items": sorted(items, key=lambda i: str(i["id"]))}
    return found


# --- bundles ---------------------------------------------------------------------------------


def bundle_record(path: Path) -> dict[str, Any]:
    """Per task, what the bundle of the run in ``path`` records that names the task, its
    data and its prompts."""
    from conceptcomb.common.evidence import decode
    from conceptcomb.leaderboard.bundles.bundle import build_bundle
    from conceptcomb.leaderboard.report.runs import read_runs

    found: dict[str, Any] = {}
    for run in read_runs([path]):
        bundle = build_bundle(run)
        for task in bundle["tasks"]:
            evidence = task["evidence"]
            items = decode(evidence, task["task"]) if "data" in evidence else evidence
            found[task["task"]] = {
                "version": task["version"],
                "options": task["options"],
                "datasets": task["datasets"],
                "prompts": task["prompts"],
                "judge_prompt_sha256": (task["judge"] or {}).get("prompt_sha256"),
                "evidence": items,
            }
    return found


def inspect_bundles(log_dir: Path) -> dict[str, Any]:
    """`bundle_record` of each Inspect log on its own, by the name the task was run as:
    ``conceptcomb/cggc`` runs one of the named CGGC tasks, and in one bundle the two runs
    of that task would be merged."""
    from inspect_ai.log import read_eval_log

    found = {}
    for path in sorted(log_dir.glob("*.eval")):
        (record,) = bundle_record(path).values()
        found[read_eval_log(str(path), header_only=True).eval.task] = record
    return found


# --- the whole capture -----------------------------------------------------------------------


def _bodies(server: ModelServer) -> list[Any]:
    """The messages of each request the server got since the last call, in a fixed order."""
    return sorted((body.get("messages") for body in server.take_bodies()), key=json.dumps)


def capture(limit: int, lm_names: list[str], inspect_names: list[str], work: Path) -> dict:
    """Both frameworks' runs of these tasks, and what was sent and recorded."""
    os.environ["CONCEPTCOMB_JUDGE"] = "off"
    result: dict[str, Any] = {"limit": limit, "lm_eval": {}, "inspect": {}}
    result["bundles"] = {"lm_eval": {}, "inspect": {}}
    with ModelServer({}, default="", top_logprobs=LOGPROBS, record=True) as server:
        if lm_names:
            run_lm_eval(lm_names, server, limit, work / "lm_eval")
        result["wire_lm_eval"] = _bodies(server)
        if inspect_names:
            run_inspect(inspect_names, server, limit, work / "inspect")
        result["wire_inspect"] = _bodies(server)
    if lm_names:
        result["lm_eval"] = lm_eval_record(work / "lm_eval")
        result["bundles"]["lm_eval"] = bundle_record(work / "lm_eval")
    if inspect_names:
        result["inspect"] = inspect_record(work / "inspect")
        result["bundles"]["inspect"] = inspect_bundles(work / "inspect")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conceptcomb.testing.sent_prompts", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    parser.add_argument("--limit", type=int, default=3, help="items per task (3)")
    parser.add_argument("--tasks", nargs="+", default=["*"], help="globs of task names (all)")
    parser.add_argument("--keep", type=Path, help="keep the runs' outputs in this new folder")
    args = parser.parse_args(argv)
    lm_names, inspect_names = (
        _chosen(lm_eval_tasks(), args.tasks),
        _chosen(inspect_tasks(), args.tasks),
    )
    if not lm_names and not inspect_names:
        parser.error(f"--tasks {' '.join(args.tasks)}: no task of this package matches")
    if args.keep and args.keep.exists():
        parser.error(f"--keep {args.keep}: already exists; name a new folder")
    if args.keep:
        args.keep.mkdir(parents=True)
        result = capture(args.limit, lm_names, inspect_names, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="sent-prompts-") as work:
            result = capture(args.limit, lm_names, inspect_names, Path(work))
    text = json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False, default=str)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

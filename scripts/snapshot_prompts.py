"""Snapshot what every task sends a model, in both frameworks, to compare across a refactor.

    python scripts/snapshot_prompts.py --out before.json        # on the old commit
    python scripts/snapshot_prompts.py --out after.json         # on the new one
    python scripts/snapshot_prompts.py --compare before.json after.json

For every lm-eval task of the package (each YAML leaf under ``task_yaml/``, found by lm-eval's
own ``TaskManager``) and every Inspect task ``conceptcomb/<name>`` (found through Inspect's
registry after loading the ``inspect_ai`` entry points), the first ``--items`` items as the
framework renders them:

* lm-eval: the requests ``build_all_requests`` makes (what ``lm_eval`` hands the model),
  once plain and once with ``--apply_chat_template`` (few-shot as multi-turn, lm-eval's
  default with a chat template; the chat history is recorded as the list of messages a
  model's chat template receives), each doc, its target (and choices), and the task's
  resolved config (metrics, version, generation settings, the ``!function`` targets);
* Inspect: each sample's input, target and metadata and every model call the solver chain
  makes up to and including generation (an eval with ``mockllm/model``, scoring off), so the
  demonstrations the few-shot solver inserts and the spreading-activation calls are in it;
  the task's version, generation config, scorers, solver plan and registry entry.

Plus the prompt templates of every benchmark (`Benchmark.templates`, `judge_templates`) and
the judge and verifier requests as sent on the wire for one fixed item per judged task kind,
in both frameworks (the item's gold answer as the reply, a loopback server answering).

The data: ``--shared-data`` (default ``../shared/data`` beside the checkout, or
``CONCEPTCOMB_TEST_DATA``) for CCPT and McRae; CGGC reads its packaged dataset; AbsPyramid's
hub files are not available offline, so its tasks read the test fixtures
(``tests/fixtures/abspyramid``) with the 30 real detection records of
``<shared-data>/abspyramid/sample_detection.jsonl`` put first, as the tests do. The JSON says
which source each benchmark read (``meta.data``). Judges are off (``judge=off``) except in
the judge section. Everything runs offline, in fresh caches.

``--compare`` prints the first differences (``--max``) between two snapshots, section by
section; ``meta`` (versions, timings, paths) is not compared. Exit status 1 when they differ.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import importlib.metadata
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package is imported after prepare_environment
    from conceptcomb.testing.judge_server import LoopbackServer

REPO = Path(__file__).resolve().parents[1]
ABSPYRAMID_FIXTURES = REPO / "tests" / "fixtures" / "abspyramid"
DETECTION = "AbsPyramid_Detection"
LM_EVAL_FEWSHOT_SEED = 1234  # lm-eval's default --fewshot_random_seed
JUDGED_TASKS = ("ccpt_pi_emergent", "ccpt_pi_canceled", "ccpt_npc_emergent", "cggc_ood_verified")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


# --- the environment -------------------------------------------------------------------------


def default_shared_data() -> Path:
    return Path(os.environ.get("CONCEPTCOMB_TEST_DATA", REPO.parent / "shared" / "data"))


def abspyramid_folder(target: Path, shared: Path) -> Path:
    """The tests' AbsPyramid folder (hub layout): the fixtures, the 30 real detection
    records first in each detection test file (tests/abspyramid/conftest.py)."""
    shutil.copytree(ABSPYRAMID_FIXTURES, target)
    sample = shared / "abspyramid" / "sample_detection.jsonl"
    real = []
    for line in sample.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            real.append({key: record[key] for key in ("event", "concept", "label", "type")})

    def prepend(path: Path, records: list[dict]) -> None:
        lines = "".join(json.dumps(record) + "\n" for record in records)
        path.write_text(lines + path.read_text(encoding="utf-8"), encoding="utf-8")

    for kind in ("noun", "verb", "event"):
        prepend(target / DETECTION / f"{kind}_dataset" / "test.json",
                [r for r in real if r["type"] == kind])  # fmt: skip
    prepend(target / DETECTION / "merged_dataset" / "test.json", real)
    return target


def prepare_environment(work: Path, shared: Path) -> dict[str, str]:
    """A data root (links to CCPT and McRae, AbsPyramid's fixture folder; no CGGC: the
    packaged dataset), empty caches, offline; before anything of the package is imported."""
    root = work / "data"
    root.mkdir()
    sources = {}
    for key in ("ccpt", "mcrae"):
        if not (shared / key).is_dir():
            raise SystemExit(f"{shared / key}: missing; pass --shared-data DIR (../shared/data).")
        (root / key).symlink_to((shared / key).resolve())
        sources[key] = f"shared data ({key}/)"
    abspyramid_folder(root / "abspyramid", shared)
    sources["abspyramid"] = (
        "test fixtures: tests/fixtures/abspyramid + shared abspyramid/sample_detection.jsonl "
        "(the hub files are not available offline)"
    )
    sources["cggc"] = "the packaged dataset (src/conceptcomb/cggc/packaged_data)"
    for key in [k for k in os.environ if k.startswith("CONCEPTCOMB_JUDGE")]:
        del os.environ[key]
    os.environ.update(
        {
            "CONCEPTCOMB_DATA_DIR": str(root),
            "CONCEPTCOMB_CACHE_DIR": str(work / "cache"),
            "CONCEPTCOMB_JUDGE": "off",
            "TIKTOKEN_CACHE_DIR": str(work / "tiktoken"),
            "INSPECT_LOG_DIR": str(work / "inspect-logs"),
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "INSPECT_DISPLAY": "none",
        }
    )
    return sources


# --- JSON-safe values --------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A JSON-safe, machine-independent copy: callables by dotted name, no memory addresses,
    no absolute paths of this checkout."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [plain(v) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, set | frozenset) else items
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value.replace(str(REPO), "<repo>")
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(exclude_none=True))
    if isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", None) or type(value).__module__
        name = getattr(value, "__qualname__", None) or type(value).__qualname__
        return f"<callable {module}.{name}>"
    return _ADDRESS.sub("", repr(value))


def message(msg: Any) -> dict[str, Any]:
    """An Inspect chat message without its random id."""
    data = msg.model_dump(exclude_none=True)
    data.pop("id", None)
    return plain(data)


# --- lm-eval ---------------------------------------------------------------------------------

CONFIG_FIELDS = (
    "task", "tag", "output_type", "custom_dataset", "dataset_path", "dataset_name",
    "dataset_kwargs", "test_split", "validation_split", "training_split", "fewshot_split",
    "process_docs", "doc_to_text", "doc_to_target", "doc_to_choice", "process_results",
    "description", "target_delimiter", "fewshot_delimiter", "fewshot_config", "num_fewshot",
    "metric_list", "generation_kwargs", "repeats", "filter_list", "gen_prefix", "metadata",
)  # fmt: skip


def chat_template(history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """What a model's chat template receives (as JSON): lm-eval's messages, in order."""
    return json.dumps({"messages": history, "add_generation_prompt": add_generation_prompt})


def lm_eval_manager() -> Any:
    from lm_eval.tasks import TaskManager

    from conceptcomb.common.lm_eval_paths import lm_eval_has_our_tasks, tasks_path

    include = None if lm_eval_has_our_tasks() else str(tasks_path())
    return TaskManager(include_path=include)


def our_lm_eval_entries(manager: Any) -> tuple[list[str], dict[str, Any]]:
    """Our task names, and our groups and tags with their members, from lm-eval's index."""
    from conceptcomb.common.lm_eval_paths import tasks_path

    roots = (str(tasks_path()), os.sep + os.path.join("lm_eval", "tasks", "conceptcomb") + os.sep)
    tasks, groups, tags = [], {}, {}
    for name, entry in sorted(manager.task_index.items()):
        kind = getattr(entry.kind, "name", str(entry.kind))
        if kind == "TAG":
            tags[name] = sorted(entry.tags or ())
            continue
        if not any(root in str(entry.yaml_path or "") for root in roots):
            continue
        if kind in ("TASK", "PY_TASK"):  # PY_TASK: a YAML task with its own ``class``
            tasks.append(name)
        else:
            keep = ("group", "task", "aggregate_metric_list", "metadata", "group_alias")
            groups[f"{kind.lower()}:{name}"] = plain(
                {k: v for k, v in (entry.cfg or {}).items() if k in keep}
            )
    for name, members in tags.items():
        if set(members) & set(tasks):
            groups[f"tag:{name}"] = members
    return tasks, groups


def requests_by_doc(task: Any, items: int, chat: bool) -> dict[int, list[dict[str, Any]]]:
    from lm_eval.utils import hash_string

    task.build_all_requests(
        limit=items,
        rank=0,
        world_size=1,
        apply_chat_template=chat,
        fewshot_as_multiturn=chat,
        chat_template=chat_template if chat else None,
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for instance in task.instances:
        arguments = list(instance.arguments)
        if chat and arguments and isinstance(arguments[0], str):
            with suppress(json.JSONDecodeError):
                arguments[0] = json.loads(arguments[0])
        found.setdefault(instance.doc_id, []).append(
            {
                "prompt_hash": hash_string(instance.arguments[0])
                if isinstance(instance.arguments[0], str)
                else None,
                "request_type": instance.request_type,
                "arguments": plain(arguments),
                "repeats": instance.repeats,
                "idx": instance.idx,
            }
        )
    return found


def lm_eval_hashes(doc: dict[str, Any], target: Any) -> dict[str, str]:
    """The doc's and target's hashes as lm-eval logs them per sample (``--log_samples``; with
    each request's ``prompt_hash`` they make ``task_hashes``, which a leaderboard bundle
    records as ``framework_task_hash``): the doc's key order counts. No doc names a path of
    the install (tests/frameworks/test_same_task_everywhere.py), so it is hashed as is."""
    from lm_eval.utils import handle_non_serializable, hash_string

    text = json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False)
    return {"doc_hash": hash_string(text), "target_hash": hash_string(str(target))}


def lm_eval_task(manager: Any, name: str, items: int) -> dict[str, Any]:
    task = manager.load([name])["tasks"][name]
    task.set_fewshot_seed(seed=LM_EVAL_FEWSHOT_SEED)  # as lm_eval's evaluator does
    config = task.config
    record: dict[str, Any] = {
        "config": {f: plain(getattr(config, f, None)) for f in CONFIG_FIELDS},
        "n_docs": len(task.eval_docs),
    }
    docs = list(itertools.islice(task.eval_docs, items))
    plain_requests = requests_by_doc(task, items, chat=False)
    chat_requests = requests_by_doc(task, items, chat=True)
    entries = []
    for doc_id, doc in enumerate(docs):
        target = task.doc_to_target(doc)
        requests, chat = plain_requests.get(doc_id, []), chat_requests.get(doc_id, [])
        entry = {
            "doc_id": doc_id,
            "item_id": doc.get("item_id", doc.get("id")),
            "doc": plain(doc),
            "doc_keys": list(doc),  # in order: lm-eval's doc_hash depends on it
            "hashes": lm_eval_hashes(doc, target),
            "target": plain(target),
            "requests": requests,
            "chat_requests": chat,
        }
        if config.output_type == "multiple_choice":
            entry["choices"] = plain(task.doc_to_choice(doc))
        entries.append(entry)
    record["items"] = entries
    return record


def snapshot_lm_eval(
    items: int, wanted: Callable[[str], bool]
) -> tuple[dict[str, Any], dict[str, Any]]:
    manager = lm_eval_manager()
    names, groups = our_lm_eval_entries(manager)
    tasks = {}
    for name in (n for n in names if wanted(n)):
        started = time.perf_counter()
        try:
            tasks[name] = lm_eval_task(manager, name, items)
        except Exception as err:  # recorded: a task that cannot be rendered is a finding
            tasks[name] = {"error": f"{type(err).__name__}: {err}"}
        log(f"lm-eval {name}: {time.perf_counter() - started:.1f}s")
    return tasks, groups


# --- Inspect ---------------------------------------------------------------------------------


def inspect_task_functions() -> dict[str, Any]:
    """Every ``conceptcomb/<name>`` task function, found as Inspect finds package tasks."""
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai._util.registry import registry_find, registry_info

    ensure_entry_points()
    found = registry_find(lambda info: info.type == "task")
    return {
        registry_info(fn).name: fn
        for fn in found
        if registry_info(fn).name.startswith("conceptcomb/")
    }


def registry_entry(fn: Any) -> dict[str, Any]:
    import inspect as pyinspect

    from inspect_ai._util.registry import registry_info

    info = registry_info(fn)
    return {
        "name": info.name,
        "docstring": pyinspect.getdoc(fn),
        "params": plain(info.metadata.get("params")),
        "signature": str(pyinspect.signature(fn)),
    }


def build_inspect_task(fn: Any) -> tuple[Any, dict[str, Any]]:
    """The task with its judge off where it has one (as ``-T judge=off``)."""
    from conceptcomb.common.errors import ConfigError

    try:
        return fn(judge="off"), {"judge": "off"}
    except (ConfigError, TypeError) as err:
        if "judge" not in str(err):
            raise
        return fn(), {}


def model_calls(sample: Any) -> list[dict[str, Any]]:
    calls = []
    for event in sample.events:
        if getattr(event, "event", None) != "model":
            continue
        calls.append(
            {
                "role": getattr(event, "role", None),
                "input": [message(m) for m in event.input],
                "tools": plain([t.model_dump(exclude_none=True) for t in event.tools]),
                "config": plain(event.config.model_dump(exclude_none=True)),
            }
        )
    return calls


def inspect_record(task: Any, log_: Any, args: dict[str, Any], items: int) -> dict[str, Any]:
    from inspect_ai.log import resolve_sample_attachments

    # the log keeps long texts as attachments: the model calls' inputs in full
    samples = {(s.id, s.epoch): resolve_sample_attachments(s, "full") for s in log_.samples or []}
    first = list(task.dataset)[:items]
    entries = []
    for sample in first:
        logged = samples.get((sample.id, 1))
        entry: dict[str, Any] = {
            "id": sample.id,
            "input": sample.input if isinstance(sample.input, str)
            else [message(m) for m in sample.input],
            "target": plain(sample.target),
            "metadata": plain(sample.metadata),
            "metadata_keys": list(sample.metadata or {}),
        }  # fmt: skip
        if logged is None:
            entry["error"] = "not in the log"
        else:
            entry["model_calls"] = model_calls(logged)
            entry["final_metadata"] = plain(logged.metadata)
            if logged.error is not None:
                entry["error"] = _ADDRESS.sub("", logged.error.message)
        entries.append(entry)
    plan = log_.plan
    return {
        "task_args": args,
        "version": plain(task.version),
        "metadata": plain(task.metadata),
        "config": plain(task.config.model_dump(exclude_none=True)),
        "scorers": plain([s.model_dump(exclude_none=True) for s in (log_.eval.scorers or [])]),
        "plan": plain([{"solver": s.solver, "params": s.params} for s in plan.steps]),
        "plan_config": plain(plan.config.model_dump(exclude_none=True)),
        "n_samples": len(task.dataset),
        "status": log_.status,
        "error": _ADDRESS.sub("", log_.error.message) if log_.error else None,
        "items": entries,
    }


def snapshot_inspect(
    items: int, wanted: Callable[[str], bool], log_dir: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each benchmark's tasks built (judge off) and run in one eval on mockllm, scoring off;
    one benchmark at a time (a CGGC task holds some 16,000 samples)."""
    from inspect_ai import eval as inspect_eval

    functions = inspect_task_functions()
    registry = {name: registry_entry(fn) for name, fn in sorted(functions.items())}
    tasks: dict[str, Any] = {}
    batches: dict[str, list[str]] = {}
    for name in sorted(functions):
        if wanted(name.split("/", 1)[1]):
            batches.setdefault(name.split("/", 1)[1].split("_", 1)[0], []).append(name)
    for names in batches.values():
        built: dict[str, tuple[Any, dict[str, Any]]] = {}
        for name in names:
            started = time.perf_counter()
            try:
                built[name] = build_inspect_task(functions[name])
            except Exception as err:
                tasks[name] = {"error": f"{type(err).__name__}: {err}"}
            log(f"inspect build {name}: {time.perf_counter() - started:.1f}s")
        started = time.perf_counter()
        logs = inspect_eval(
            [task for task, _ in built.values()],
            model="mockllm/model",
            limit=items,
            score=False,
            display="none",
            log_dir=str(log_dir),
            max_tasks=4,
            fail_on_error=False,
        )
        log(f"inspect eval of {len(built)} tasks: {time.perf_counter() - started:.1f}s")
        for (name, (task, args)), log_ in zip(built.items(), logs, strict=True):
            tasks[name] = inspect_record(task, log_, args, items)
    return dict(sorted(tasks.items())), registry


# --- judges on the wire --------------------------------------------------------------------


@contextmanager
def recorder() -> Iterator[LoopbackServer]:
    """The loopback judge (`conceptcomb.testing.judge_server`), keeping each request body: it
    answers the relevance prompt with a rating and the verification prompt with a verdict."""
    from conceptcomb.testing.judge_server import LoopbackServer

    with LoopbackServer(record=True) as server:
        yield server


def taken(server: LoopbackServer) -> list[dict[str, Any]]:
    """The requests recorded since the last call, in a fixed order (they run concurrently)."""
    bodies = [{"path": "/v1/chat/completions", "body": body} for body in server.take_bodies()]
    return sorted(plain(bodies), key=lambda b: json.dumps(b, sort_keys=True))


def gold_reply(doc: dict[str, Any]) -> str:
    """The item's own answer, as a model would write it (each judged kind parses it)."""
    task = str(doc.get("task", ""))
    if task.startswith("ccpt_npc"):
        return json.dumps({"combination": doc["combination"], "modifier": doc["modifier"]})
    if task.startswith("ccpt_"):
        return json.dumps({"property": doc["property"]})
    return str(doc["target"])


@contextmanager
def judge_at(url: str) -> Iterator[None]:
    """``CONCEPTCOMB_JUDGE*`` naming the recorder, uncached (both frameworks read them)."""
    values = {
        "CONCEPTCOMB_JUDGE": "openai",
        "CONCEPTCOMB_JUDGE_BASE_URL": url,
        "CONCEPTCOMB_JUDGE_CACHE": "off",
        "CONCEPTCOMB_JUDGE_MODEL": "gpt-4o",
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def lm_eval_judge_requests(server: LoopbackServer, manager: Any, name: str) -> dict[str, Any]:
    """lm-eval's path: the first doc's request answered by its gold reply, the task's
    filters applied (the judge or verifier filter asks the recorder)."""
    task = manager.load([name])["tasks"][name]
    task.set_fewshot_seed(seed=LM_EVAL_FEWSHOT_SEED)
    task.build_all_requests(limit=1, rank=0, world_size=1)
    doc = next(iter(task.eval_docs))
    reply = gold_reply(doc)
    for instance in task.instances:
        instance.resps = [reply] * instance.repeats
    taken(server)
    task.apply_filters()
    return {"reply": reply, "requests": taken(server)}


def inspect_judge_requests(
    server: LoopbackServer, fn: Any, name: str, log_dir: Path
) -> dict[str, Any]:
    """Inspect's path: the task (judge options from ``CONCEPTCOMB_JUDGE*``) on its first
    sample, mockllm answering with the gold reply, scored by the grader at the recorder."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    task = fn()
    sample = next(iter(task.dataset))
    reply = gold_reply({**(sample.metadata or {}), "task": name, "target": sample.target})
    model = get_model(
        "mockllm/model",
        custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=reply)],
    )
    taken(server)
    log_ = inspect_eval(task, model=model, limit=1, display="none", log_dir=str(log_dir))[0]
    return {
        "reply": reply,
        "status": log_.status,
        "error": log_.error.message if log_.error else None,
        "requests": taken(server),
    }


def snapshot_judges(
    manager: Any, functions: dict[str, Any], log_dir: Path, wanted: Callable[[str], bool]
) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with recorder() as server, judge_at(server.base_url):
        for name in filter(wanted, JUDGED_TASKS):
            fn = functions[f"conceptcomb/{name}"]
            runs: dict[str, Callable[[], dict[str, Any]]] = {
                "lm_eval": partial(lm_eval_judge_requests, server, manager, name),
                "inspect": partial(inspect_judge_requests, server, fn, name, log_dir),
            }
            entry: dict[str, Any] = {}
            for framework, run in runs.items():
                try:
                    entry[framework] = run()
                except Exception as err:  # recorded, like a task that cannot be rendered
                    entry[framework] = {"error": f"{type(err).__name__}: {err}"}
                    taken(server)
            found[name] = plain(entry)
    return found


def snapshot_templates() -> dict[str, Any]:
    from conceptcomb.benchmarks import benchmarks

    return {
        b.key: {"templates": b.templates(), "judge_templates": b.judge_templates()}
        for b in benchmarks()
    }


def declared_tasks() -> dict[str, Any]:
    from conceptcomb.benchmarks import benchmarks

    return {
        name: {"benchmark": b.key, "metrics": [plain(vars(info)) for info in infos]}
        for b in benchmarks()
        for name, infos in b.tasks().items()
    }


# --- the snapshot ----------------------------------------------------------------------------


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def matches(patterns: list[str], name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def snapshot(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="snapshot-prompts-"))
    try:
        sources = prepare_environment(work, args.shared_data)
        wanted = partial(matches, args.tasks)
        lm_eval_tasks, groups = snapshot_lm_eval(args.items, wanted)
        inspect_tasks, registry = snapshot_inspect(args.items, wanted, work / "inspect-logs")
        judges = {}
        if not args.no_judges:
            judges = snapshot_judges(
                lm_eval_manager(), inspect_task_functions(), work / "inspect-judge-logs", wanted
            )
        declared = declared_tasks()
        tasks: dict[str, Any] = {}
        for name in sorted(
            set(declared) | set(lm_eval_tasks) | {n.split("/", 1)[1] for n in inspect_tasks}
        ):
            if not wanted(name):
                continue
            entry = {"declared": declared.get(name)}
            if name in lm_eval_tasks:
                entry["lm_eval"] = lm_eval_tasks[name]
            if f"conceptcomb/{name}" in inspect_tasks:
                entry["inspect"] = inspect_tasks[f"conceptcomb/{name}"]
            tasks[name] = entry
        return {
            "meta": {
                "items_per_task": args.items,
                "data": sources,
                "judges": "off (judge=off / CONCEPTCOMB_JUDGE=off) except in judge_requests",
                "versions": {
                    p: importlib.metadata.version(p)
                    for p in ("lm-eval", "inspect-ai", "conceptcomb")
                },
                "counts": {
                    "lm_eval_tasks": len(lm_eval_tasks),
                    "inspect_tasks": len(inspect_tasks),
                    "lm_eval_items": sum(len(t.get("items", [])) for t in lm_eval_tasks.values()),
                    "inspect_items": sum(len(t.get("items", [])) for t in inspect_tasks.values()),
                    "errors": sorted(
                        [f"lm_eval:{n}" for n, t in lm_eval_tasks.items() if t.get("error")]
                        + [f"inspect:{n}" for n, t in inspect_tasks.items() if t.get("error")]
                    ),
                },
                "seconds": round(time.perf_counter() - started, 1),
            },
            "tasks": tasks,
            "lm_eval_groups": groups,
            "inspect_registry": registry,
            "templates": snapshot_templates(),
            "judge_requests": judges,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- comparing -------------------------------------------------------------------------------


def differences(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            where = f"{path}/{key}"
            if key not in old:
                yield where, "<absent>", new[key]
            elif key not in new:
                yield where, old[key], "<absent>"
            else:
                yield from differences(old[key], new[key], where)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from differences(a, b, f"{path}[{index}]")
    elif old != new:
        yield path, old, new


def show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
    return text if len(text) < 400 else text[:400] + f"... ({len(text)} characters)"


def compare(old_path: Path, new_path: Path, limit: int, patterns: list[str]) -> int:
    old = json.loads(old_path.read_text(encoding="utf-8"))
    new = json.loads(new_path.read_text(encoding="utf-8"))
    for snapshot_ in (old, new):
        snapshot_.pop("meta", None)
        if patterns != ["*"]:  # those tasks only (as a snapshot made with --tasks holds)
            tasks = snapshot_.get("tasks", {})
            snapshot_.clear()
            snapshot_["tasks"] = {n: t for n, t in tasks.items() if matches(patterns, n)}
    found = list(differences(old, new))
    if not found:
        print(f"identical: {old_path} and {new_path} (meta aside)")
        return 0
    sections: dict[str, int] = {}
    for path, _, _ in found:
        parts = path.split("/")
        key = "/".join(parts[1:4]) if parts[1] == "tasks" else parts[1]
        key = re.sub(r"\[\d+\]", "", key)
        sections[key] = sections.get(key, 0) + 1
    print(f"{len(found)} differences; by place:")
    for key, count in sorted(sections.items()):
        print(f"  {count:5d}  {key}")
    for path, a, b in found[:limit]:
        print(f"\n--- {path}")
        if isinstance(a, str) and isinstance(b, str):
            diff = difflib.unified_diff(a.splitlines(), b.splitlines(), "old", "new", lineterm="")
            print("\n".join(list(diff)[:30]))
        else:
            print(f"old: {show(a)}\nnew: {show(b)}")
    if len(found) > limit:
        print(f"\n... {len(found) - limit} more (--max)")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the snapshot here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    parser.add_argument("--items", type=int, default=3, help="items per task (3)")
    parser.add_argument("--shared-data", type=Path, default=default_shared_data())
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=["*"],
        help="only tasks matching these globs (all); with --compare, compare only those tasks",
    )
    parser.add_argument("--no-judges", action="store_true", help="skip the judge requests")
    parser.add_argument("--max", type=int, default=20, help="differences shown by --compare")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare, args.max, args.tasks)
    if not args.out:
        parser.error("give --out FILE or --compare OLD NEW")
    result = snapshot(args)
    text = json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    args.out.write_text(text, encoding="utf-8")
    counts = result["meta"]["counts"]
    log(
        f"{args.out}: {counts['lm_eval_tasks']} lm-eval tasks ({counts['lm_eval_items']} items), "
        f"{counts['inspect_tasks']} Inspect tasks ({counts['inspect_items']} items), "
        f"{len(counts['errors'])} errors, {result['meta']['seconds']}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

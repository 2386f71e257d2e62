"""``conceptcomb validate-bundle FILE``: schema, integrity, data checksums, no secrets, and the
per-item evidence (`conceptcomb.leaderboard.checks.verify`): each task verified, partial or
unverified. Bundles come from anyone: the file and its evidence are read within the limits of
`conceptcomb.leaderboard.bundles.safe_json`, a bundle holds each task once (so at most every
task of this package), and what is wrong is one line per problem (at most `MAX_PROBLEMS`
lines)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import benchmarks, evidence_adapter, known_tasks
from conceptcomb.common.evidence import ENCODING, EVIDENCE_FORMAT
from conceptcomb.leaderboard.bundles.bundle import SCHEMA_IDS, content_sha256, find_secrets
from conceptcomb.leaderboard.bundles.datasets import check_record
from conceptcomb.leaderboard.bundles.safe_json import (
    MAX_DEPTH,
    EvidenceBudget,
    Refused,
    clip,
    read_bundle_json,
)
from conceptcomb.leaderboard.checks.verify import (
    UNVERIFIED,
    TaskCheck,
    check_task,
    printable,
    with_outcome,
)

# Problems listed of one bundle (a hostile one may have millions): the rest are counted;
# of one kind (schema, secrets): the rest are not looked for.
MAX_PROBLEMS = 1000
MAX_OF_A_KIND = 100

_NUMBER_OR_NULL = {"type": ["number", "null"]}
_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_SHA256_OR_NULL = {"anyOf": [_SHA256, {"type": "null"}]}

DATASET_SCHEMA = {
    "type": "object",
    "required": ["kind", "key", "files"],
    "properties": {
        "kind": {"enum": ["pinned", "hub", "built"]},
        "key": {"type": "string"},
        "repository": {"type": "string"},
        "revision": {"type": "string"},
        "files": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["sha256", "checked_locally"],
                "properties": {
                    "sha256": _SHA256_OR_NULL,
                    "checked_locally": {"type": "boolean"},
                },
            },
        },
    },
}

EVIDENCE_SCHEMA = {
    "oneOf": [
        {
            "type": "object",
            "required": ["missing"],
            "properties": {"missing": {"type": "string"}},
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["format", "items", "encoding", "sha256", "data"],
            "properties": {
                "format": {"const": EVIDENCE_FORMAT},
                "items": {"type": "integer", "minimum": 0},
                "encoding": {"const": ENCODING},
                "sha256": _SHA256,
                "data": {"type": "string"},
            },
            "additionalProperties": False,
        },
    ]
}

TASK_SCHEMA = {
    "type": "object",
    "required": ["task", "benchmark", "version", "items", "datasets", "prompts", "metrics"],
    "properties": {
        "task": {"type": "string", "minLength": 1},
        "benchmark": {"enum": [b.key for b in benchmarks()]},
        "version": {"type": ["string", "null"]},
        "items": {"type": ["integer", "null"], "minimum": 0},
        "items_total": {"type": ["integer", "null"], "minimum": 0},
        "complete": {"type": "boolean"},
        "options": {"type": "object"},
        "datasets": {"type": "array", "items": DATASET_SCHEMA},
        "prompts": {
            "type": "object",
            "required": ["templates_sha256", "sent_sha256"],
            "properties": {"templates_sha256": _SHA256, "sent_sha256": _SHA256_OR_NULL},
        },
        "judge": {"type": ["object", "null"]},
        "evidence": EVIDENCE_SCHEMA,
        "metrics": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["value", "stderr"],
                "properties": {"value": _NUMBER_OR_NULL, "stderr": _NUMBER_OR_NULL},
            },
        },
    },
}

BUNDLE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": [
        "schema",
        "created",
        "conceptcomb_version",
        "framework",
        "model",
        "tasks",
        "sources",
        "content_sha256",
    ],
    "properties": {
        "schema": {"enum": list(SCHEMA_IDS)},
        "created": {"type": "string"},
        "conceptcomb_version": {"type": "string"},
        "python": {"type": "string"},
        "framework": {
            "type": "object",
            "required": ["name", "version"],
            "properties": {
                "name": {"enum": ["lm-eval", "inspect", "conceptcomb score"]},
                "version": {"type": ["string", "null"]},
            },
        },
        "model": {
            "type": "object",
            "required": ["name", "provider", "args"],
            "properties": {"name": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
        },
        "tasks": {"type": "array", "minItems": 1, "items": TASK_SCHEMA},
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["file", "sha256"],
                "properties": {"file": {"type": "string"}, "sha256": _SHA256},
            },
        },
        "generation": {"type": "object"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "content_sha256": _SHA256,
    },
}


def _schema_errors(bundle: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(the field's path, the problem) of the schema errors, in the bundle's order: the
    first `MAX_PROBLEMS` found, and a line saying there are more."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(BUNDLE_SCHEMA)
    found = list(itertools.islice(validator.iter_errors(bundle), MAX_OF_A_KIND + 1))
    errors = []
    for error in sorted(found[:MAX_OF_A_KIND], key=lambda e: list(e.absolute_path)):
        path = tuple(error.absolute_path)
        where = "bundle" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        errors.append((path, f"schema: {where}: {clip(error.message)}"))
    if len(found) > MAX_OF_A_KIND:
        errors.append(((), f"schema: more problems than these {MAX_OF_A_KIND}, not listed"))
    return errors


def _secret_problems(value: Any, where: str) -> list[str]:
    found = find_secrets(value, where, MAX_OF_A_KIND + 1)
    problems = [f"secret: {finding}" for finding in found[:MAX_OF_A_KIND]]
    if len(found) > MAX_OF_A_KIND:
        problems.append(f"secret: more than these {MAX_OF_A_KIND} in {where}, not listed")
    return problems


@dataclass
class BundleCheck:
    problems: list[str] = field(default_factory=list)  # empty: the bundle is valid
    tasks: list[TaskCheck] = field(default_factory=list)
    # When the verdict was made, where it is one remembered
    # (`conceptcomb.leaderboard.checks.verdicts`); "": checked now.
    remembered: str = ""

    @property
    def valid(self) -> bool:
        return not self.problems


def max_tasks() -> int:
    """A bundle holds each task at most once: at most every task this package has."""
    return len(known_tasks())


def check_bundle(bundle: Any, data_dir: str | None = None, content: bool = True) -> BundleCheck:
    """Every problem found, and each task's verification state. In an invalid bundle no
    task is verified: each task's line says what was checked and what failed. ``content``
    False: its ``content_sha256`` is not checked (a bundle put together again from EEE files,
    whose evidence is packed anew: they are checked against their own hash)."""
    try:
        check = _check_bundle(bundle, data_dir, content)
    except RecursionError:  # a bundle made in memory, nested deeper than any file may be
        check = BundleCheck([f"limit: the bundle is nested deeper than {MAX_DEPTH} levels"])
    except MemoryError:
        check = BundleCheck(["limit: checking the bundle ran out of memory"])
    problems = [printable(clip(problem, 1000)) for problem in check.problems[:MAX_PROBLEMS]]
    if len(check.problems) > MAX_PROBLEMS:
        more = len(check.problems) - MAX_PROBLEMS
        problems.append(f"… and {more:,} more problems, not listed")
    check.problems = problems
    return check


def _check_bundle(bundle: Any, data_dir: str | None, content: bool = True) -> BundleCheck:
    _start_tools(bundle)
    schema = _schema_errors(bundle)
    check = BundleCheck(_secret_problems(bundle, "bundle"))
    check.problems += [problem for _, problem in schema]
    if not isinstance(bundle, dict):
        return check
    if content:
        check.problems += _checksum_problems(bundle)
    tasks = bundle.get("tasks")
    if not isinstance(tasks, list):
        return check
    first, repeated = _repeated_tasks(tasks)
    check.problems += repeated
    if len(tasks) > max_tasks():
        check.problems.append(
            f"limit: bundle.tasks holds {len(tasks):,} tasks, more than the {max_tasks()} "
            "tasks of this package (a bundle holds each task at most once): none was checked"
        )
        return check
    misshapen = _misshapen(tasks)
    budget = EvidenceBudget()
    checked = []
    found = list(check.problems)  # the problems so far, which name the task they concern
    for index, task in enumerate(tasks):
        if index not in first:
            continue  # a task recorded again: its first record is checked
        where = f"bundle.tasks[{index}]"
        own = [problem for problem in found if _concerns(problem, where)]
        if index in misshapen:
            task_check = TaskCheck(
                _name(task, where), UNVERIFIED, "not checked, its record is malformed"
            )
        else:
            task_check, problems = _check_task(task, where, data_dir, budget)
            check.problems += problems
            own += problems
        checked.append((task_check, own))
    if check.problems:  # no task of an invalid bundle is verified
        check.tasks = [with_outcome(task_check, own) for task_check, own in checked]
    else:
        check.tasks = [task_check for task_check, _ in checked]
    return check


def _start_tools(bundle: Any) -> None:
    """Set going the slow tools that checking the tasks' evidence will wait on
    (`conceptcomb.common.evidence.StartsEarly`: METEOR's JVM), before anything else."""
    tasks = bundle.get("tasks") if isinstance(bundle, dict) else None
    if not isinstance(tasks, list) or len(tasks) > max_tasks():
        return
    ours = {b.key for b in benchmarks()}
    wanted = {
        (task["benchmark"], task["task"])
        for task in tasks
        if isinstance(task, dict)
        and isinstance(task.get("benchmark"), str)  # a hostile one may be unhashable
        and task["benchmark"] in ours
        and isinstance(task.get("task"), str)
        and isinstance(task.get("evidence"), dict)
        and "data" in task["evidence"]
    }
    for benchmark, name in sorted(wanted):
        checker = evidence_adapter(benchmark)
        if checker is not None and hasattr(checker, "start"):
            checker.start(name)


def _misshapen(tasks: list[Any]) -> set[int]:
    """The tasks whose record does not match the schema: not checked further."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(TASK_SCHEMA)
    return {index for index, task in enumerate(tasks) if not validator.is_valid(task)}


def _checksum_problems(bundle: dict[str, Any]) -> list[str]:
    recorded = bundle.get("content_sha256")
    if not isinstance(recorded, str):
        return []
    try:
        actual = content_sha256(bundle)
    except (ValueError, TypeError) as err:  # not JSON: a bundle made in memory
        return [f"checksum: the content cannot be hashed ({clip(str(err))})"]
    if recorded == actual:
        return []
    return [
        f"checksum: content_sha256 is {clip(recorded, 80)}, but the content hashes to "
        f"{actual}: the bundle was edited after `conceptcomb submit-bundle` wrote it; make it "
        "again from the results"
    ]


def _name(task: Any, where: str) -> str:
    name = task.get("task") if isinstance(task, dict) else None
    return printable(clip(name, 120)) if isinstance(name, str) else where


def _repeated_tasks(tasks: list[Any]) -> tuple[set[int], list[str]]:
    """The indexes of the tasks to check (each task's first record, and records without a
    name, which the schema refuses), and a problem per task recorded more than once."""
    first: set[int] = set()
    seen: dict[str, list[int]] = {}
    for index, task in enumerate(tasks):
        name = task.get("task") if isinstance(task, dict) else None
        if not isinstance(name, str):
            first.add(index)
            continue
        indexes = seen.setdefault(name, [])
        if not indexes:
            first.add(index)
        indexes.append(index)
    problems = []
    for name, indexes in seen.items():
        if len(indexes) > 1:
            again = ", ".join(f"[{i}]" for i in indexes[1:5]) + (", …" if len(indexes) > 5 else "")
            problems.append(
                f"bundle.tasks[{indexes[0]}]: {printable(clip(name, 120))} is recorded "
                f"{len(indexes):,} times (again at tasks{again}): a bundle holds each task once"
            )
    return first, problems


def _concerns(problem: str, where: str) -> bool:
    """The problem names the task's record (``bundle.tasks[3]``, ``bundle.tasks[3].x``)."""
    return f"{where}." in problem or f"{where}:" in problem or f"{where} " in problem


def _check_task(
    task: dict[str, Any], where: str, data_dir: str | None, budget: EvidenceBudget
) -> tuple[TaskCheck, list[str]]:
    problems = []
    for number, record in enumerate(task.get("datasets") or []):
        problems += [f"data: {p}" for p in check_record(record, f"{where}.datasets[{number}]")]
    task_check = check_task(task, where, data_dir, budget)
    problems += _secret_problems(task_check.items, f"{where}.evidence.items")
    problems += task_check.problems
    return task_check, problems


def validate_bundle(bundle: Any, data_dir: str | None = None) -> list[str]:
    """Every problem found (empty list: the bundle is valid)."""
    return check_bundle(bundle, data_dir).problems


def read_bundle_file(path: Path) -> Any:
    """The bundle's JSON, read within the limits of `conceptcomb.leaderboard.bundles.safe_json`;
    Refused (a ValueError naming the problem) or OSError when it cannot be."""
    return read_bundle_json(path)


def check_file(path: Path, data_dir: str | None = None) -> BundleCheck:
    try:
        bundle = read_bundle_file(path)
    except OSError as err:
        return BundleCheck([f"{path}: cannot be read ({err})"])
    except Refused as err:
        if err.limit:
            return BundleCheck([f"limit: {path}: {err}"])
        return BundleCheck([f"{path}: not a JSON file ({err})"])
    return check_bundle(bundle, data_dir)


def validate_file(path: Path, data_dir: str | None = None) -> list[str]:
    return check_file(path, data_dir).problems


def check_eee(export: Any, data_dir: str | None = None) -> BundleCheck:
    """EEE files of one bundle (`conceptcomb.leaderboard.exports.read_eee`): the bundle they carry,
    checked as `check_bundle` checks it, and the files against it (their hash, every field
    exported again). A problem of the files makes them INVALID as a bundle's would."""
    from conceptcomb.leaderboard.exports.eee import file_uuid
    from conceptcomb.leaderboard.exports.read_eee import export_problems

    if export.bundle is None:
        return BundleCheck(list(export.problems))
    check = check_bundle(export.bundle, data_dir, content=False)
    try:
        extra = [*export.problems, *export_problems(export)]
    except Exception as err:  # files from anyone: fields of types no export writes
        extra = [f"{export.label}: cannot be exported again to compare ({type(err).__name__})"]
    if not extra:
        return check
    names = [task.get("task") for task in export.bundle.get("tasks") or []]
    ids = {name: file_uuid(export.bundle, str(name)) for name in names}
    tasks = []
    for task_check in check.tasks:
        own = [p for p in extra if ids.get(task_check.task, "?") in p]
        own += [p for p in check.problems if task_check.task in p]
        tasks.append(with_outcome(task_check, own))
    check.problems = [printable(clip(problem, 1000)) for problem in extra] + check.problems
    check.tasks = tasks
    return check

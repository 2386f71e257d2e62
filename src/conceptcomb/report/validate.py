"""``conceptcomb validate-bundle FILE``: schema, integrity, data checksums, no secrets, and
the per-item evidence (`conceptcomb.report.verify`): each task verified, partial or
unverified."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import benchmarks
from conceptcomb.common.evidence import ENCODING, EVIDENCE_FORMAT
from conceptcomb.report.bundle import SCHEMA_IDS, content_sha256, find_secrets
from conceptcomb.report.datasets import check_record
from conceptcomb.report.verify import TaskCheck, check_task

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
        "content_sha256": _SHA256,
    },
}


def _schema_problems(bundle: Any) -> list[str]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(BUNDLE_SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(bundle), key=lambda e: list(e.absolute_path)):
        where = "bundle" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        problems.append(f"schema: {where}: {error.message}")
    return problems


@dataclass
class BundleCheck:
    problems: list[str] = field(default_factory=list)  # empty: the bundle is valid
    tasks: list[TaskCheck] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def check_bundle(bundle: Any, data_dir: str | None = None) -> BundleCheck:
    """Every problem found, and each task's verification state."""
    check = BundleCheck([f"secret: {found}" for found in find_secrets(bundle)])
    check.problems += _schema_problems(bundle)
    if not isinstance(bundle, dict):
        return check
    recorded = bundle.get("content_sha256")
    if isinstance(recorded, str) and recorded != content_sha256(bundle):
        check.problems.append(
            f"checksum: content_sha256 is {recorded}, but the content hashes to "
            f"{content_sha256(bundle)}: the bundle was edited after `conceptcomb submit-bundle` "
            "wrote it; make it again from the results"
        )
    for index, task in enumerate(bundle.get("tasks") or []):
        if not isinstance(task, dict):
            continue
        where = f"bundle.tasks[{index}]"
        for number, record in enumerate(task.get("datasets") or []):
            if isinstance(record, dict):
                problems = check_record(record, f"{where}.datasets[{number}]")
                check.problems += [f"data: {p}" for p in problems]
        task_check = check_task(task, where, data_dir)
        leaks = find_secrets(task_check.items, f"{where}.evidence.items")
        check.problems += [f"secret: {found}" for found in leaks]
        check.problems += task_check.problems
        check.tasks.append(task_check)
    return check


def validate_bundle(bundle: Any, data_dir: str | None = None) -> list[str]:
    """Every problem found (empty list: the bundle is valid)."""
    return check_bundle(bundle, data_dir).problems


def read_bundle_file(path: Path) -> Any:
    """The bundle's JSON; DataFormatError-like message as a problem when unreadable."""
    return json.loads(path.read_text(encoding="utf-8"))


def check_file(path: Path, data_dir: str | None = None) -> BundleCheck:
    try:
        bundle = read_bundle_file(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return BundleCheck([f"{path}: not a JSON file ({err})"])
    return check_bundle(bundle, data_dir)


def validate_file(path: Path, data_dir: str | None = None) -> list[str]:
    return check_file(path, data_dir).problems

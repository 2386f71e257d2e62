"""``conceptcomb validate-bundle FILE``: schema, integrity, data checksums, no secrets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conceptcomb.report.bundle import SCHEMA_ID, content_sha256, find_secrets
from conceptcomb.report.datasets import check_record

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

TASK_SCHEMA = {
    "type": "object",
    "required": ["task", "benchmark", "version", "items", "datasets", "prompts", "metrics"],
    "properties": {
        "task": {"type": "string", "minLength": 1},
        "benchmark": {"enum": ["ccpt", "cggc", "abspyramid", "mcrae"]},
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
        "schema": {"const": SCHEMA_ID},
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


def validate_bundle(bundle: Any) -> list[str]:
    """Every problem found (empty list: the bundle is valid)."""
    problems = [f"secret: {found}" for found in find_secrets(bundle)]
    problems += _schema_problems(bundle)
    if not isinstance(bundle, dict):
        return problems
    recorded = bundle.get("content_sha256")
    if isinstance(recorded, str) and recorded != content_sha256(bundle):
        problems.append(
            f"checksum: content_sha256 is {recorded}, but the content hashes to "
            f"{content_sha256(bundle)}: the bundle was edited after `conceptcomb submit-bundle` "
            "wrote it; make it again from the results"
        )
    for index, task in enumerate(bundle.get("tasks") or []):
        if not isinstance(task, dict):
            continue
        for number, record in enumerate(task.get("datasets") or []):
            if isinstance(record, dict):
                where = f"bundle.tasks[{index}].datasets[{number}]"
                problems += [f"data: {p}" for p in check_record(record, where)]
    return problems


def validate_file(path: Path) -> list[str]:
    try:
        bundle = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return [f"{path}: not a JSON file ({err})"]
    return validate_bundle(bundle)

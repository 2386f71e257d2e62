"""The replies a bundle (or its ``export --to eee`` files) stores, as ``conceptcomb score``
reads saved replies: a JSONL of ``{"doc": ..., "response": ...}`` lines (``"responses"`` for
a multi-reply oracle), each doc the test item the evidence names in the pinned dataset. A
maintainer re-scores every submission with one judge this way (docs/bundles.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.bundles.safe_json import Refused, decode_evidence, read_bundle_json

BUNDLE_SUFFIX = ".bundle.json"


def is_stored_run(path: Path) -> bool:
    """A bundle, an EEE aggregate or samples file, or a folder holding them."""
    from conceptcomb.leaderboard.exports.read_eee import find_inputs

    if path.name.endswith(BUNDLE_SUFFIX):
        return True
    if path.name.endswith("_samples.jsonl"):  # an EEE instance file: its aggregate beside it
        path = path.with_name(path.name.removesuffix("_samples.jsonl") + ".json")
        return path.is_file() and bool(find_inputs([path]).aggregates)
    if path.is_dir():
        inputs = find_inputs([path])
        return bool(inputs.bundles or inputs.aggregates)
    return path.suffix == ".json" and bool(find_inputs([path]).aggregates)


def stored_bundles(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(label, bundle) of the bundles and EEE exports at ``path`` (a file or a folder)."""
    from conceptcomb.leaderboard.exports.read_eee import find_inputs, read_exports

    if not path.exists():
        raise ConfigError(f"{path}: no such file or folder.")
    inputs = find_inputs([path])
    if path.is_file() and not path.name.endswith(BUNDLE_SUFFIX):
        inputs.bundles = []  # find_inputs takes any other file for a bundle
    found: list[tuple[str, dict[str, Any]]] = []
    for bundle_path in inputs.bundles:
        try:
            bundle = read_bundle_json(bundle_path)
        except (OSError, Refused) as err:
            raise DataFormatError(f"{bundle_path}: not a readable bundle ({err}).") from None
        if not isinstance(bundle, dict) or not isinstance(bundle.get("tasks"), list):
            raise DataFormatError(f"{bundle_path}: not a conceptcomb bundle (no tasks).")
        if bundle.get("content_sha256") != content_sha256(bundle):
            raise DataFormatError(
                f"{bundle_path}: edited after `conceptcomb submit-bundle` wrote it (its "
                "content_sha256 does not match): `conceptcomb validate-bundle` says more."
            )
        found.append((str(bundle_path), bundle))
    exports, loose = read_exports(inputs.aggregates)
    for export in exports:
        if export.bundle is None:
            raise DataFormatError(f"{export.label}: {'; '.join(export.problems)}")
        found.append((export.label, export.bundle))
    if not found and loose:
        raise DataFormatError(loose[0])
    return found


@dataclass
class StoredReplies:
    """One task's stored replies, ready for ``conceptcomb score``."""

    task: str
    source: str
    model: str | None
    options: dict[str, Any] = field(default_factory=dict)
    lines: list[dict[str, Any]] = field(default_factory=list)

    def write(self, path: Path) -> Path:
        with path.open("w", encoding="utf-8") as handle:
            for line in self.lines:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        return path


def _test_items(benchmark: str, task: str, options: dict[str, Any], data_dir: str | None) -> dict:
    adapter = evidence_adapter(benchmark)
    if adapter is None:
        raise ConfigError(f"{task}: its bundles hold no per-item evidence to re-score.")
    if hasattr(adapter, "rescore_set"):
        return adapter.rescore_set(task, options, data_dir)
    return dict(adapter.test_set(task, options, data_dir).items)


def _line(task: str, number: int, evidence: dict[str, Any], known: dict) -> dict[str, Any]:
    key = str(evidence.get("id") or "").split(":", 1)[-1]
    item = known.get(key)
    if item is None or not hasattr(item, "as_doc"):
        raise DataFormatError(
            f"{task}: item #{number + 1} ({key or 'no id'}) is not an item of the task's test "
            "set in the pinned dataset: `conceptcomb validate-bundle` says more."
        )
    replies = evidence.get("replies")
    if isinstance(replies, list):
        return {"doc": item.as_doc(), "responses": [str(reply) for reply in replies]}
    if not isinstance(evidence.get("reply"), str):
        raise DataFormatError(f"{task}: item #{number + 1} ({key}) stores no reply.")
    return {"doc": item.as_doc(), "response": evidence["reply"]}


def stored_replies(path: Path, task: str, data_dir: str | None = None) -> StoredReplies:
    """The replies of ``task`` in the bundle or EEE export at ``path`` (exactly one run)."""
    found = []
    for label, bundle in stored_bundles(path):
        for index, record in enumerate(bundle["tasks"]):
            if isinstance(record, dict) and record.get("task") == task:
                found.append((label, bundle, index, record))
    if not found:
        raise ConfigError(f"{path}: holds no run of {task}.")
    if len(found) > 1:
        raise ConfigError(
            f"{path}: holds {len(found)} runs of {task} ({', '.join(f[0] for f in found)}): "
            "name one bundle or export folder."
        )
    label, bundle, index, record = found[0]
    evidence = record.get("evidence") or {}
    if not isinstance(evidence, dict) or "data" not in evidence:
        why = evidence.get("missing") if isinstance(evidence, dict) else None
        raise ConfigError(f"{label}: {task} stores no replies ({why or 'no per-item evidence'}).")
    items = decode_evidence(evidence, f"{label}: tasks[{index}].evidence")
    options = dict(record.get("options") or {})
    known = _test_items(str(record["benchmark"]), task, options, data_dir)
    model = bundle.get("model") or {}
    stored = StoredReplies(task, label, model.get("label") or model.get("name"), options)
    stored.lines = [_line(task, number, item, known) for number, item in enumerate(items)]
    return stored

"""Hugging Face Hub eval results (``.eval_results/<name>.yaml`` in a model repository) from
leaderboard bundles.

One entry per task, for its headline metric (the benchmark card's ``headline_metric``): the
benchmark's dataset on the Hub (the card's ``hub_dataset``, or ``--dataset-id``) and the
revision the row was computed on where the run read the data from that dataset, the task as
``task_id``, the value on the 0-100 scale the Hub's leaderboards use (a proportion x100), the
run's date, a source (by default the Every Eval Ever record of the same task, which
``export --to eee`` writes, in EEE's datastore) and notes saying how it can be verified: the
bundle's ``content_sha256``, the task version, the items and the data's revision and sha256.
Entries parse with ``huggingface_hub``'s own ``parse_eval_result_entries``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from conceptcomb.benchmarks import get
from conceptcomb.leaderboard.exports.eee import (
    ExportError,
    ExportOptions,
    file_uuid,
    hub_repo_id,
    items_total,
    model_folder,
    model_info,
    partial,
)

EEE_DATASTORE = "https://huggingface.co/datasets/evaleval/EEE_datastore/blob/main"
_DATASET_ID = re.compile(
    r"(?P<key>[a-z0-9_]+)=(?P<id>[A-Za-z0-9][\w.\-]*/[\w.\-]+)(@(?P<rev>\S+))?"
)


@dataclass(frozen=True)
class HubDataset:
    repo_id: str
    revision: str | None = None


def parse_dataset_ids(values: list[str]) -> dict[str, HubDataset]:
    """``--dataset-id ccpt=OWNER/NAME[@REVISION]`` options, by benchmark."""
    found = {}
    for value in values:
        match = _DATASET_ID.fullmatch(value)
        if not match:
            raise ExportError(
                f"--dataset-id {value!r}: give BENCHMARK=OWNER/NAME or "
                "BENCHMARK=OWNER/NAME@REVISION (e.g. cggc=myorg/cggc)"
            )
        key = match["key"]
        try:
            get(key)
        except KeyError as err:
            raise ExportError(f"--dataset-id {value!r}: {err.args[0]}") from None
        found[key] = HubDataset(match["id"], match["rev"])
    return found


def _dataset(
    benchmark: str, task: dict[str, Any], given: dict[str, HubDataset], where: str
) -> tuple[str, str | None, str]:
    """(dataset id, revision or None, note on where the data came from)."""
    records = task.get("datasets") or []
    read = records[0] if records else {}
    note = ""
    if read:
        source = read.get("repository") or read.get("title") or read.get("key")
        note = f"data: {source} at {read.get('revision') or read.get('dataset_sha256')}"
        note += " (each file's sha256: the bundle and the Every Eval Ever record)"
    if benchmark in given:
        chosen = given[benchmark]
        return chosen.repo_id, chosen.revision, note
    bench = get(benchmark)
    hub = bench.card.hub_dataset if bench.has_card else None
    if not hub:
        card = bench.card.path if bench.has_card else f"conceptcomb/{benchmark}/eval.yaml"
        raise ExportError(
            f"{where}: {task['task']}: {bench.title.split(':')[0]} has no benchmark dataset on "
            f"the Hugging Face Hub ({card}: hub_dataset): name the one you submit to with "
            f"--dataset-id {benchmark}=OWNER/NAME"
        )
    # A revision only where the run read the data from that very Hub dataset.
    revision = (
        read.get("revision") if read.get("kind") == "hub" and hub_repo_id(read) == hub else None
    )
    return hub, revision, note


def _value(value: float, scale_unit: str | None) -> float:
    """The Hub's 0-100 scale: a proportion x100, percentages as they are."""
    return value * 100.0 if scale_unit == "proportion" else value


def entries(
    bundle: dict[str, Any],
    options: ExportOptions,
    given: dict[str, HubDataset],
    source_url: str | None,
    where: str,
) -> list[dict[str, Any]]:
    """The ``.eval_results`` entries of a bundle: one per task with a headline value."""
    info = model_info(bundle, options, where)
    found = []
    for task in bundle.get("tasks") or []:
        name, benchmark = str(task["task"]), str(task["benchmark"])
        bench = get(benchmark)
        if not (bench.has_card and name in bench.card.tasks):
            raise ExportError(f"{where}: {name}: no headline metric (the card names none)")
        headline = bench.card.tasks[name].headline_metric
        metric = (task.get("metrics") or {}).get(headline) or {}
        value = metric.get("value")
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ExportError(
                f"{where}: {name}: its headline metric {headline} has no value in this run "
                "(the judge off, or no item scored): nothing a leaderboard can show"
            )
        infos = {i.name: i for i in bench.tasks().get(name, [])}
        scale = infos[headline].value_scale if headline in infos else None
        dataset_id, revision, data_note = _dataset(benchmark, task, given, where)
        folder = PurePosixPath("data", benchmark, info["developer"], model_folder(info["id"]))
        record = f"{EEE_DATASTORE}/{folder}/{file_uuid(bundle, name)}.json"
        proportion = scale is not None and scale.unit == "proportion"
        notes = _notes(bundle, task, headline, proportion, data_note)
        entry: dict[str, Any] = {
            "dataset": {"id": dataset_id, "task_id": name},
            "value": _value(float(value), scale.unit if scale else None),
        }
        if revision:
            entry["dataset"]["revision"] = str(revision)
        created = str(task.get("created") or bundle.get("created") or "")
        if created:
            entry["date"] = created
        entry["source"] = {
            "url": source_url or record,
            "name": "conceptcomb bundle" if source_url else "Every Eval Ever record",
        }
        entry["notes"] = notes
        found.append(entry)
    return found


def _notes(
    bundle: dict[str, Any], task: dict[str, Any], headline: str, proportion: bool, data: str
) -> str:
    """How the row was computed and can be verified: the metric, task version, items, the
    framework, the bundle's content_sha256 and the data's revision."""
    name, benchmark = str(task["task"]), str(task["benchmark"])
    total = items_total(benchmark, task)
    items = f"{task.get('items')} of {total} test items" if total else f"{task.get('items')} items"
    return (
        f"{headline}{' (a proportion, x100)' if proportion else ''} of {name} (task version "
        f"{task.get('version')}), {'PARTIAL: ' if partial(benchmark, task) else ''}{items}; "
        f"{bundle['framework']['name']} {bundle['framework'].get('version')}; verify: "
        f"conceptcomb validate-bundle on the bundle (content_sha256 "
        f"{bundle.get('content_sha256')}) or its Every Eval Ever files; {data}"
    )


def yaml_name(bundle: dict[str, Any], benchmark: str) -> str:
    """One file per bundle and benchmark: ``<benchmark>_<framework>_<model label>.yaml``."""
    label = re.sub(r"[^A-Za-z0-9._-]+", "-", str(bundle["model"].get("label"))).strip("-")
    framework = re.sub(r"[^A-Za-z0-9]+", "-", str(bundle["framework"]["name"])).strip("-")
    return f"{benchmark}_{framework}_{label}.yaml"


def write_eval_results(
    bundles: list[tuple[str, dict[str, Any]]],
    out: Path,
    options: ExportOptions,
    given: dict[str, HubDataset],
    source_url: str | None = None,
) -> list[tuple[Path, int]]:
    """``OUT/.eval_results/<name>.yaml`` files (path, entries); all computed before any is
    written, so an error leaves nothing half done."""
    import yaml

    files: dict[Path, list[dict[str, Any]]] = {}
    for where, bundle in bundles:
        for entry, task in zip(
            entries(bundle, options, given, source_url, where), bundle["tasks"], strict=True
        ):
            path = out / ".eval_results" / yaml_name(bundle, str(task["benchmark"]))
            files.setdefault(path, []).append(entry)
    written = []
    for path, found in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(found, sort_keys=False, allow_unicode=True), "utf-8")
        except OSError as err:
            raise ExportError(
                f"{path}: cannot be written ({err.strerror or err}): choose another --out"
            ) from None
        written.append((path, len(found)))
    return written

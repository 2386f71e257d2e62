"""What a bundle records about each benchmark's data: revision and sha256 of every file.

Pinned datasets (CCPT, McRae, CGGC's sources) have a sha256 per file in this package; the
bundle records the sha256 of the copy on this machine when it can find one without
downloading (the run's ``data_dir``, ``CONCEPTCOMB_DATA_DIR``, the cache), else the pinned
one marked as not checked. Hub datasets (AbsPyramid) are
pinned the same way once ``scripts/pin_hub_dataset.py`` has written their pins; until then the
bundle records the sha256 of the local files with nothing to compare them with, as for CGGC's
evaluation files, which the user builds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conceptcomb.benchmarks import benchmarks, get
from conceptcomb.common.datafiles import PinnedDataset, cache_root, sha256_of, user_data_dir
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.hubfiles import HubDataset


def pinned_datasets(benchmark: str) -> list[PinnedDataset]:
    """The sha256-pinned datasets a benchmark's tasks read (CGGC: what it is built from)."""
    found = get(benchmark).datasets().values()
    return [dataset for dataset in found if isinstance(dataset, PinnedDataset)]


def hub_dataset(benchmark: str) -> HubDataset | None:
    found = get(benchmark).datasets().values()
    return next((dataset for dataset in found if isinstance(dataset, HubDataset)), None)


def _local_copy(dataset: PinnedDataset, name: str, data_dir: str | None) -> Path | None:
    """The file the run most likely read, found without downloading anything."""
    try:
        folder = user_data_dir(dataset, data_dir)
    except ConceptcombError:
        folder = None
    candidates = [folder / name] if folder else []
    candidates.append(cache_root() / "data" / dataset.key / dataset.revision / name)
    return next((path for path in candidates if path.is_file()), None)


def pinned_record(dataset: PinnedDataset, data_dir: str | None) -> dict[str, Any]:
    files = {}
    for pinned in dataset.files:
        local = _local_copy(dataset, pinned.name, data_dir)
        files[pinned.name] = {
            "sha256": sha256_of(local) if local else pinned.sha256,
            "checked_locally": local is not None,
        }
    return {
        "kind": "pinned",
        "key": dataset.key,
        "title": dataset.title,
        "repository": dataset.repository,
        "revision": dataset.revision,
        "files": files,
    }


def hub_record(dataset: HubDataset, data_dir: str | None) -> dict[str, Any]:
    """Revision, and the sha256 of the local files where they can be found offline."""
    files: dict[str, dict[str, Any]] = {}
    try:
        folder = user_data_dir(dataset, data_dir)  # type: ignore[arg-type]
    except ConceptcombError:
        folder = None
    for name in dataset.files:
        local = (
            folder / name if folder and (folder / name).is_file() else _hub_cached(dataset, name)
        )
        files[name] = {
            "sha256": sha256_of(local) if local else dataset.sha256.get(name),
            "checked_locally": bool(local),
        }
    return {
        "kind": "hub",
        "key": dataset.key,
        "title": dataset.title,
        "repository": f"huggingface.co/datasets/{dataset.repo_id}",
        "revision": dataset.revision,
        "files": files,
    }


def _hub_cached(dataset: HubDataset, name: str) -> Path | None:
    from huggingface_hub import try_to_load_from_cache

    from conceptcomb.common.hubfiles import hub_cache_dir

    found = try_to_load_from_cache(
        dataset.repo_id,
        name,
        cache_dir=hub_cache_dir(),
        revision=dataset.revision,
        repo_type=dataset.repo_type,
    )
    return Path(found) if isinstance(found, str) else None


def dataset_records(benchmark: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    data_dir = options.get("data_dir")
    data_dir = str(data_dir) if data_dir else None
    records = [pinned_record(dataset, data_dir) for dataset in pinned_datasets(benchmark)]
    hub = hub_dataset(benchmark)
    if hub is not None:
        records.append(hub_record(hub, data_dir))
    local = get(benchmark).local_data_records
    if local is not None:
        records += local(data_dir)
    return records


def check_record(record: dict[str, Any], where: str) -> list[str]:
    """Problems of one dataset record against this package's pins (empty when it matches)."""
    if record.get("kind") == "built":
        return []
    if record.get("kind") == "hub":
        hub = next(
            (d for b in benchmarks() if (d := hub_dataset(b.key)) and d.key == record["key"]),
            None,
        )
        if hub is None:
            return [f"{where}: unknown hub dataset {record.get('key')!r}"]
        if not hub.same_revision(record.get("revision")):
            return [
                f"{where}: revision {record.get('revision')} of {hub.repo_id}, but this "
                f"conceptcomb pins {hub.revision}"
            ]
        return _check_hub_files(hub, record, where)
    return _check_pinned(record, where)


def _check_hub_files(hub: HubDataset, record: dict[str, Any], where: str) -> list[str]:
    """The files' sha256 a run recorded against those pinned (a file without a pin, or
    not found by the run, has nothing to compare)."""
    problems = []
    for name, entry in (record.get("files") or {}).items():
        pinned, found = hub.sha256.get(name), entry.get("sha256")
        if name not in hub.files:
            problems.append(f"{where}.files[{name!r}]: not a file of {hub.describe()}")
        elif pinned and found and found != pinned:
            problems.append(
                f"{where}.files[{name!r}].sha256 is {found}, but {hub.describe()} has "
                f"{pinned}: the run's data differs from the pinned release, or the bundle "
                "was edited"
            )
    return problems


def _check_pinned(record: dict[str, Any], where: str) -> list[str]:
    known = [
        d
        for b in benchmarks()
        for d in pinned_datasets(b.key)
        if d.repository == record.get("repository")
    ]
    if not known:
        return [f"{where}: unknown dataset {record.get('repository')!r}"]
    dataset = known[0]
    if record.get("revision") != dataset.revision:
        return [
            f"{where}: revision {record.get('revision')} of {dataset.repository}, but this "
            f"conceptcomb pins {dataset.revision}"
        ]
    problems = []
    pins = {pinned.name: pinned.sha256 for pinned in dataset.files}
    for name, entry in record.get("files", {}).items():
        pinned = pins.get(name)
        if pinned is None:
            problems.append(f"{where}.files[{name!r}]: not a file of {dataset.describe()}")
        elif entry.get("sha256") != pinned:
            problems.append(
                f"{where}.files[{name!r}].sha256 is {entry.get('sha256')}, but "
                f"{dataset.describe()} has {pinned}: the run's data differs from the pinned "
                "release, or the bundle was edited"
            )
    missing = sorted(pins.keys() - record.get("files", {}).keys())
    if missing:
        problems.append(f"{where}.files lacks {', '.join(missing)}")
    return problems

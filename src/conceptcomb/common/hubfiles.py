"""Benchmark files published on the Hugging Face hub: a folder the user names, or the hub.

The counterpart of `conceptcomb.common.datafiles` for datasets that exist only on the hub.
A `HubDataset` names the hub repository, the revision it is pinned to and the files (paths
inside that repository) a benchmark uses. `resolve_hub_files` finds each file:

1. in the folder the caller names (task argument ``data_dir``), else
2. in ``$CONCEPTCOMB_DATA_DIR`` (the benchmark's own folder or a parent holding
   ``<benchmark>/``), the files laid out as in the hub repository, else
3. in the hub cache under ``$CONCEPTCOMB_CACHE_DIR/hf-hub`` (``huggingface_hub``'s own
   layout), downloading at the pinned revision what is missing.

Each file found is checked against its pinned sha256, as `datafiles` does, when the dataset
has one. A dataset's pins live in a JSON file beside its code (`HubPins`), which
``scripts/pin_hub_dataset.py`` writes from the hub (or a clone of the hub repository): the
full commit and every file's sha256. Until a dataset is pinned that way (AbsPyramid's pins
were written offline, from its short commit alone) `file_digests` prints the checksums so
that a user can record what they ran on.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from conceptcomb.common.datafiles import (
    DATA_DIR_ENV,
    DATA_DIR_FORMS,
    PinnedFile,
    cache_root,
    sha256_of,
    user_data_dir,
    verify_checksum,
)
from conceptcomb.common.errors import DataFormatError, DataUnavailableError


@dataclass(frozen=True)
class HubPins:
    """A hub dataset's pins, kept in a JSON file (``{"repo_id", "revision", "sha256": {file:
    digest}}``) that ``scripts/pin_hub_dataset.py`` writes."""

    path: Path

    def read(self) -> dict[str, Any]:
        pins = json.loads(self.path.read_text(encoding="utf-8"))
        if not isinstance(pins.get("revision"), str) or not isinstance(pins.get("sha256"), dict):
            raise DataFormatError(f"{self.path}: needs a 'revision' string and a 'sha256' object")
        return pins

    def dataset(self, key: str, title: str, files: tuple[str, ...]) -> HubDataset:
        pins = self.read()
        unknown = sorted(set(pins["sha256"]) - set(files))
        if unknown:
            raise DataFormatError(
                f"{self.path}: sha256 of files that {key} does not read: {unknown}"
            )
        return HubDataset(
            key, title, pins["repo_id"], pins["revision"], files, sha256=pins["sha256"],
            pins=self.path,
        )  # fmt: skip


@dataclass(frozen=True)
class HubDataset:
    key: str
    title: str
    repo_id: str
    revision: str
    files: tuple[str, ...]
    repo_type: str = "dataset"
    # File -> pinned sha256 (each file found is checked; a file without one is not).
    sha256: Mapping[str, str] = field(default_factory=dict, compare=False)
    pins: Path | None = field(default=None, compare=False)  # the JSON file they come from

    def describe(self) -> str:
        where = f"Hugging Face {self.repo_type} {self.repo_id}"
        return f"{self.title} ({where} at revision {self.revision})"

    @property
    def fully_pinned(self) -> bool:
        """The full 40-hex commit and a sha256 for every file, like the other datasets."""
        full = len(self.revision) == 40 and all(c in "0123456789abcdef" for c in self.revision)
        return full and set(self.sha256) == set(self.files)

    def same_revision(self, revision: object) -> bool:
        """A recorded revision names this commit (a short hash of at least 7 characters too:
        bundles written before the full commit was pinned record the short one)."""
        if not isinstance(revision, str) or len(revision) < 7:
            return False
        return self.revision.startswith(revision) or revision.startswith(self.revision)

    def folder_hint(self) -> str:
        """How to point the tasks at a folder holding the files (for error messages)."""
        return (
            f'point data_dir (lm-eval: --metadata \'{{"data_dir": "DIR"}}\'; Inspect: '
            f"-T data_dir=DIR) or {DATA_DIR_ENV} at a folder holding {self.repo_id}'s files "
            f"at revision {self.revision} (e.g. {self.files[0]})"
        )


_TRUE = {"1", "ON", "YES", "TRUE"}


def hub_cache_dir() -> Path:
    return cache_root() / "hf-hub"


def resolve_hub_files(
    dataset: HubDataset,
    names: Iterable[str],
    data_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Path]:
    """Find the named files in the user's folder, or in the hub cache (downloading them)."""
    folder = user_data_dir(dataset, data_dir)  # type: ignore[arg-type]  # needs key/describe
    resolved: dict[str, Path] = {}
    for name in names:
        if name not in dataset.files:
            raise KeyError(f"{dataset.key} has no file {name!r}")
        path = _in_folder(dataset, name, folder) if folder else _from_hub(dataset, name)
        if name in dataset.sha256:
            verify_checksum(path, PinnedFile(name, dataset.sha256[name]), dataset)
        resolved[name] = path
    return resolved


def _in_folder(dataset: HubDataset, name: str, folder: Path) -> Path:
    path = folder / name
    if path.is_file():
        return path
    raise DataUnavailableError(
        f"{name} is not in {folder}: that folder must hold the files of {dataset.describe()} "
        f"in the repository's layout; add the file, or unset {DATA_DIR_ENV} and drop the "
        f"data folder option ({DATA_DIR_FORMS}) to download them from the hub."
    )


def _hub_reachable() -> bool:
    """A fast DNS check: offline, huggingface_hub would retry for half a minute first."""
    from huggingface_hub import constants

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True  # the proxy resolves names, not us
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def _offline_reason() -> str | None:
    from huggingface_hub import constants

    # huggingface_hub reads the variable once, at import: look at the environment too.
    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in _TRUE:
        return "HF_HUB_OFFLINE is set"
    return None if _hub_reachable() else "no network"


def _from_hub(dataset: HubDataset, name: str) -> Path:
    from huggingface_hub import hf_hub_download

    common = {
        "repo_id": dataset.repo_id,
        "filename": name,
        "repo_type": dataset.repo_type,
        "revision": dataset.revision,
        "cache_dir": hub_cache_dir(),
    }
    try:
        return Path(hf_hub_download(**common, local_files_only=True))
    except Exception:  # not cached yet (or a partial cache): download below
        pass
    reason = _offline_reason()
    if reason is None:
        try:
            return Path(hf_hub_download(**common))
        except Exception as err:
            reason = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    raise DataUnavailableError(
        f"Cannot get {name} of {dataset.describe()} ({reason}) and it is not cached in "
        f"{hub_cache_dir()}: connect to the internet, or {dataset.folder_hint()}."
    )


def file_digests(paths: Iterable[Path]) -> dict[Path, str]:
    """sha256 of each file, for the record."""
    return {path: sha256_of(path) for path in paths}

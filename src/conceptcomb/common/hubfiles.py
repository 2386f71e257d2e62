"""Benchmark files published on the Hugging Face hub: a folder the user names, or the hub.

The counterpart of `conceptcomb.common.datafiles` for datasets that exist only on the hub.
A `HubDataset` names the hub repository, the revision it is pinned to and the files (paths
inside that repository) a benchmark uses. `resolve_hub_files` finds each file:

1. in the folder the caller names (task argument ``data_dir``), else
2. in ``$CONCEPTCOMB_DATA_DIR`` (the benchmark's own folder or a parent holding
   ``<benchmark>/``), the files laid out as in the hub repository, else
3. in the hub cache under ``$CONCEPTCOMB_CACHE_DIR/hf-hub`` (``huggingface_hub``'s own
   layout), downloading at the pinned revision what is missing.

Unlike `datafiles`, no sha256 is pinned: the hub serves a file at a fixed revision, and for
the datasets declared so far the checksums could not be read offline when they were added.
`file_digests` prints them so that a user can record what they ran on.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from conceptcomb.common.datafiles import DATA_DIR_ENV, cache_root, sha256_of, user_data_dir
from conceptcomb.common.errors import DataUnavailableError


@dataclass(frozen=True)
class HubDataset:
    key: str
    title: str
    repo_id: str
    revision: str
    files: tuple[str, ...]
    repo_type: str = "dataset"

    def describe(self) -> str:
        where = f"Hugging Face {self.repo_type} {self.repo_id}"
        return f"{self.title} ({where} at revision {self.revision})"

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
        resolved[name] = _in_folder(dataset, name, folder) if folder else _from_hub(dataset, name)
    return resolved


def _in_folder(dataset: HubDataset, name: str, folder: Path) -> Path:
    path = folder / name
    if path.is_file():
        return path
    raise DataUnavailableError(
        f"{name} is not in {folder}: that folder must hold the files of {dataset.describe()} "
        f"in the repository's layout; add the file, or unset {DATA_DIR_ENV} and drop data_dir "
        f"to download them from the hub."
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
    """sha256 of each file, for the record (nothing to compare them with: see the module doc)."""
    return {path: sha256_of(path) for path in paths}

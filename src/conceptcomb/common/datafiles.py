"""Pinned benchmark files: a folder the user names, or a checked download into a cache.

Every benchmark declares its files once (`PinnedDataset`): where they come from (a URL at
a fixed revision), their sha256, and, for files the upstream repository does not publish
as such, how to derive them from a published file. `resolve_files` then finds each file:

1. in the folder the caller names (task argument ``data_dir``), else
2. in ``$CONCEPTCOMB_DATA_DIR`` (either the benchmark's own folder or a parent holding
   ``<benchmark>/``), else
3. in the cache (``$CONCEPTCOMB_CACHE_DIR``, default ``~/.cache/conceptcomb``), downloading
   what is missing.

Whatever the source, a file whose sha256 differs from the pinned one is refused, so that
numbers computed with this package always refer to the published data.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conceptcomb.common.errors import ChecksumError, DataFormatError, DataUnavailableError

DATA_DIR_ENV = "CONCEPTCOMB_DATA_DIR"
# The folder option as each front end spells it: ours, Inspect's and lm-eval's.
DATA_DIR_FORMS = "conceptcomb --data-dir, Inspect -T data_dir, lm-eval --metadata data_dir"
CACHE_DIR_ENV = "CONCEPTCOMB_CACHE_DIR"
VERIFY_ENV = "CONCEPTCOMB_VERIFY_CHECKSUMS"

# Builds a derived file: (source file, destination file) -> None.
Deriver = Callable[[Path, Path], None]


@dataclass(frozen=True)
class SourceFile:
    """A published file that a derived file is built from (not used directly)."""

    name: str
    url: str


@dataclass(frozen=True)
class PinnedFile:
    """One file of a benchmark, checked against its sha256."""

    name: str
    sha256: str
    url: str | None = None
    # For derived files: the published file they are built from, and how.
    source: SourceFile | None = None
    derive: Deriver | None = None


@dataclass(frozen=True)
class PinnedDataset:
    key: str
    title: str
    repository: str
    revision: str
    files: tuple[PinnedFile, ...]

    def file(self, name: str) -> PinnedFile:
        for pinned in self.files:
            if pinned.name == name:
                return pinned
        raise KeyError(f"{self.key} has no pinned file {name!r}")

    def describe(self) -> str:
        return f"{self.title} ({self.repository} at revision {self.revision})"


def pinned_files(folder: str, url: str, sha256: dict[str, str]) -> tuple[PinnedFile, ...]:
    """The files ``sha256`` names (name -> sha256), kept under ``folder``, downloaded from
    ``url`` + name."""
    return tuple(PinnedFile(f"{folder}/{name}", sha, url + name) for name, sha in sha256.items())


def require_columns(
    path: Path, header: list[str] | None, columns: Iterable[str], hint: str = ""
) -> None:
    """A CSV/TSV header must hold ``columns``; the error names the file, the missing columns,
    what was found, and ``hint`` (e.g. which release the file should come from)."""
    if not header:
        raise DataFormatError(f"{path}: the file is empty or has no header row.")
    missing = [column for column in columns if column not in header]
    if missing:
        found = ", ".join(header[:8]) + (", ..." if len(header) > 8 else "")
        raise DataFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (found: {found}).{hint}"
        )


def cache_root() -> Path:
    """Root of everything conceptcomb caches (data, judge ratings)."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "conceptcomb"


def write_cached_json(path: Path, value: Any) -> None:
    """``value`` as compact JSON at ``path`` in the cache, written to a temporary file and
    renamed: a reader (another process of the same run) never sees half of it. A cache
    only: where it cannot be written, the next run computes it again."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(value, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as err:
        with contextlib.suppress(OSError):  # a full disk leaves no half-written file
            temporary.unlink()
        logging.getLogger("conceptcomb").debug("not cached: %s (%s)", path, err)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_verified: dict[tuple[str, int, int], str] = {}


class Described(Protocol):
    """A dataset that names itself in messages (`PinnedDataset`, a hub dataset)."""

    def describe(self) -> str: ...


def verify_checksum(path: Path, pinned: PinnedFile, dataset: Described) -> None:
    """Refuse a file that is not byte-identical to the pinned release."""
    if os.environ.get(VERIFY_ENV, "1").strip().lower() in {"0", "false", "no"}:
        return
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    actual = _verified.get(key) or sha256_of(path)
    _verified[key] = actual
    if actual != pinned.sha256:
        raise ChecksumError(
            f"{path}: sha256 is {actual}, but {dataset.describe()} has {pinned.sha256}. "
            f"The file is damaged or from another revision: delete it to download it again, "
            f"or point {DATA_DIR_ENV} at an unmodified copy. To use a modified copy anyway "
            f"(your numbers will not be comparable), set {VERIFY_ENV}=0."
        )


def user_data_dir(dataset: PinnedDataset, data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The folder the user named (argument first, then the environment), if any."""
    named = data_dir or os.environ.get(DATA_DIR_ENV)
    if not named:
        return None
    folder = Path(named).expanduser()
    if not folder.is_dir():
        origin = "data_dir" if data_dir else DATA_DIR_ENV
        raise DataUnavailableError(
            f"{origin}={named!s} is not a folder. Point it at a folder holding the files of "
            f"{dataset.describe()}, or at a parent folder with a '{dataset.key}/' subfolder."
        )
    nested = folder / dataset.key
    return nested if nested.is_dir() else folder


def resolve_files(
    dataset: PinnedDataset,
    names: Iterable[str],
    data_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Path]:
    """Find, verify and if needed download or derive the named files."""
    folder = user_data_dir(dataset, data_dir)
    cache = cache_root() / "data" / dataset.key / dataset.revision
    resolved: dict[str, Path] = {}
    for name in names:
        pinned = dataset.file(name)
        if folder is not None:
            path = _from_user_folder(dataset, pinned, folder, cache)
        else:
            path = _from_cache(dataset, pinned, cache)
        verify_checksum(path, pinned, dataset)
        resolved[name] = path
    return resolved


def _from_user_folder(
    dataset: PinnedDataset, pinned: PinnedFile, folder: Path, cache: Path
) -> Path:
    path = folder / pinned.name
    if path.is_file():
        return path
    if pinned.source is not None:
        source = folder / pinned.source.name
        if source.is_file():
            return _derive(dataset, pinned, source, cache)
    alternatives = f" (or its source {pinned.source.name})" if pinned.source else ""
    raise DataUnavailableError(
        f"{pinned.name}{alternatives} is not in {folder}. That folder must hold the files of "
        f"{dataset.describe()}; add the file, or unset {DATA_DIR_ENV} and drop the data "
        f"folder option ({DATA_DIR_FORMS}) to download the files into {cache}."
    )


def _from_cache(dataset: PinnedDataset, pinned: PinnedFile, cache: Path) -> Path:
    path = cache / pinned.name
    if path.is_file():
        return path
    if pinned.url is not None:
        _download(dataset, pinned.name, pinned.url, path, pinned)
        return path
    assert pinned.source is not None, f"{pinned.name} has neither a URL nor a source"
    source = cache / "sources" / pinned.source.name
    if not source.is_file():
        _download(dataset, pinned.source.name, pinned.source.url, source)
    return _derive(dataset, pinned, source, cache)


def _derive(dataset: PinnedDataset, pinned: PinnedFile, source: Path, cache: Path) -> Path:
    assert pinned.derive is not None
    target = cache / pinned.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        built = Path(scratch) / pinned.name
        pinned.derive(source, built)
        verify_checksum(built, pinned, dataset)
        os.replace(built, target)
    return target


def _download(
    dataset: PinnedDataset,
    name: str,
    url: str,
    target: Path,
    pinned: PinnedFile | None = None,
) -> None:
    """Download to a partial file, check it, then move it into place (never a bad cache)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, TimeoutError) as err:
        partial.unlink(missing_ok=True)
        raise DataUnavailableError(
            f"Could not download {name} of {dataset.describe()} from {url} ({err}). "
            f"Either connect to the internet and run again, or download the files of "
            f"{dataset.repository} at revision {dataset.revision} yourself and name their "
            f"folder with {DATA_DIR_ENV}=/path/to/folder (lm-eval: --metadata "
            f'\'{{"data_dir": "/path/to/folder"}}\'; Inspect: -T data_dir=/path/to/folder).'
        ) from err
    if pinned is not None:
        try:
            verify_checksum(partial, pinned, dataset)
        except ChecksumError:
            partial.unlink(missing_ok=True)
            raise
    os.replace(partial, target)

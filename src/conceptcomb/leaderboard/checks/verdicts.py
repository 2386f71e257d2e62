"""Verdicts remembered: ``export`` and ``report`` of a bundle that was checked before reuse
its verdict instead of checking it again (a CGGC bundle's check starts METEOR's JVM and
loads spaCy and the dataset: seconds; reading a verdict takes milliseconds).

``validate-bundle`` and ``submit-bundle`` always check, and remember what they find; so do
``export`` and ``report`` when they check. A verdict is a JSON file under
``<cache>/verdicts/`` (`conceptcomb.common.datafiles.cache_root`, ``CONCEPTCOMB_CACHE_DIR``),
named by the sha256 of everything that decides it (`verdict_key`): the bundle's content
sha256 (the one it records, which must be the one its content hashes to), this package's
version and installed files (their sizes and times: an edited checkout checks again), the
data folder the checks read, and the tools found here (Java for METEOR, SPICE's jars).

Only a verdict that will not change is kept: a valid bundle's, none of whose tasks was left
unchecked for want of its data on this machine. An invalid bundle is checked every time
(its problems are what the user needs, fresh). ``--recheck`` checks again and remembers the
new verdict. A verdict that cannot be read (a half-written or foreign file) is checked
again, never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import conceptcomb
from conceptcomb.cggc.metrics import SPICE_ENV
from conceptcomb.common.datafiles import DATA_DIR_ENV, cache_root, write_cached_json
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.bundles.safe_json import Refused
from conceptcomb.leaderboard.checks.validate import (
    BundleCheck,
    check_bundle,
    check_file,
    read_bundle_file,
)
from conceptcomb.leaderboard.checks.verify import TaskCheck

VERDICT_FORMAT = 1


def verdicts_dir() -> Path:
    return cache_root() / "verdicts"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """This package as installed: its version and every file's path, size and time (a
    few milliseconds; the same version with other code is another package)."""
    root = Path(conceptcomb.__file__).resolve().parent
    digest = hashlib.sha256(conceptcomb.__version__.encode())
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            path = Path(folder, name)
            with contextlib.suppress(OSError):
                stat = path.stat()
                line = f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n"
                digest.update(line.encode())
    return digest.hexdigest()


def verdict_key(bundle: Any, data_dir: str | None) -> str | None:
    """The name of the bundle's verdict; None for a bundle whose verdict is never kept
    (not an object, no content sha256, or one its content does not hash to)."""
    if not isinstance(bundle, dict) or not isinstance(bundle.get("content_sha256"), str):
        return None
    try:
        content = content_sha256(bundle)
    except (ValueError, TypeError, RecursionError):  # not JSON: the check says why
        return None
    if content != bundle["content_sha256"]:
        return None
    parts = {
        "format": VERDICT_FORMAT,
        "content_sha256": content,
        "conceptcomb": conceptcomb.__version__,
        "code": code_fingerprint(),
        "data_dir": data_dir,
        "data_dir_env": os.environ.get(DATA_DIR_ENV),
        "java": shutil.which("java"),
        "spice_jars": os.environ.get(SPICE_ENV),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def checked(bundle: Any, data_dir: str | None = None, reuse: bool = True) -> BundleCheck:
    """The bundle's verdict: the remembered one where ``reuse`` and there is one, else
    `conceptcomb.leaderboard.checks.validate.check_bundle`'s, remembered where it may be."""
    key = verdict_key(bundle, data_dir)
    if reuse and key is not None:
        found = _read(key)
        if found is not None:
            return found
    check = check_bundle(bundle, data_dir)
    if key is not None and _lasting(check):
        _write(key, check, bundle["content_sha256"])
    return check


def checked_file(path: Path, data_dir: str | None = None, reuse: bool = True) -> BundleCheck:
    """`checked` of a bundle file (`conceptcomb.leaderboard.checks.validate.check_file` names what
    keeps it from being read)."""
    try:
        bundle = read_bundle_file(path)
    except (OSError, Refused):
        return check_file(path, data_dir)
    return checked(bundle, data_dir, reuse)


def _lasting(check: BundleCheck) -> bool:
    """A verdict that checking again here would give again: valid, each task checked as
    far as its evidence allows (none left unchecked for want of its data here)."""
    return check.valid and not any(task.data_missing for task in check.tasks)


def _read(key: str) -> BundleCheck | None:
    try:
        stored = json.loads((verdicts_dir() / f"{key}.json").read_text(encoding="utf-8"))
        if stored.get("format") != VERDICT_FORMAT or stored.get("problems"):
            return None
        tasks = [
            TaskCheck(
                str(task["task"]),
                str(task["status"]),
                str(task["detail"]),
                not_rechecked={str(k): str(v) for k, v in task["not_rechecked"].items()},
            )
            for task in stored["tasks"]
        ]
        return BundleCheck([], tasks, remembered=str(stored["checked"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write(key: str, check: BundleCheck, content: str) -> None:
    """Written whole or not at all (a temporary file renamed); a cache that cannot be
    written only means checking again next time."""
    record = {
        "format": VERDICT_FORMAT,
        "content_sha256": content,
        "conceptcomb": conceptcomb.__version__,
        "checked": datetime.now(UTC).isoformat(timespec="seconds"),
        "problems": check.problems,
        "tasks": [
            {
                "task": task.task,
                "status": task.status,
                "detail": task.detail,
                "not_rechecked": task.not_rechecked,
            }
            for task in check.tasks
        ],
    }
    write_cached_json(verdicts_dir() / f"{key}.json", record)  # whole or not at all

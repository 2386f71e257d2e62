"""Prints the sha256 of pyproject.toml's requirements (requires-python, dependencies, extras):
what constraints.txt was resolved from. scripts/refresh_lock.sh records it in the lock;
tests/test_dependencies.py compares (a lock older than a change of requirements is stale)."""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def requirements_digest(pyproject: Path = ROOT / "pyproject.toml") -> str:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    wanted = {
        "requires-python": project["requires-python"],
        "dependencies": project["dependencies"],
        "optional-dependencies": project["optional-dependencies"],
    }
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode("utf-8")).hexdigest()


if __name__ == "__main__":
    sys.stdout.write(requirements_digest() + "\n")

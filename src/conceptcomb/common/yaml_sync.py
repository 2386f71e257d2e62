"""Keep a benchmark's generated lm-eval YAML folder in sync with its renderer.

Every ``<benchmark>/lm_eval_yaml.py`` renders its files as {name: text}; this writes them,
or with ``--check`` lists the files that differ (a test asserts there are none).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path


def stale_files(expected: Mapping[str, str], folder: Path) -> list[str]:
    """Files of ``folder`` that differ from ``expected``, are missing, or are left over."""
    present = (
        {path.name for path in folder.iterdir() if path.is_file()} if folder.is_dir() else set()
    )
    present.discard("__init__.py")
    stale = [name for name, text in expected.items() if _read(folder / name) != text]
    return sorted(stale + sorted(present - set(expected)))


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def main(
    argv: list[str] | None,
    description: str,
    folder: Path,
    render_all: Callable[[], dict[str, str]],
) -> int:
    """The ``python -m conceptcomb.<benchmark>.lm_eval_yaml [--check]`` command."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(render_all(), folder)
        for name in stale:
            print(f"stale: {folder / name}")
        return 1 if stale else 0
    folder.mkdir(exist_ok=True)
    for name, text in render_all().items():
        (folder / name).write_text(text, encoding="utf-8")
    return 0

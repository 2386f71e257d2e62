"""The toy benchmark of examples/toy_benchmark/ added to a copy of the package, as its README
tells a newcomer: its folder copied to src/conceptcomb/toy/ and one registry line.

``python scripts/toy_example.py`` rewrites the example's generated files (``toy/inspect_tasks.py``
and ``toy/task_yaml/``) from its specs: it runs ``python -m conceptcomb.frameworks.task_files
toy`` in such a copy and copies them back (tests/test_toy_benchmark.py fails while they are
stale). `package_with_toy` is what that test builds its copies with.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "toy_benchmark" / "toy"
REGISTRY_LINE = '    "conceptcomb.toy.benchmark",\n'
LAST_LINE = '    "conceptcomb.mcrae.benchmark",\n'
# in toy/, written by the generator (of __init__.py, the exports below its docstring)
GENERATED = ("inspect_tasks.py", "task_yaml", "__init__.py")


def package_with_toy(root: Path, package: Path = REPO / "src" / "conceptcomb") -> Path:
    """``root`` as a project (``src/conceptcomb`` copied from ``package``, the files a wheel
    build needs) with the example's ``toy/`` added and registered; the copy's toy folder."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(package, root / "src" / "conceptcomb", ignore=ignore)
    for name in ("pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(REPO / name, root / name)
    toy = root / "src" / "conceptcomb" / "toy"
    shutil.copytree(EXAMPLE, toy, ignore=ignore)
    registry = root / "src" / "conceptcomb" / "benchmarks.py"
    before = registry.read_text(encoding="utf-8")
    after = before.replace(LAST_LINE, LAST_LINE + REGISTRY_LINE)
    registry.write_text(after, encoding="utf-8")
    added = [line for line in difflib.ndiff(before.splitlines(True), after.splitlines(True))
             if line.startswith(("+ ", "- "))]  # fmt: skip
    if added != ["+ " + REGISTRY_LINE]:
        raise RuntimeError(f"{registry}: the registry line did not go in as one line: {added}")
    return toy


def run(root: Path, *args: str, path: Path | None = None) -> subprocess.CompletedProcess:
    """``args`` in ``root`` with the package imported from ``path`` (default: its src)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("CONCEPTCOMB_")}
    env["PYTHONPATH"] = str(path or root / "src")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=root)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="toy-example-") as work:
        root = Path(work)
        toy = package_with_toy(root)
        done = run(root, sys.executable, "-m", "conceptcomb.frameworks.task_files", "toy")
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        shutil.rmtree(EXAMPLE / "task_yaml", ignore_errors=True)
        shutil.copytree(toy / "task_yaml", EXAMPLE / "task_yaml")
        shutil.copy(toy / "inspect_tasks.py", EXAMPLE / "inspect_tasks.py")
    print(f"wrote {EXAMPLE / 'inspect_tasks.py'} and {EXAMPLE / 'task_yaml'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every library the package imports is declared in pyproject.toml (issue 40: inspect_evals'
lint found ``threadpoolctl`` imported by the CGGC builder and declared nowhere).

A module a dependency happens to bring along today may be dropped by its next release; so
each third-party import (``import x``, ``from x import y``, ``importlib.import_module("x")``
with a literal name) must name a distribution that ``dependencies`` or one of the extras
lists itself.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "conceptcomb"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    """The distributions pyproject.toml names: the dependencies and every extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    return {_canonical(re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0]) for r in requirements}


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            first = node.args[0]
            text = first.value if isinstance(first, ast.Constant) else first.values[0]
            text = text.value if isinstance(text, ast.Constant) else text
            if isinstance(text, str) and text:
                names.add(text)
    return {name.split(".")[0] for name in names}


def _parse(path: Path) -> ast.AST:
    """``path``'s syntax tree, built with the collector off: on Python 3.11 a collection inside
    `ast.parse` whose finalizer prints a traceback (which parses too) fails the outer parse
    with "AST constructor recursion depth mismatch" (python/cpython#106905)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    finally:
        if enabled:
            gc.enable()


def third_party_imports() -> dict[str, list[str]]:
    """Top-level module -> the package files importing it (not the standard library's)."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for module in _imported(_parse(path)):
            if module in sys.stdlib_module_names or module in ("conceptcomb", "__future__"):
                continue
            found.setdefault(module, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_imported_library_is_declared() -> None:
    distributions = packages_distributions()
    wanted = declared()
    undeclared = []
    for module, files in sorted(third_party_imports().items()):
        names = {_canonical(name) for name in distributions.get(module, [module])}
        if not names & wanted:
            undeclared.append(f"{module} ({', '.join(sorted(names))}), imported by {files[0]}")
    assert not undeclared, f"declare in pyproject.toml (dependencies or an extra): {undeclared}"


def test_the_check_finds_an_undeclared_import(tmp_path: Path) -> None:
    tree = ast.parse("import threadpoolctl\nfrom pycocoevalcap.bleu import bleu\n")
    assert _imported(tree) == {"threadpoolctl", "pycocoevalcap"}
    tree = ast.parse('importlib.import_module(f"pycocoevalcap.{module}")\n')
    assert _imported(tree) == {"pycocoevalcap"}
    assert "threadpoolctl" in declared()  # the cggc-build extra

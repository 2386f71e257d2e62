"""No import circle: no module of the package imports one that, directly or through others,
imports it back.

The graph is read from the source with `ast`, as ``tests/test_layers.py`` does, but per
module: every import counts, wherever it sits (inside functions, under ``TYPE_CHECKING``).
An edge goes to the module an import names (``from conceptcomb.x import y`` names
``conceptcomb.x.y`` when that is a module, else ``conceptcomb.x``), not to the packages
Python runs on the way there: the package ``__init__`` files import nothing of their
sub-packages, so those edges could only make self-loops.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import conceptcomb

PACKAGE = Path(conceptcomb.__file__).parent


def module_name(path: Path) -> str:
    """``.../conceptcomb/ccpt/tasks.py`` -> ``conceptcomb.ccpt.tasks`` (a package: its name)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, modules: Iterable[str]) -> set[str]:
    """The package's modules that the module at ``path`` imports, anywhere in it."""
    module, known = module_name(path), set(modules)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def deepest(name: str) -> str | None:  # conceptcomb.a.b.func -> conceptcomb.a.b
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(deepest(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *filter(None, [base])])
            for alias in node.names:  # a submodule when it is one, else the module
                found.add(deepest(f"{base}.{alias.name}"))
    return {name for name in found if name and name.split(".")[0] == "conceptcomb"}


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    return {module: imported_modules(path, paths) for module, path in paths.items()}


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing
    itself (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def one_cycle(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """A shortest path from the component's first module back to it, within the component."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node] & members):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    raise AssertionError(f"{component} is no cycle")


def test_the_cycle_finder_finds_circles_and_self_imports() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": {"d"}}
    assert circles(graph) == [["a", "b", "c"], ["d"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert one_cycle(graph, ["d"]) == ["d", "d"]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "conceptcomb.common.errors" in graph["conceptcomb"]  # from ... import name
    assert "conceptcomb.demo" in graph["conceptcomb.cli"]  # from conceptcomb import module
    assert "conceptcomb" in graph["conceptcomb.common.results"]  # import conceptcomb
    assert "conceptcomb.common.seeds" in graph["conceptcomb.cli"]  # inside a function
    assert "conceptcomb.common.runs" in graph["conceptcomb.common.contract"]  # TYPE_CHECKING


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    found = [" -> ".join(one_cycle(graph, component)) for component in circles(graph)]
    assert found == [], "import circles (move what both need down a layer):\n" + "\n".join(found)

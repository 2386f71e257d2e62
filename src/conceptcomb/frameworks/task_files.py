"""The task files generated from a benchmark's specs: its lm-eval ``task_yaml/``, its
Inspect ``inspect_tasks.py`` and the exports of its ``__init__.py``, so that a task
variant is one spec line (and, for a new kind, its template or builder) and both
frameworks list it under the same name.

``python -m conceptcomb.frameworks.task_files [--check] [BENCHMARK...]`` writes every
registered benchmark's files (or those named); ``--check`` only lists the stale ones and
exits 1 if there are any (a test asserts there are none).

The lm-eval side is each benchmark's ``lm_eval_yaml.declaration()`` (rendered by
`conceptcomb.frameworks.lm_eval_yaml`, written to its ``YAML_DIR``). The Inspect side is
written out, one ``@task`` function per task, rather than registered in a loop: ``inspect
list tasks`` reads the ``@task`` functions of the source files without importing them, so
a task registered in a loop would run but not be listed. A benchmark declares the module in
its ``inspect_adapter`` as ``INSPECT = InspectTasks(stubs)``: a `TaskStub` per task
(function name, docstring, signature, the builder it calls).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptcomb.frameworks import lm_eval_yaml

COMMAND = lm_eval_yaml.GENERATOR  # this module
HEADER = lm_eval_yaml.HEADER
LINE = 100  # ruff's line-length (pyproject.toml): the file is written as ruff formats it


@dataclass(frozen=True)
class TaskStub:
    """One ``@task`` function: ``def <name>(<signature>) -> Task: return builder(...)``.

    With ``options`` (a TypedDict) its signature is ``**options: Unpack[options]`` and the
    builder gets ``(name, options)``; otherwise ``params`` are its explicit parameters and
    the builder gets ``(name, *params)``. ``named=False``: the builder gets no task name
    (the parametric ``conceptcomb/cggc``, registered under ``registered_as``)."""

    name: str
    doc: str
    builder: Callable[..., Any]
    options: type | None = None
    params: tuple[str, ...] = ()  # 'data_dir: str | None = None', ... (no comma inside one)
    named: bool = True
    registered_as: str | None = None

    @property
    def signature(self) -> str:
        if self.options is not None:
            return f"**options: Unpack[{self.options.__name__}]"
        return ", ".join(self.params)

    @property
    def arguments(self) -> list[str]:
        names = ["options"] if self.options is not None else [p.split(":")[0] for p in self.params]
        return [f'"{self.name}"', *names] if self.named else names

    def render(self) -> str:
        decorator = f'@task(name="{self.registered_as}")' if self.registered_as else "@task"
        head = _wrapped(f"def {self.name}(", self.signature, ") -> Task:", "")
        call = _wrapped(
            f"    return {self.builder.__name__}(", ", ".join(self.arguments), ")", "    "
        )
        return f"{decorator}\n{head}\n{_docstring(self.doc)}\n{call}\n"


@dataclass(frozen=True)
class InspectTasks:
    """A benchmark's ``inspect_tasks.py``: ``stubs()``, one per spec in the order of
    ``TASKS``, after ``extras`` (tasks without a spec). Its docstring points to the adapter
    module, whose docstring says what a user needs (the ``-T`` options): one place for it."""

    stubs: Callable[[], list[TaskStub]]
    extras: tuple[TaskStub, ...] = ()

    def names(self) -> list[str]:
        """The task functions' names, in the order of ``TASKS``."""
        return [stub.name for stub in (*self.extras, *self.stubs())]

    def render(self) -> str:
        per_spec = self.stubs()
        stubs = [*self.extras, *per_spec]
        names = [stub.name for stub in stubs]
        if len(set(names)) != len(names):
            raise ValueError(f"two Inspect tasks of one name: {sorted(names)}")
        adapter = stubs[0].builder.__module__
        doc = textwrap.fill(
            f"The Inspect tasks of `{adapter.rpartition('.')[0]}`: one ``@task`` function per "
            f"task, a call into a builder of `{adapter}` (its docstring: the ``-T`` options).",
            LINE - 3,
        )
        functions = ["\n\n".join(stub.render() for stub in self.extras)] if self.extras else []
        functions.append(
            "# One @task per task name, each a call into a builder of `inspect_adapter`.\n\n\n"
            + "\n\n".join(stub.render() for stub in per_spec)
        )
        tasks = "".join(f'    "{name}": {name},\n' for name in names)
        return (
            # isort: one blank line between the imports and a comment, two before a def
            f'{HEADER}"""{doc}"""\n\n{_imports(stubs)}\n'
            + ("\n" if self.extras else "")
            + "\n\n".join(functions)
            + "\n\n# Every task by name, in the order of the functions above.\n"
            + f"TASKS: dict[str, Callable[..., Task]] = {{\n{tasks}}}\n"
        )


# Where the generated part of a benchmark's ``__init__.py`` begins (above it: its docstring).
INIT_MARK = f"# The @task functions, exported (written by `python -m {COMMAND}`)"


def init_text(current: str, package: str, names: Iterable[str]) -> str:
    """A benchmark's ``__init__.py``: what comes before `INIT_MARK` in ``current`` (its
    docstring), then ``__all__``, every ``@task`` function of ``inspect_tasks``, as
    inspect_evals' packages export theirs, imported on first use: importing the benchmark
    (its core, its lm-eval hooks) does not import Inspect or the adapters."""
    head = current.split(INIT_MARK)[0].rstrip()
    listed = "".join(f'    "{name}",\n' for name in sorted(names))  # as ruff sorts them
    return (
        (f"{head}\n\n" if head else "")
        + f"{INIT_MARK}:\n"
        + "# on first use, so that importing the benchmark does not import Inspect.\n"
        + f"__all__ = [\n{listed}]\n\n\n"
        + "def __getattr__(name: str) -> object:\n"
        + "    if name in __all__:\n"
        + f"        from {package} import inspect_tasks\n\n"
        + "        return getattr(inspect_tasks, name)\n"
        + '    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")\n'
    )


def _wrapped(opening: str, inner: str, closing: str, indent: str) -> str:
    """``opening + inner + closing`` on one line if it fits, else as ruff breaks it: the
    contents on their own line, or one item a line with a trailing comma."""
    if len(opening + inner + closing) <= LINE:
        return opening + inner + closing
    if len(indent + "    " + inner) <= LINE:
        return f"{opening}\n{indent}    {inner}\n{indent}{closing}"
    items = "".join(f"{indent}    {item.strip()},\n" for item in inner.split(","))
    return f"{opening}\n{items}{indent}{closing}"


def _docstring(doc: str) -> str:
    """A function's docstring, indented, its first line wrapped if too long."""
    lines = doc.strip().splitlines()
    if len(lines) == 1 and len(f'    """{lines[0]}"""') > LINE:
        lines = textwrap.wrap(lines[0], LINE - 4 - 3)
    text = "\n".join(f"    {line}" if line else "" for line in lines)
    return f'    """{text.removeprefix("    ")}"""'


def _imports(stubs: Iterable[TaskStub]) -> str:
    """The module's imports, as ruff's isort orders them."""
    stubs = list(stubs)
    names: dict[str, set[str]] = {}
    for obj in [s.builder for s in stubs] + [s.options for s in stubs if s.options is not None]:
        names.setdefault(obj.__module__, set()).add(obj.__name__)
    third_party = "from inspect_ai import Task, task\n"
    if any(stub.options is not None for stub in stubs):
        third_party += "from typing_extensions import Unpack\n"
    ours = "".join(_from(module, sorted(names[module], key=_isort)) for module in sorted(names))
    return (
        "from __future__ import annotations\n\nfrom collections.abc import Callable\n\n"
        f"{third_party}\n{ours}"
    )


def _isort(name: str) -> tuple[int, str]:
    """isort's order by type: CONSTANTS, Classes, functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[0].isupper() else 2
    return kind, name


def _from(module: str, names: list[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= LINE:
        return line + "\n"
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"


# --- one benchmark's files -------------------------------------------------------------------


@dataclass(frozen=True)
class TaskFiles:
    """The generated files of the benchmark whose modules are in ``package``."""

    package: str  # conceptcomb.ccpt

    def _module(self, name: str) -> Any:
        return importlib.import_module(f"{self.package}.{name}")

    @property
    def yaml_dir(self) -> Path:
        return Path(self._module("lm_eval_yaml").YAML_DIR)

    @property
    def inspect_path(self) -> Path:
        return Path(self._module("inspect_adapter").__file__).with_name("inspect_tasks.py")

    @property
    def init_path(self) -> Path:
        return self.inspect_path.with_name("__init__.py")

    def init_file(self) -> str:
        names = self._module("inspect_adapter").INSPECT.names()
        return init_text(_read(self.init_path) or "", self.package, names)

    def yaml_files(self) -> dict[str, str]:
        return self._module("lm_eval_yaml").declaration().render_all()

    def inspect_file(self) -> str:
        return self._module("inspect_adapter").INSPECT.render()

    def stale(self) -> list[Path]:
        """Every generated file that is missing, differs or is left over."""
        stale = [
            self.yaml_dir / name
            for name in lm_eval_yaml.stale_files(self.yaml_files(), self.yaml_dir)
        ]
        if _read(self.inspect_path) != self.inspect_file():
            stale.append(self.inspect_path)
        if _read(self.init_path) != self.init_file():
            stale.append(self.init_path)
        return stale

    def write(self) -> None:
        lm_eval_yaml.write(self.yaml_files(), self.yaml_dir)
        text = self.inspect_file()
        if _read(self.inspect_path) != text:
            self.inspect_path.write_text(text, encoding="utf-8")
        init = self.init_file()
        if _read(self.init_path) != init:
            self.init_path.write_text(init, encoding="utf-8")


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def registered(keys: Iterable[str] = ()) -> list[TaskFiles]:
    """The files of the registered benchmarks (of those named by ``keys``, if any)."""
    # The one import of the registry below it (tests/test_layers.py allows it): this
    # command iterates the registered benchmarks, as packaging does (hatch_build.py).
    from conceptcomb.benchmarks import benchmarks, get

    chosen = [get(key) for key in keys] or list(benchmarks())
    return [TaskFiles(b.inspect_tasks.rpartition(".")[0]) for b in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {COMMAND}",
        description="Writes each registered benchmark's lm-eval task_yaml/ and Inspect "
        "inspect_tasks.py from its task specs, so that neither drifts from the code.",
    )
    parser.add_argument("benchmarks", nargs="*", metavar="BENCHMARK", help="only these (keys)")
    parser.add_argument("--check", action="store_true", help="only list stale files (exit 1)")
    args = parser.parse_args(argv)
    try:
        files = registered(args.benchmarks)
    except KeyError as err:
        parser.error(str(err.args[0]))
    if not args.check:
        for benchmark in files:
            benchmark.write()
        return 0
    stale = [path for benchmark in files for path in benchmark.stale()]
    for path in stale:
        print(f"stale: {path} (run: python -m {COMMAND})")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

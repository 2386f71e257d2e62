"""A benchmark of ``benchmarks/``, side by side: a git commit against the working tree.

    python benchmarks/against.py REF [--rounds 5] [--warmup 0] [--ref-script] -- BENCHMARK
        [ARGS...]

Builds an environment for the commit REF and one for the working tree, runs
``benchmarks/BENCHMARK`` (``.py`` may be left out) with ARGS alternately in both, ``--rounds``
rounds in the order A B B A A B ... (A: REF, B: the tree; ``--warmup`` rounds before them,
not counted), and prints, for each figure the runs printed, the median of REF's runs, the
median of the tree's, the ratio tree / REF of the medians and the spread of the per-round
ratios (min to max), with the load average at the start and at the end. Each run's whole
output is kept in a log folder it names.

**Figures.** A benchmark reports what it measured in lines of the form

    figure: NAME = VALUE UNIT

(``figure: validate-bundle, one bundle, wall = 5.81 s``; NAME is everything up to the last
`` = ``, VALUE a number, UNIT optional). Other lines are ignored; where a run prints a
figure twice the last one counts. By default both environments run the working tree's copy
of the benchmark (the same measuring code for both; it prints the figure lines), so REF's
package must have what that copy imports; with ``--ref-script`` REF runs its own copy
(which may print no figure lines at all, or other ones).

**The environments.** Each is the package as its code stands, installed non-editable into
a virtual environment of its own whose site-packages holds links to every other
distribution of the environment running this script (what ``python -m venv
--system-site-packages`` does for a system Python, done for a virtual one). REF's code
comes from ``git archive REF``, the tree's from a copy of its files (tracked and untracked
but not ignored, as ``git ls-files`` lists them); each is built into a wheel
(``pip wheel --no-deps``) and installed with ``pip install --no-deps --no-index``, so
the package's own files, its entry points and the YAML its wheel puts under
``lm_eval/tasks/`` are REF's or the tree's, and nothing else differs. Building needs no
network when the build backend (``[build-system] requires``) is importable here; otherwise
it is installed once into a cached build environment (the one step that asks the package
index). Environments are cached under ``~/.cache/conceptcomb/against`` (``--cache``, or
``CONCEPTCOMB_AGAINST_CACHE``): REF's by its full commit hash, the tree's by a hash of its
files, each with a key of the dependencies it links to (the names and versions of the
installed distributions), so a second comparison starts at once.

Why that is a fair comparison: the dependencies are the same files for both (the same
numpy, aiohttp, lm-eval, Inspect, the same interpreter), and both packages are regular
installs made the same way; only our code differs. What it does not show: a change of the
dependencies themselves (a new pin, another release), which needs two full installs
(README). A REF whose ``pyproject.toml`` needs a dependency the current environment lacks
fails at import, and the script prints what ``pip check`` says about REF's package.

The runs see neither ``PYTHONPATH`` nor the running virtual environment: each has its own
``bin/`` first on ``PATH`` (its ``conceptcomb``, and ``lm_eval``, ``inspect`` and the other
scripts of the dependencies with its own interpreter) and ``VIRTUAL_ENV`` set. They run in
the root of the copy their benchmark script comes from. A benchmark run this way must leave
nothing that the next run reuses (a cache of its own in a temporary folder, as they all do).

Exit status: 0 when every run ended with 0; 1 when one failed (its output's tail is
printed); 2 when REF is not a commit or the benchmark does not exist, said in one line
before anything is built.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

USAGE = "against.py REF [--rounds N] [--warmup N] [--ref-script] -- BENCHMARK [ARGS...]"
FIGURE = re.compile(r"^figure: (?P<name>.+) = (?P<value>\S+)(?: (?P<unit>\S.*?))?\s*$")
DEFAULT_CACHE = Path.home() / ".cache" / "conceptcomb" / "against"
TREES_KEPT = 3  # the tree's environments kept in the cache, newest first


class Refused(Exception):
    """A wrong argument: one line, exit status 2."""


# --- figures ------------------------------------------------------------------------------
def parse_figures(output: str) -> dict[str, tuple[float, str]]:
    """``{name: (value, unit)}`` of the ``figure:`` lines in ``output`` (the last of a name)."""
    figures: dict[str, tuple[float, str]] = {}
    for line in output.splitlines():
        match = FIGURE.match(line.strip())
        if not match:
            continue
        try:
            value = float(match["value"])
        except ValueError:
            continue
        figures[match["name"].strip()] = (value, match["unit"] or "")
    return figures


def number(value: float) -> str:
    return f"{value:.4g}"


def ratio_text(value: float) -> str:
    return f"{value:.3f}"


@dataclass
class Compared:
    """One figure over the rounds: REF's and the tree's values, in round order."""

    name: str
    unit: str
    ref: list[float] = field(default_factory=list)
    tree: list[float] = field(default_factory=list)

    def ratios(self) -> list[float]:
        """Per round, the tree's value over REF's (rounds where both printed it)."""
        return [b / a for a, b in zip(self.ref, self.tree, strict=False) if a]

    def row(self) -> list[str]:
        if not self.ref or not self.tree:
            side = "REF" if self.ref else "the tree"
            values = self.ref or self.tree
            return [self.name, self.unit, number(statistics.median(values)) if self.ref else "-",
                    number(statistics.median(values)) if self.tree else "-", "-",
                    f"only {side} printed it"]  # fmt: skip
        ref, tree = statistics.median(self.ref), statistics.median(self.tree)
        ratios = self.ratios()
        spread = f"{ratio_text(min(ratios))} - {ratio_text(max(ratios))}" if ratios else "-"
        return [self.name, self.unit, number(ref), number(tree),
                ratio_text(tree / ref) if ref else "-", spread]  # fmt: skip


def compare(runs: list[tuple[str, dict[str, tuple[float, str]]]]) -> list[Compared]:
    """The figures of runs ``[(side, figures), ...]`` (side "ref" or "tree"), in the order
    they first appear; a round's value is each side's n-th run."""
    table: dict[str, Compared] = {}
    for side, figures in runs:
        for name, (value, unit) in figures.items():
            entry = table.setdefault(name, Compared(name, unit))
            if side == "tree":
                entry.unit = unit  # the tree's unit, where the two differ
            (entry.ref if side == "ref" else entry.tree).append(value)
    return list(table.values())


def render(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) if i < 2 else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(row, widths, strict=True))]  # fmt: skip
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# --- git ----------------------------------------------------------------------------------
def git(repo: Path, *args: str, data: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=not data)


def resolve_commit(repo: Path, ref: str) -> str:
    done = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise Refused(f"REF {ref!r} is not a commit of {repo}: give a commit hash, branch or "
                      f"tag (`git -C {repo} log --oneline`)")  # fmt: skip
    return done.stdout.strip()


def benchmark_name(repo: Path, name: str, sha: str, ref_script: bool) -> str:
    """``benchmarks/NAME`` (``.py`` added when missing) as a path in the repository; it must
    be in the tree and, with ``--ref-script``, in REF."""
    folder = repo / "benchmarks"
    candidates = [name] if name.endswith(".py") else [name, f"{name}.py"]
    if "/" in name or name in ("against", "against.py"):
        candidates = []
    found = next((c for c in candidates if (folder / c).is_file()), None)
    if found is None:
        known = sorted(p.name for p in folder.glob("*.py") if p.name != "against.py")
        raise Refused(f"BENCHMARK {name!r} is not a script of {folder}: give one of "
                      f"{', '.join(known) or '(none there)'}")  # fmt: skip
    if ref_script and git(repo, "cat-file", "-e", f"{sha}:benchmarks/{found}").returncode:
        raise Refused(f"BENCHMARK {found!r} is not in REF {sha[:12]} (--ref-script runs its "
                      f"own copy): leave out --ref-script (the tree's copy in both)")  # fmt: skip
    return f"benchmarks/{found}"


def describe_tree(repo: Path) -> str:
    """``HEAD 1234567`` and whether the tree holds changes not committed."""
    head = git(repo, "rev-parse", "--short", "HEAD").stdout.strip()
    changed = git(repo, "status", "--porcelain", "--untracked-files=normal").stdout.strip()
    return f"HEAD {head}" + (" and changes not committed" if changed else "")


def export_commit(repo: Path, sha: str, target: Path) -> None:
    done = git(repo, "archive", "--format=tar", sha, data=True)
    if done.returncode != 0:
        raise RuntimeError(f"git archive {sha} failed: {done.stderr.decode(errors='replace')}")
    target.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:") as archive:
        if hasattr(tarfile, "tar_filter"):  # 3.11.4 and later
            archive.extractall(target, filter="tar")
        else:  # pragma: no cover
            archive.extractall(target)


def tree_files(repo: Path) -> list[str]:
    done = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if done.returncode != 0:
        raise RuntimeError(f"git ls-files failed in {repo}: {done.stderr}")
    names = sorted(set(filter(None, done.stdout.split("\0"))))
    return [name for name in names if os.path.lexists(repo / name)]  # deleted: not there


def tree_hash(repo: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in names:
        path = repo / name
        digest.update(name.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        else:
            digest.update(oct(path.stat().st_mode & 0o111).encode() + path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def export_tree(repo: Path, names: list[str], target: Path) -> None:
    for name in names:
        source, copy = repo / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), copy)
        elif source.is_file():
            shutil.copy2(source, copy)


# --- environments -------------------------------------------------------------------------
def site_packages(prefix: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(prefix)}))


def project(source: Path) -> dict:
    path = source / "pyproject.toml"
    if not path.is_file():
        raise RuntimeError(f"{path}: missing (the package is built from it)")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def distribution(info: Path) -> str:
    """``Some_Name`` of ``Some_Name-1.0.dist-info``, normalized."""
    return normalized(info.name.removesuffix(".dist-info").rsplit("-", 1)[0])


def infos_of(site: Path, name: str) -> list[Path]:
    return [info for info in site.glob("*.dist-info") if distribution(info) == normalized(name)]


def owned_files(site: Path, name: str) -> set[PurePosixPath]:
    """The files the installed distribution ``name`` holds in ``site`` (its RECORD)."""
    owned: set[PurePosixPath] = set()
    for info in infos_of(site, name):
        owned.add(PurePosixPath(info.name))
        record = info / "RECORD"
        if record.is_file():
            for line in record.read_text(encoding="utf-8").splitlines():
                path = PurePosixPath(line.rsplit(",", 2)[0])
                if path.parts and ".." not in path.parts:
                    owned.add(path)
    return owned


def dependencies_key(site: Path, name: str) -> str:
    """What the environments link to: the interpreter and every distribution but ours."""
    names = sorted(p.name for p in site.glob("*.dist-info") if distribution(p) != normalized(name))
    text = "\n".join([sys.version, str(site), *names])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def link_overlay(source: Path, target: Path, owned: set[PurePosixPath]) -> None:
    """``target``: links to everything in ``source`` but the files of ``owned`` (folders
    that hold some of them are made, and filled the same way, one level at a time)."""
    holders = {parent for path in owned for parent in path.parents if parent != PurePosixPath()}

    def fully_owned(folder: PurePosixPath) -> bool:
        for root, dirs, files in os.walk(source / folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            relative = PurePosixPath(Path(root).relative_to(source).as_posix())
            if any(relative / file not in owned for file in files):
                return False
        return True

    def fill(folder: PurePosixPath) -> None:
        (target / folder).mkdir(parents=True, exist_ok=True)
        for entry in sorted(os.scandir(source / folder), key=lambda e: e.name):
            path = folder / entry.name
            if path in owned:
                continue
            if path in holders and entry.is_dir(follow_symlinks=False):
                if not fully_owned(path):
                    fill(path)
                continue
            link = target / path
            if not os.path.lexists(link):
                os.symlink(source / path, link)

    fill(PurePosixPath())


def link_scripts(source_bin: Path, venv: Path, owned_scripts: set[str]) -> None:
    """The dependencies' scripts in the new environment's ``bin/``: a Python script's copy
    with the new interpreter in its first line, anything else linked."""
    python = venv / "bin" / "python"
    for entry in sorted(source_bin.iterdir()):
        target = venv / "bin" / entry.name
        if os.path.lexists(target) or entry.name in owned_scripts or entry.is_dir():
            continue
        if entry.name.startswith(("activate", "Activate", "python")):
            continue
        head = b""
        if entry.is_file() and not entry.is_symlink():
            with entry.open("rb") as handle:
                head = handle.readline()
        shebang = head[2:].strip().decode(errors="replace") if head.startswith(b"#!") else ""
        interpreter = Path(shebang.split(" ", 1)[0]) if shebang else None
        ours = interpreter is not None and interpreter.parent == source_bin
        if ours and interpreter.name.startswith("python"):
            body = entry.read_bytes().split(b"\n", 1)[1]
            target.write_bytes(f"#!{python}\n".encode() + body)
            target.chmod(entry.stat().st_mode)
        else:
            os.symlink(entry, target)


def build_python(source: Path, cache: Path) -> Path:
    """A python that can build ``source`` without an index: this one when its build
    backend is importable here, else a cached build environment (made once)."""
    requires = project(source).get("build-system", {}).get("requires", ["setuptools"])
    if backend_importable(requires):
        return Path(sys.executable)
    key = hashlib.sha256("\n".join(sorted(requires)).encode()).hexdigest()[:12]
    tools = cache / f"build-{key}"
    python = tools / "bin" / "python"
    if not (tools / "ready").is_file():
        shutil.rmtree(tools, ignore_errors=True)
        print(f"installing the build requirements ({', '.join(requires)}) once into {tools} "
              "(the one step that asks the package index)", flush=True)  # fmt: skip
        run_checked([sys.executable, "-m", "venv", str(tools)])
        run_checked([str(python), "-m", "pip", "install", "--quiet", *requires])
        (tools / "ready").write_text("\n".join(requires) + "\n")
    return python


def backend_importable(requires: list[str]) -> bool:
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - pip vendors it
        from pip._vendor.packaging.requirements import Requirement
    from importlib import metadata

    for text in requires:
        requirement = Requirement(text)
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            return False
        if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
            return False
    return True


def run_checked(command: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=clean_env())
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                           f"{done.stdout[-3000:]}{done.stderr[-3000:]}")  # fmt: skip
    return done.stdout


def clean_env(venv: Path | None = None) -> dict[str, str]:
    """This process's environment less its Python settings and virtual environment; with
    ``venv``, that environment's ``bin/`` first on ``PATH``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP",
                        "__PYVENV_LAUNCHER__")}  # fmt: skip
    ours = {str(Path(sys.prefix) / "bin")}
    if os.environ.get("VIRTUAL_ENV"):
        ours.add(str(Path(os.environ["VIRTUAL_ENV"]) / "bin"))
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p not in ours]
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    return env


@dataclass
class Side:
    """One side of the comparison: its label, its code's copy and its environment."""

    label: str
    source: Path
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def build_env(source: Path, venv: Path, cache: Path) -> None:
    """The package of ``source`` installed non-editable in ``venv``, every other
    distribution linked from this environment."""
    name = project(source).get("project", {}).get("name")
    if not name:
        raise RuntimeError(f"{source / 'pyproject.toml'}: no [project] name")
    shutil.rmtree(venv, ignore_errors=True)
    wheels = venv / "wheel"
    run_checked([str(build_python(source, cache)), "-m", "pip", "wheel", "--isolated",
                 "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                 "--wheel-dir", str(wheels), str(source)])  # fmt: skip
    built = sorted(wheels.glob("*.whl"))
    if len(built) != 1:
        raise RuntimeError(f"building {source} made {len(built)} wheels, not one")
    run_checked([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    here, site = site_packages(Path(sys.prefix)), site_packages(venv)
    with zipfile.ZipFile(built[0]) as wheel:  # what the install writes, to be made here
        wheel_files = {PurePosixPath(n) for n in wheel.namelist() if ".data/" not in n}
    link_overlay(here, site, owned_files(here, name) | wheel_files)
    # pip must neither see this environment's installed copy nor write through a link:
    if infos_of(site, name):
        raise RuntimeError(f"{site}: {name}'s installed metadata was linked, not left out")
    for path in wheel_files:
        if not is_inside(site / path, site):
            raise RuntimeError(f"{site / path} leads out of {site}: not installed there")
    link_scripts(Path(sys.prefix) / "bin", venv, scripts_of(here, name))
    run_checked([str(venv / "bin" / "python"), "-m", "pip", "install", "--isolated", "--quiet",
                 "--no-deps", "--no-index", str(built[0])])  # fmt: skip
    for entry in Path(sys.prefix).iterdir():  # share/ (data some packages look for), ...
        if not os.path.lexists(venv / entry.name):  # after the install: none written through
            os.symlink(entry, venv / entry.name)


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (existing or not) resolves inside ``root`` (no link leads out)."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def scripts_of(site: Path, name: str) -> set[str]:
    """The console scripts the installed ``name`` put in ``bin/`` (its entry points)."""
    scripts: set[str] = set()
    for info in infos_of(site, name):
        points = info / "entry_points.txt"
        section = ""
        for line in points.read_text().splitlines() if points.is_file() else []:
            if line.startswith("["):
                section = line.strip("[] ")
            elif "=" in line and section in ("console_scripts", "gui_scripts"):
                scripts.add(line.split("=", 1)[0].strip())
    return scripts


def unmet(side: Side, name: str) -> list[str]:
    """What ``pip check`` says about our package in ``side``'s environment."""
    done = subprocess.run([str(side.python), "-m", "pip", "check"], capture_output=True,
                          text=True, env=clean_env(side.venv))  # fmt: skip
    return [line for line in done.stdout.splitlines()
            if normalized(line.split(" ", 1)[0]) == normalized(name)]  # fmt: skip


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ready_side(label: str, home: Path, cache: Path, export, rebuild: bool) -> Side:
    """``home``/src (the code, made by ``export(path)``) and ``home``/env-KEY (its
    environment), reused when built before."""
    source = home / "src"
    if rebuild:
        shutil.rmtree(home, ignore_errors=True)
    if not (home / "src.ready").is_file():
        shutil.rmtree(source, ignore_errors=True)
        export(source)
        (home / "src.ready").write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    name = project(source).get("project", {}).get("name", "")
    key = dependencies_key(site_packages(Path(sys.prefix)), name)
    venv = home / f"env-{key}"
    if (venv / "ready").is_file():
        print(f"{label}: environment {venv} (cached)", flush=True)
    else:
        for stale in home.glob("env-*"):  # built on dependencies that have changed since
            shutil.rmtree(stale, ignore_errors=True)
        started = time.perf_counter()
        build_env(source, venv, cache)
        (venv / "ready").write_text(json.dumps({"python": sys.version, "from": sys.prefix}))
        print(f"{label}: environment {venv} built in {time.perf_counter() - started:.1f} s",
              flush=True)  # fmt: skip
    side = Side(label, source, venv)
    for line in unmet(side, name):
        print(f"  warning, {label}'s package: {line}", flush=True)
    return side


def prune_trees(cache: Path, keep: Path) -> None:
    trees = sorted(cache.glob("tree-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in [t for t in trees if t != keep][TREES_KEPT - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


# --- the runs -----------------------------------------------------------------------------
def order(rounds: int) -> list[tuple[int, str]]:
    """``(round, side)`` in the order they run: A B, B A, A B, ..."""
    sequence = []
    for number_ in range(rounds):
        pair = ("ref", "tree") if number_ % 2 == 0 else ("tree", "ref")
        sequence += [(number_ + 1, side) for side in pair]
    return sequence


def run_once(side: Side, script_root: Path, script: str, args: list[str], log: Path) -> str:
    env = clean_env(side.venv)
    started, at = time.perf_counter(), os.getloadavg()[0]
    done = subprocess.run([str(side.python), str(script_root / script), *args],
                          capture_output=True, text=True, cwd=script_root, env=env)  # fmt: skip
    seconds = time.perf_counter() - started
    log.write_text(f"{done.stdout}\n--- stderr ---\n{done.stderr}")
    figures = parse_figures(done.stdout)  # not stderr: its progress bars may cut a line
    print(f"  {side.label}: {seconds:.1f} s, {len(figures)} figures, load {at:.2f} at its "
          f"start; output {log}", flush=True)  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join([*done.stdout.splitlines()[-15:], *done.stderr.splitlines()[-15:]])
        raise Failed(f"{side.label}'s run ended with {done.returncode}; its last lines:\n{tail}")
    return done.stdout


class Failed(Exception):
    """A benchmark run ended with a status other than 0: exit status 1."""


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        raise Refused(f"no `--` before the benchmark: {USAGE}")
    at = argv.index("--")
    ours, theirs = argv[:at], argv[at + 1 :]
    if not theirs:
        raise Refused(f"no BENCHMARK after `--`: {USAGE}")
    return ours, theirs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="against.py",
        usage=USAGE,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("ref", metavar="REF", help="a commit: hash, branch or tag")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of one run each (5)")
    parser.add_argument(
        "--ref-script", action="store_true", help="REF runs its own copy of the benchmark"
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        help="the repository (the one this script is in)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("CONCEPTCOMB_AGAINST_CACHE") or DEFAULT_CACHE),
        help=f"where the environments are kept ({DEFAULT_CACHE})",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="rounds run first and not counted (a first run that fills caches or the "
        "page cache is slower; 0)",
    )
    parser.add_argument("--rebuild", action="store_true", help="build both environments again")
    if any(flag in argv[: argv.index("--") if "--" in argv else len(argv)]
           for flag in ("-h", "--help")):  # fmt: skip
        parser.print_help()
        return 0
    try:
        ours, theirs = split_argv(argv)
        args = parser.parse_args(ours)
        if args.rounds < 1:
            raise Refused(f"--rounds {args.rounds}: give 1 or more")
        if args.warmup < 0:
            raise Refused(f"--warmup {args.warmup}: give 0 or more")
        repo = args.repo.resolve()
        if git(repo, "rev-parse", "--git-dir").returncode != 0:
            raise Refused(f"--repo {repo} is not a git repository: give the repository's folder")
        sha = resolve_commit(repo, args.ref)
        script = benchmark_name(repo, theirs[0], sha, args.ref_script)
    except Refused as refused:
        print(f"against.py: {refused}", file=sys.stderr)
        return 2
    try:
        return compare_sides(args, repo, sha, script, theirs[1:])
    except Failed as failed:
        print(f"against.py: {failed}", file=sys.stderr)
        return 1


def compare_sides(args: argparse.Namespace, repo: Path, sha: str, script: str, rest: list[str]):
    cache = args.cache.expanduser().resolve()
    described = describe_tree(repo)
    start_load = load()
    print(f"load average at start: {start_load} ({os.cpu_count()} CPUs)", flush=True)
    with locked(cache):
        ref = ready_side(f"REF {sha[:12]}", cache / sha, cache,
                         lambda to: export_commit(repo, sha, to), args.rebuild)  # fmt: skip
        names = tree_files(repo)
        home = cache / f"tree-{tree_hash(repo, names)[:16]}"
        tree = ready_side("tree", home, cache,
                          lambda to: export_tree(repo, names, to), args.rebuild)  # fmt: skip
        home.touch()
        prune_trees(cache, home)
    sides = {"ref": ref, "tree": tree}
    logs = cache / "runs" / time.strftime("%Y%m%d-%H%M%S")
    logs.mkdir(parents=True, exist_ok=True)
    copy = "each side's own copy" if args.ref_script else "the tree's copy in both"
    command = " ".join([script, *rest])
    print(f"{command}: {args.rounds} rounds, {copy}", flush=True)
    runs: list[tuple[str, dict[str, tuple[float, str]]]] = []
    current = 0
    for round_, side in order(args.warmup + args.rounds):
        counted = round_ - args.warmup
        if round_ != current:
            current = round_
            print(f"round {counted}" if counted > 0 else "warm-up, not counted", flush=True)
        root = sides[side].source if args.ref_script else tree.source
        log = logs / (f"{counted}-{side}.txt" if counted > 0 else f"warmup{round_}-{side}.txt")
        output = run_once(sides[side], root, script, rest, log)
        if counted > 0:
            runs.append((side, parse_figures(output)))
    end_load = load()
    table = compare(runs)
    print()
    print(command)
    print(f"REF {sha[:12]} against the tree ({described}), {args.rounds} rounds "
          f"(order A B B A ...); ratio: tree / REF of the medians; spread: of the "
          f"per-round ratios")  # fmt: skip
    if table:
        header = ["figure", "unit", f"REF {sha[:7]}", "tree", "tree/REF", "spread"]
        print(render([entry.row() for entry in table], header))
    else:
        print("no figure lines (`figure: NAME = VALUE UNIT`) in the runs' output")
    print(f"load average (1, 5, 15 min): {start_load} at start, {end_load} at the end; "
          f"outputs in {logs}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

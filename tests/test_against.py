"""benchmarks/against.py on a throwaway repository: a tiny package whose first commit is
REF and whose working tree changes it, and a tiny benchmark that prints figures. The table
the script prints holds each side's median, their ratio and the per-round ratios' spread
of what the runs printed, in the order A B B A; wrong arguments stop it before building."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "against.py"

BENCHMARK = """\
import json, os, sys
import tinypkg

counter = os.environ["TINY_COUNTER"]
turn = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(turn + 1))
speed = tinypkg.VALUE * (1 + turn / 10)
print("some other output")
print(f"figure: speed, one pass = {speed} s")
print(f"figure: size = {tinypkg.VALUE * 100} MB")
print("figure: not a number = n/a s")
if tinypkg.VALUE == 3.0:
    print("figure: new in the tree = 7 ms")
print("progress 10%\\rprogress 100%", file=sys.stderr)
with open(os.environ["TINY_LOG"], "a") as log:
    log.write(json.dumps({"value": tinypkg.VALUE, "speed": speed, "prefix": sys.prefix}) + "\\n")
"""


# The tiny package's build backend, in its own tree: building it needs nothing installed
# (the environments are built with --no-build-isolation --no-index).
BACKEND = """\
import base64, hashlib, pathlib, zipfile

def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {f"tinypkg/{p.name}": p.read_bytes() for p in pathlib.Path("tinypkg").glob("*.py")}
    info = "tinypkg-0.1.dist-info"
    files[f"{info}/METADATA"] = b"Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 0.1\\n"
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = "".join(f"{n},{_digest(d)},{len(d)}\\n" for n, d in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\\n").encode()
    name = "tinypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return name
"""


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def _repo(root: Path) -> tuple[Path, str]:
    repo = root / "repo"
    (repo / "tinypkg").mkdir(parents=True)
    (repo / "benchmarks").mkdir()
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "tiny_backend"\nbackend-path = ["."]\n\n'
        '[project]\nname = "tinypkg"\nversion = "0.1"\n'
    )
    (repo / "tiny_backend.py").write_text(BACKEND)
    (repo / "tinypkg" / "__init__.py").write_text("VALUE = 2.0\n")
    (repo / "benchmarks" / "tiny.py").write_text(BENCHMARK)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "tinypkg" / "__init__.py").write_text("VALUE = 3.0\n")  # the tree, not committed
    return repo, first


def _against(repo: Path, cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), *args[:-1], "--repo", str(repo), "--cache",
               str(cache), "--", args[-1]]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})  # fmt: skip


def test_against_prints_the_runs_figures_side_by_side(tmp_path: Path) -> None:
    repo, first = _repo(tmp_path)
    log = tmp_path / "runs.jsonl"
    done = _against(repo, tmp_path / "cache", first[:8], "--rounds", "2", "tiny",
                    TINY_COUNTER=str(tmp_path / "counter"), TINY_LOG=str(log))  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    # Each side ran its own package, from its own environment, in the order A B B A.
    assert [run["value"] for run in runs] == [2.0, 3.0, 3.0, 2.0]
    prefixes = {run["prefix"] for run in runs}
    assert len(prefixes) == 2 and sys.prefix not in prefixes
    ref = [run["speed"] for run in runs if run["value"] == 2.0]
    tree = [run["speed"] for run in runs if run["value"] == 3.0]
    ratios = [b / a for a, b in zip(ref, tree, strict=True)]  # round 1: A B, round 2: B A
    rows = {line.split("  ")[0]: line.split() for line in done.stdout.splitlines()}
    median_ref, median_tree = statistics.median(ref), statistics.median(tree)
    assert rows["speed, one pass"][-7:] == [
        "s", f"{median_ref:.4g}", f"{median_tree:.4g}", f"{median_tree / median_ref:.3f}",
        f"{min(ratios):.3f}", "-", f"{max(ratios):.3f}"]  # fmt: skip
    assert min(ratios) != max(ratios)  # the rounds differ: the spread is theirs
    assert rows["size"][1:] == ["MB", "200", "300", "1.500", "1.500", "-", "1.500"]
    assert rows["new in the tree"][4:] == ["ms", "-", "7", "-", *"only the tree printed it".split()]
    assert "not a number" not in rows
    assert done.stdout.count("load average") == 2
    # A second comparison reuses both environments.
    again = _against(repo, tmp_path / "cache", first, "--rounds", "1", "--warmup", "1", "tiny.py",
                     TINY_COUNTER=str(tmp_path / "counter2"), TINY_LOG=str(log))  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("(cached)") == 2, again.stdout
    # The warm-up round ran (A B) and is not counted: the table holds round 1 (B A) alone.
    assert "warm-up, not counted" in again.stdout
    speeds = [json.loads(line)["speed"] for line in log.read_text().splitlines()[4:]]
    assert speeds == pytest.approx([2.0, 3.3, 3.6, 2.6])  # the counter starts again at 0
    again_rows = {line.split("  ")[0]: line.split() for line in again.stdout.splitlines()}
    assert again_rows["speed, one pass"][-6:] == ["2.6", "3.6", "1.385", "1.385", "-", "1.385"]


def test_against_refuses_wrong_arguments_before_building(tmp_path: Path) -> None:
    repo, first = _repo(tmp_path)
    cache = tmp_path / "cache"
    (repo / "benchmarks" / "later.py").write_text(BENCHMARK)  # in the tree, not in REF
    for args, named in [
        (("not-a-commit", "tiny"), "REF 'not-a-commit'"),
        ((first, "missing"), "BENCHMARK 'missing'"),
        ((first, "--ref-script", "later"), "BENCHMARK 'later.py' is not in REF"),
    ]:
        done = _against(repo, cache, *args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and named in done.stderr, done.stderr
        assert not cache.exists()
    done = subprocess.run([sys.executable, str(SCRIPT), first, "tiny"], capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 2 and "no `--` before the benchmark" in done.stderr

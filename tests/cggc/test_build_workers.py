"""`conceptcomb cggc build --workers N`: the graphs stage in a process pool, same files."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

import pytest

from conceptcomb.cggc.dataset_build import builder
from conceptcomb.cli import main
from tests.cggc.conftest import build_args

FILES = ("compos_train.jsonl", "compos_test.jsonl", "graphs.jsonl")


def digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES}


def test_a_pool_builds_the_same_files_as_one_process(
    built_dir: Path, small_cn: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # built_dir's build filled the embedding cache: these two builds only make graphs.
    # Small chunks: the ~700 references of the small build make a dozen pool tasks, so
    # results taken out of order would show.
    monkeypatch.setattr(builder, "CHUNK", 64)
    for workers in (1, 2):
        with contextlib.redirect_stdout(io.StringIO()):
            args = [*build_args(tmp_path / f"w{workers}", small_cn), "--workers", str(workers)]
            assert main(args) == 0
    one, two = digests(tmp_path / "w1"), digests(tmp_path / "w2")
    assert one == two == digests(built_dir)  # built_dir: one worker per core, chunks of 512
    info = json.loads((tmp_path / "w2" / "build_info.json").read_text())
    assert info["counts"]["graphs_built"] > 3 * builder.CHUNK  # several chunks to order


def test_workers_below_one_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    assert main(["cggc", "build", "--out", str(tmp_path), "--workers", "0"]) != 0
    err = capsys.readouterr().err.strip()
    assert "--workers" in err and len(err.splitlines()) == 1

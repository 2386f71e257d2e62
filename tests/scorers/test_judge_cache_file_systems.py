"""The judge cache on a network file system: SQLite's write-ahead log needs memory shared by
the processes using the file, which NFS, CIFS or Lustre do not give. There the cache falls
back to the rollback journal and says so once, in one line, with what to do.

The file system type is read from /proc/mounts; a fake mounts table names the test's folder
as an NFS mount (or a local one)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conceptcomb.scorers import judge_cache
from conceptcomb.scorers.judge_cache import JudgeCache, network_file_system


def fake_mounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *entries: tuple[Path, str]
) -> None:
    """A /proc/mounts naming ``entries`` (mount point, type) after a local root."""
    lines = ["/dev/root / ext4 rw,relatime 0 0"]
    for mount, kind in entries:
        escaped = str(mount).replace(" ", "\\040")  # as the kernel writes a space
        lines.append(f"server:/export {escaped} {kind} rw,vers=4.2 0 0")
    table = tmp_path / "mounts"
    table.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(judge_cache, "MOUNTS", table)
    monkeypatch.setattr(judge_cache, "_WARNED", set())


def journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


@pytest.mark.parametrize("kind", ["nfs4", "lustre", "cifs"])
def test_a_cache_on_a_network_file_system_says_what_to_do_once(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    shared = tmp_path / "home on nfs"
    fake_mounts(tmp_path, monkeypatch, (shared, kind))
    path = shared / "conceptcomb" / "judge_cache.sqlite"
    for _ in range(2):  # every task opens the cache: one line per run, not per task
        cache = JudgeCache(path)
        cache.put("judge", "prompt", 7.0, "seven")
        assert cache.try_put_many("judge", [("other", 3.0, "three")])
        assert cache.get("judge", "prompt") == (7.0, "seven") and len(cache) == 2
        cache.close()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0] == (
        f"conceptcomb: the judge cache {path} is on {kind}, a network file system, where "
        "SQLite's write-ahead log is unsafe: it uses the slower rollback journal, safe only "
        "if the file system's locks work; put the cache on a local disk instead "
        "(CONCEPTCOMB_CACHE_DIR=/local/dir, or judge_cache=/local/file)."
    )
    assert journal_mode(path) == "delete"
    assert not path.with_name(path.name + "-wal").exists()


def test_a_local_cache_keeps_the_write_ahead_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The deepest mount point decides: a local disk mounted inside an NFS tree is local."""
    fake_mounts(
        tmp_path, monkeypatch, (tmp_path / "nfs", "nfs"), (tmp_path / "nfs" / "scratch", "xfs")
    )
    assert network_file_system(tmp_path / "nfs" / "a") == "nfs"
    assert network_file_system(tmp_path / "nfs" / "scratch" / "b") is None
    assert network_file_system(tmp_path / "nfsother") is None  # a name, not a parent
    path = tmp_path / "nfs" / "scratch" / "judge.sqlite"
    JudgeCache(path).close()
    assert journal_mode(path) == "wal"
    assert capsys.readouterr().err == ""


def test_no_mounts_table_means_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_cache, "MOUNTS", tmp_path / "missing")  # not Linux
    assert network_file_system(tmp_path) is None

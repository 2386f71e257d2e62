"""On-disk cache of judge ratings, keyed by judge identity and exact prompt.

SQLite in WAL mode: several processes (two lm-eval runs, a rescoring job) can read and
write the same cache at once without corrupting it, and each rating is committed as soon
as it arrives (`conceptcomb.scorers.rating.CacheWriter`: on the event loop when the write
lock is free, else in a thread, where ratings that arrive together share one commit), so a
run killed halfway re-asks nothing it had already been answered.
Only successful ratings are stored: a failure is asked again next time. Beside a rating,
the snapshot the API's answer named (``gpt-4o-2024-08-06``), in a table of its own
(``snapshots``), so a rating read from the cache still says which model gave it, and a cache
that an older conceptcomb reads and writes keeps working.

SQLite's write-ahead log needs memory shared by the processes that use the file, which a
network file system (NFS, CIFS/SMB, Lustre, GPFS, ...) does not give: there the cache uses
SQLite's rollback journal, which is safe where the file system's locks work, and says once,
in one line, to put the cache on a local disk (`network_file_system`, read from
/proc/mounts).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from conceptcomb.common.datafiles import cache_root

# (prompt, rating, reply), or with the snapshot the answer named (None: it named none).
Row: TypeAlias = tuple[str, float, str] | tuple[str, float, str, str | None]
_SNAPSHOTS = "CREATE TABLE IF NOT EXISTS snapshots (key TEXT PRIMARY KEY, snapshot TEXT NOT NULL)"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS ratings (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    prompt TEXT NOT NULL,
    rating REAL NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""


# Seconds a write waits for another process's write lock (WAL: one writer at a time).
BUSY_TIMEOUT = 60


# File system types (as /proc/mounts names them) that share files between hosts: no shared
# memory between the processes using a file, so no write-ahead log.
NETWORK_FILE_SYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "glusterfs",
     "fuse.glusterfs", "fuse.sshfs", "fuse.cephfs", "9p", "afs", "ocfs2", "gfs2", "panfs",
     "fuse.juicefs", "fuse.s3fs", "fuse.gcsfuse", "fuse.weka", "wekafs"}
)  # fmt: skip
MOUNTS = Path("/proc/mounts")
_WARNED: set[Path] = set()  # cache files whose network file system was reported


def network_file_system(folder: Path) -> str | None:
    """The type of the network file system that holds ``folder``, None for a local one (or
    where /proc/mounts cannot be read: not Linux)."""
    try:
        lines = MOUNTS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    target = folder.resolve()
    best, kind = -1, ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        # /proc/mounts writes a space in a mount point as \040 (octal).
        mount = Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1]))
        depth = len(mount.parts)
        if depth >= best and target.is_relative_to(mount):  # the deepest (and last) wins
            best, kind = depth, fields[2]
    return kind if kind in NETWORK_FILE_SYSTEMS else None


def default_cache_path() -> Path:
    return cache_root() / "judge_cache.sqlite"


def cache_key(judge_identity: str, prompt: str) -> str:
    """The key of one cached rating: the judge's runtime identity (`Judge.identity`, its
    endpoint(s) included) and the prompt.

    The endpoint stays in the key, though results compare judges without it
    (`conceptcomb.scorers.judge_identity`: the same judge from two hosts is one judge). A
    cached rating is what one server answered, and the cache cannot tell that two servers
    serve the same weights: a server names its model as its operator likes (every loopback
    test server calls itself gpt-4o). A hit across hosts would put another server's
    answers into a run, silently, under the record of the judge it asked; a miss costs one
    request. Comparing two runs is another matter: there the record is what a submission
    claims, and re-asking its judge checks the claim. So a judge moved to another host, or
    given another set of replicas, is asked again once; and every existing cache reads as
    before (its keys are unchanged)."""
    return hashlib.sha256(f"{judge_identity}\x00{prompt}".encode()).hexdigest()


def _set_up(conn: sqlite3.Connection, journal: str) -> None:
    """Journal mode, sync level and table, retried while another process holds the file.

    Processes that open a new cache at the same moment (the ranks of a data-parallel run)
    can get "database is locked" from the journal-mode switch at once: SQLite does not call
    its busy handler there, so the `timeout` given to `connect` does not cover it.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            current = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(current).upper() != journal:
                conn.execute(f"PRAGMA journal_mode={journal}")
            # NORMAL keeps a write-ahead log consistent; a rollback journal needs FULL.
            conn.execute(f"PRAGMA synchronous={'NORMAL' if journal == 'WAL' else 'FULL'}")
            conn.execute(_SCHEMA)
            conn.execute(_SNAPSHOTS)
            conn.commit()
            return
        except sqlite3.OperationalError as err:
            conn.rollback()
            busy = "locked" in str(err) or "busy" in str(err)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class JudgeCache:
    """Thread-safe, process-safe store of (judge, prompt) -> rating."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        network = network_file_system(self.path.parent)
        self.journal = "DELETE" if network else "WAL"
        if network and self.path.resolve() not in _WARNED:
            _WARNED.add(self.path.resolve())
            print(
                f"conceptcomb: the judge cache {self.path} is on {network}, a network file "
                "system, where SQLite's write-ahead log is unsafe: it uses the slower rollback "
                "journal, safe only if the file system's locks work; put the cache on a local "
                "disk instead (CONCEPTCOMB_CACHE_DIR=/local/dir, or judge_cache=/local/file).",
                file=sys.stderr,
                flush=True,
            )
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
        with self._lock:
            _set_up(self._conn, self.journal)
        # For `try_put_many` (an event loop's thread), opened on first use.
        self._quick_lock = threading.Lock()
        self._quick: sqlite3.Connection | None = None

    def get(self, judge_identity: str, prompt: str) -> tuple[float, str] | None:
        key = cache_key(judge_identity, prompt)
        with self._lock:
            row = self._conn.execute(
                "SELECT rating, reply FROM ratings WHERE key = ?", (key,)
            ).fetchone()
        return (float(row[0]), str(row[1])) if row else None

    def get_many(self, judge_identity: str, prompts: list[str]) -> dict[str, tuple[float, str]]:
        """Cached answers among ``prompts`` (one query per 500, not one per prompt)."""
        rows = self._select("rating, reply FROM ratings", judge_identity, prompts)
        return {prompt: (float(rating), str(reply)) for prompt, (rating, reply) in rows.items()}

    def snapshots(self, judge_identity: str, prompts: list[str]) -> dict[str, str]:
        """The snapshot each of ``prompts``' cached ratings was answered by, where the
        answer named one."""
        rows = self._select("snapshot FROM snapshots", judge_identity, prompts)
        return {prompt: str(snapshot) for prompt, (snapshot,) in rows.items()}

    def _select(self, what: str, judge_identity: str, prompts: list[str]) -> dict[str, tuple]:
        """``SELECT key, <what> WHERE key IN (...)`` for ``prompts``' keys, 500 at a time:
        each found prompt's columns."""
        keys = {cache_key(judge_identity, prompt): prompt for prompt in prompts}
        found: dict[str, tuple] = {}
        ordered = list(keys)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT key, {what} WHERE key IN ({marks})", chunk
                ).fetchall()
            found.update({keys[key]: tuple(rest) for key, *rest in rows})
        return found

    def put(
        self,
        judge_identity: str,
        prompt: str,
        rating: float,
        reply: str,
        snapshot: str | None = None,
    ) -> None:
        self.put_many(judge_identity, [(prompt, rating, reply, snapshot)])

    def put_many(self, judge_identity: str, rows: Sequence[Row]) -> None:
        """Store (prompt, rating, reply[, snapshot]) rows in one transaction, committed on
        return."""
        with self._lock:
            self._insert(self._conn, judge_identity, rows)

    def try_put_many(self, judge_identity: str, rows: Sequence[Row]) -> bool:
        """Store the rows now if nobody holds SQLite's write lock; False, having stored
        nothing, if someone does. Fit for an event loop: it never waits for the lock and never
        checkpoints (no fsync), so it takes tens of microseconds. The write-ahead log it
        leaves is copied into the database by the next `put_many` (SQLite's auto-checkpoint).
        """
        if not self._quick_lock.acquire(blocking=False):
            return False
        try:
            if self._quick is None:
                self._quick = sqlite3.connect(self.path, timeout=0, check_same_thread=False)
                sync = "NORMAL" if self.journal == "WAL" else "FULL"
                self._quick.execute(f"PRAGMA synchronous={sync}")
                self._quick.execute("PRAGMA wal_autocheckpoint=0")
            try:
                self._insert(self._quick, judge_identity, rows)
            except sqlite3.OperationalError as err:  # "database is locked": another writer
                self._quick.rollback()
                if "locked" not in str(err) and "busy" not in str(err):
                    raise
                return False
            return True
        finally:
            self._quick_lock.release()

    @staticmethod
    def _insert(conn: sqlite3.Connection, judge_identity: str, rows: Sequence[Row]) -> None:
        now = time.time()
        values, named, unnamed = [], [], []
        for prompt, rating, reply, *rest in rows:
            key = cache_key(judge_identity, prompt)
            values.append((key, judge_identity, prompt, rating, reply, now))
            snapshot = rest[0] if rest else None
            if snapshot:
                named.append((key, snapshot))
            else:  # a rating replaced by one whose answer named none loses the old one
                unnamed.append((key,))
        conn.executemany("INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?)", values)
        conn.executemany("INSERT OR REPLACE INTO snapshots VALUES (?, ?)", named)
        conn.executemany("DELETE FROM snapshots WHERE key = ?", unnamed)
        conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0])

    def close(self) -> None:
        with self._quick_lock:
            if self._quick is not None:
                self._quick.close()
                self._quick = None
        with self._lock:
            self._conn.close()

"""Bundles from anyone: hostile files are INVALID, with one line per problem, exit status 1,
no traceback, in bounded time and memory (``conceptcomb validate-bundle`` run as a command
under a 2 GiB address-space limit); the limits leave every real bundle valid.

Each hostile file is a real bundle (the full CCPT group, `conceptcomb.testing.recorded`)
with one thing changed, resealed (``content_sha256`` recomputed) where that is possible, so
that the change alone makes it invalid."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import resource
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from conceptcomb.benchmarks import known_tasks
from conceptcomb.cggc.data import PACKAGED_DIR
from conceptcomb.common.evidence import EVIDENCE_FORMAT, decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.bundles.safe_json import (
    LARGEST_TEST_SET,
    MAX_EVIDENCE_BYTES,
    MAX_ITEMS,
    MAX_STRING,
    MiB,
    decode_evidence,
    size_text,
)
from conceptcomb.leaderboard.checks.validate import check_bundle, check_file, max_tasks

GiB = 1024 * MiB
SECONDS = 60


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * GiB, 2 * GiB))


def validate(*paths: Path) -> tuple[int, str, float]:
    """``conceptcomb validate-bundle PATHS`` as a command under a 2 GiB address space."""
    command = [sys.executable, "-m", "conceptcomb.cli", "validate-bundle", *map(str, paths)]
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def task_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("  ") and line[2:4] != "- "]


def assert_invalid(*paths: Path, expected: tuple[str, ...] = ()) -> str:
    code, output, seconds = validate(*paths)
    assert code == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    assert seconds < SECONDS, f"{seconds:.0f} s"
    for path in paths:
        assert f"{path}: INVALID" in output, output[-3000:]
    for text in expected:
        assert text in output, output[-3000:]
    # No task of an invalid bundle is said to be verified.
    assert not [line for line in task_lines(output) if "verified (" in line], output
    return output


def problem_lines(output: str) -> list[str]:
    return [line[4:] for line in output.splitlines() if line.startswith("  - ")]


# --- a real bundle, and ways to change it -----------------------------------------------------
@pytest.fixture(scope="module")
def real_bundle(group_bundle: Path) -> Path:
    """The session's bundle of the full CCPT group (tests/leaderboard/conftest.py), which
    the tests only read (each changes a copy)."""
    return group_bundle


@pytest.fixture
def bundle(real_bundle: Path) -> dict:
    return json.loads(real_bundle.read_text(encoding="utf-8"))


def reseal(bundle: dict) -> dict:
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def write(path: Path, bundle: dict, resealed: bool = True) -> Path:
    path.write_text(json.dumps(reseal(bundle) if resealed else bundle), encoding="utf-8")
    return path


def task_named(bundle: dict, name: str) -> dict:
    return next(task for task in bundle["tasks"] if task["task"] == name)


def pack(body: bytes, items: int) -> dict:
    """An evidence record holding these bytes (whatever they are), its sha256 right."""
    return {
        "format": EVIDENCE_FORMAT,
        "items": items,
        "encoding": "gzip+base64",
        "sha256": hashlib.sha256(body).hexdigest(),
        "data": base64.b64encode(gzip.compress(body, mtime=0)).decode("ascii"),
    }


def zeros_bomb(inflated: int) -> bytes:
    """A gzip member of ``inflated`` zero bytes (a multiple of 16 MiB), made in seconds:
    the deflate blocks of 16 MiB of zeros after a full flush are all the same bytes."""
    chunk = bytes(16 * MiB)
    count = inflated // len(chunk)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = crc.to_bytes(4, "little") + (inflated % 2**32).to_bytes(4, "little")
    return header + first + block * (count - 1) + deflate.flush() + trailer


def split_at(bundle: dict, marker: str) -> tuple[str, str]:
    """The bundle's JSON text before and after the string ``marker`` (quotes included)."""
    text = json.dumps(bundle)
    before, after = text.split(json.dumps(marker))
    return before, after


# --- a valid bundle stays valid ----------------------------------------------------------------
def test_the_real_bundle_is_valid_under_the_limits(real_bundle: Path) -> None:
    code, output, seconds = validate(real_bundle)
    assert code == 0, output
    assert f"{real_bundle}: valid" in output and "Traceback" not in output
    assert "ccpt_tp: verified (all 1000 test items)" in output
    assert seconds < SECONDS


def test_the_limits_leave_room_for_every_full_test_set() -> None:
    """Each task once; the largest test sets (AbsPyramid detection, CGGC's built one)."""
    assert max_tasks() == len(known_tasks())
    built = json.loads((PACKAGED_DIR / "build_info.json").read_text())
    assert built["counts"]["test_items"] == 16_167 <= LARGEST_TEST_SET < MAX_ITEMS


def test_full_size_cggc_evidence_fits(tmp_path: Path) -> None:
    """16,167 items of ~4 KB each (~64 MB decompressed, the budget of a full CGGC bundle)
    read within the limits, with room to spare."""
    reply = " ".join(["a composed sentence about the concepts"] * 94)
    items = [
        {
            "id": f"{'0' * 64}:compos_test:{n}",
            "reply": f"{reply} {n}",
            "answer": f"sentence {n}",
            "judged": [["concept", "property", 7.0]] * 4,
            "scores": {"bleu": 0.25, "cider": 0.5, "verified": 1.0},
        }
        for n in range(16_167)
    ]
    body = json.dumps(items, sort_keys=True, separators=(",", ":")).encode()
    assert 64_000_000 < len(body) < MAX_EVIDENCE_BYTES / 3
    decoded = decode_evidence(pack(body, len(items)), "bundle.tasks[0].evidence")
    assert len(decoded) == 16_167 and decoded[-1] == items[-1]


def test_nesting_up_to_the_limit_is_read(bundle: dict, tmp_path: Path) -> None:
    nested: object = "deep"
    for _ in range(60):
        nested = {"a": [nested]}  # 120 levels would be refused; 60 + the bundle's are not
    bundle["model"]["details"] = {"nested": nested}
    assert check_file(write(tmp_path / "nested.bundle.json", bundle)).problems == [
        f"limit: {tmp_path / 'nested.bundle.json'}: nested deeper than 64 levels (arrays and "
        "objects)"
    ]
    nested = "deep"
    for _ in range(30):
        nested = {"a": [nested]}
    bundle["model"]["details"] = {"nested": nested}
    assert check_file(write(tmp_path / "ok.bundle.json", bundle)).problems == []


# --- hostile files -------------------------------------------------------------------------
def test_decompression_bomb_in_the_evidence(bundle: dict, tmp_path: Path) -> None:
    bomb = zeros_bomb(4 * GiB)
    assert len(bomb) < 5 * MiB
    task = task_named(bundle, "ccpt_tp")
    task["evidence"] = {**task["evidence"], "data": base64.b64encode(bomb).decode("ascii")}
    path = write(tmp_path / "bomb.bundle.json", bundle)
    output = assert_invalid(
        path, expected=("of the 256 MiB the evidence of all tasks may take together",)
    )
    (problem,) = problem_lines(output)
    assert problem.startswith("limit: bundle.tasks[3].evidence.data: decompresses to more than")
    assert "ccpt_tp: FAILED (unverified: its evidence could not be read; 1 problem" in output


def test_evidence_of_millions_of_values(bundle: dict, tmp_path: Path) -> None:
    """Small when packed, valid JSON, each value costing memory: refused before parsing."""
    body = b"[" + b"{}," * 9_000_000 + b"{}]"
    task_named(bundle, "ccpt_tp")["evidence"] = pack(body, 9_000_001)
    path = write(tmp_path / "values.bundle.json", bundle)
    assert_invalid(path, expected=("9,000,002 JSON values, more than the ",))


def test_a_bundle_of_millions_of_values(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["HERE"]
    before, after = split_at(bundle, "HERE")
    path = tmp_path / "values.bundle.json"
    path.write_text(before + ",".join(["[]"] * 2_000_000) + after)
    assert_invalid(path, expected=(f"limit: {path}: 2,00", "JSON values, more than 1,000,000"))


def test_deep_nesting(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["HERE"]
    before, after = split_at(bundle, "HERE")
    path = tmp_path / "deep.bundle.json"
    path.write_text(before + "[" * 200_000 + "]" * 200_000 + after)
    assert_invalid(path, expected=(f"limit: {path}: nested deeper than 64 levels",))


def test_deep_nesting_in_the_evidence(bundle: dict, tmp_path: Path) -> None:
    body = b"[" * 200_000 + b"]" * 200_000
    task_named(bundle, "ccpt_pi_emergent")["evidence"] = pack(body, 1)
    path = write(tmp_path / "deep-evidence.bundle.json", bundle)
    assert_invalid(
        path,
        expected=("limit: bundle.tasks[2].evidence.data: nested deeper than 64 levels",),
    )


def test_a_200_mb_string(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["HERE"]
    before, after = split_at(bundle, "HERE")
    path = tmp_path / "long-string.bundle.json"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(before + '"')
        for _ in range(200):
            handle.write("a" * MiB)
        handle.write('"' + after)
    assert path.stat().st_size > 200 * MiB
    size = size_text(path.stat().st_size)  # 200 MiB and the bundle around the string
    assert_invalid(path, expected=(f"limit: {path}: {size}, more than the 64 MiB",))


def test_a_string_over_the_limit(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["a" * (MAX_STRING + 1)]
    path = write(tmp_path / "string.bundle.json", bundle)
    assert_invalid(
        path,
        expected=(
            f"limit: {path}: bundle.notes[0]: a string of 1,048,577 characters, more than "
            "the 1,048,576 a string may hold",
        ),
    )


def test_a_long_reply_in_the_evidence(bundle: dict, tmp_path: Path) -> None:
    task = task_named(bundle, "ccpt_tp")
    items = decode(task["evidence"], "tp")
    items[5]["reply"] = "b" * (MAX_STRING + 1)
    task["evidence"] = encode(items)
    path = write(tmp_path / "reply.bundle.json", bundle)
    assert_invalid(
        path,
        expected=("limit: bundle.tasks[3].evidence.items[5].reply: a string of 1,048,577",),
    )


WRONG_TYPES = {
    "schema": 2,
    "created": ["2024"],
    "conceptcomb_version": 1.0,
    "python": {"major": 3},
    "framework": "conceptcomb score",
    "model": ["smollm2"],
    "generation": "greedy",
    "tasks": {"ccpt_tp": {}},
    "sources": "results.json",
    "notes": "a note",
    "content_sha256": 12,
}


def test_wrong_types_in_each_top_level_field(bundle: dict, tmp_path: Path) -> None:
    paths = []
    for field, value in WRONG_TYPES.items():
        changed = json.loads(json.dumps(bundle))
        changed[field] = value
        paths.append(write(tmp_path / f"{field}.bundle.json", changed, field != "content_sha256"))
    output = assert_invalid(*paths)
    for field, path in zip(WRONG_TYPES, paths, strict=True):
        section = output.split(f"{path}: INVALID")[1].split(".bundle.json: ")[0]
        assert f"schema: bundle.{field}: " in section, (field, section)


TASK_WRONG_TYPES = {
    "not-an-object": lambda task: 5,
    "name": lambda task: {**task, "task": ["ccpt_tp"]},
    "datasets": lambda task: {**task, "datasets": {"a": 1}},
    "options": lambda task: {**task, "options": [1, 2]},
    "evidence": lambda task: {**task, "evidence": "gzip"},
    "evidence-data": lambda task: {**task, "evidence": {**task["evidence"], "data": 7}},
    "metrics": lambda task: {**task, "metrics": [1.0]},
    "judge": lambda task: {**task, "judge": "gpt-4o"},
    "items": lambda task: {**task, "items": "all"},
}


def test_wrong_types_in_a_task(bundle: dict, tmp_path: Path) -> None:
    paths = []
    for name, change in TASK_WRONG_TYPES.items():
        changed = json.loads(json.dumps(bundle))
        changed["tasks"][1] = change(changed["tasks"][1])
        paths.append(write(tmp_path / f"task-{name}.bundle.json", changed))
    output = assert_invalid(*paths)
    assert output.count("schema: bundle.tasks[1]") >= len(paths)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("not base64!", "evidence: bundle.tasks[3].evidence.data: not base64"),
        ("QUJD", "evidence: bundle.tasks[3].evidence.data: not gzip+base64 JSON"),
        ("é" * 8, "evidence: bundle.tasks[3].evidence.data: not base64"),
    ],
)
def test_broken_base64(bundle: dict, tmp_path: Path, data: str, expected: str) -> None:
    task = task_named(bundle, "ccpt_tp")
    task["evidence"]["data"] = data
    assert_invalid(write(tmp_path / "base64.bundle.json", bundle), expected=(expected,))


def test_truncated_and_trailing_gzip(bundle: dict, tmp_path: Path) -> None:
    task = task_named(bundle, "ccpt_tp")
    packed = base64.b64decode(task["evidence"]["data"])
    paths = []
    for name, changed in {"cut": packed[: len(packed) // 2], "more": packed + packed}.items():
        task["evidence"]["data"] = base64.b64encode(changed).decode("ascii")
        paths.append(write(tmp_path / f"{name}.bundle.json", bundle))
    assert_invalid(*paths, expected=("the gzip stream ends early", "data after the gzip stream"))


def test_a_million_problems_are_not_a_million_lines(bundle: dict, tmp_path: Path) -> None:
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    many = [json.loads(json.dumps(bundle)) for _ in range(2)]
    many[0]["notes"] = [0] * 900_000  # each not a string: a schema problem
    many[1]["notes"] = [key] * 200_000  # each a secret
    paths = [write(tmp_path / f"many{n}.bundle.json", b) for n, b in enumerate(many)]
    output = assert_invalid(
        *paths,
        expected=(
            "schema: more problems than these 100, not listed",
            "secret: more than these 100 in bundle, not listed",
        ),
    )
    assert len(problem_lines(output)) == 2 * 101


def test_non_utf8_bytes(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["HERE"]
    before, after = split_at(bundle, "HERE")
    path = tmp_path / "latin1.bundle.json"
    path.write_bytes(before.encode() + b'"caf\xe9"' + after.encode())
    assert_invalid(path, expected=(f"{path}: not a JSON file (not UTF-8 text (byte 0xe9",))


def test_non_utf8_bytes_in_the_evidence(bundle: dict, tmp_path: Path) -> None:
    task_named(bundle, "ccpt_tp")["evidence"] = pack(b'[{"reply": "caf\xe9"}]', 1)
    path = write(tmp_path / "latin1-evidence.bundle.json", bundle)
    assert_invalid(path, expected=("bundle.tasks[3].evidence.data: not UTF-8 text",))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"PK\x03\x04\x14\x00\x00\x00",
        b"hello",
        b'{"schema": "conceptcomb-bundle/2"',
        b"\xef\xbb\xbf{}",
    ],
    ids=["empty", "zip", "text", "truncated", "bom"],
)
def test_non_json_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "file.bundle.json"
    path.write_bytes(content)
    output = assert_invalid(path, expected=(f"{path}: not a JSON file (",))
    assert len(problem_lines(output)) == 1


def test_a_folder_and_a_missing_file(tmp_path: Path) -> None:
    assert_invalid(tmp_path, tmp_path / "missing.bundle.json", expected=("cannot be read",))


def test_duplicate_keys(bundle: dict, tmp_path: Path) -> None:
    text = json.dumps(reseal(bundle))
    path = tmp_path / "keys.bundle.json"
    path.write_text('{"tasks": [],' + text[1:])
    assert_invalid(
        path, expected=(f"{path}: not a JSON file (the key 'tasks' appears twice in one object)",)
    )


def test_duplicate_keys_in_the_evidence(bundle: dict, tmp_path: Path) -> None:
    body = b'[{"id": "a", "reply": "x", "reply": "y"}]'
    task_named(bundle, "ccpt_tp")["evidence"] = pack(body, 1)
    path = write(tmp_path / "keys-evidence.bundle.json", bundle)
    assert_invalid(path, expected=("the key 'reply' appears twice in one object",))


def test_2000_copies_of_one_task(bundle: dict, tmp_path: Path) -> None:
    # without its items, whose 2,000 copies would pass the file's size limit first
    task = {**task_named(bundle, "ccpt_tp"), "evidence": {"missing": "not in this copy"}}
    bundle["tasks"] = [task] * 2000
    path = write(tmp_path / "copies.bundle.json", bundle)
    output = assert_invalid(
        path,
        expected=(
            "bundle.tasks[0]: ccpt_tp is recorded 2,000 times (again at tasks[1], [2], [3], "
            "[4], …): a bundle holds each task once",
            f"limit: bundle.tasks holds 2,000 tasks, more than the {len(known_tasks())} tasks",
        ),
    )
    assert len(problem_lines(output)) == 2 and task_lines(output) == []


def test_two_copies_of_one_task(bundle: dict, tmp_path: Path) -> None:
    bundle["tasks"].append(task_named(bundle, "ccpt_tp"))
    path = write(tmp_path / "twice.bundle.json", bundle)
    output = assert_invalid(path)
    assert problem_lines(output) == [
        "bundle.tasks[3]: ccpt_tp is recorded 2 times (again at tasks[4]): a bundle holds each "
        "task once"
    ]
    assert "  ccpt_tp: FAILED (checked all 1000 test items; 1 problem with this task" in output


def test_more_items_than_the_test_set(bundle: dict, tmp_path: Path) -> None:
    task = task_named(bundle, "ccpt_tp")
    items = decode(task["evidence"], "tp")
    task["evidence"] = encode(items + items[:1])
    path = write(tmp_path / "items.bundle.json", bundle)
    output = assert_invalid(
        path,
        expected=("evidence: ccpt_tp: holds 1,001 items, more than the 1,000 of its test set",),
    )
    assert not [line for line in problem_lines(output) if "stored twice" in line]


def test_items_of_the_wrong_shape(bundle: dict, tmp_path: Path) -> None:
    task = task_named(bundle, "ccpt_pi_emergent")
    items = decode(task["evidence"], "pi")
    items[0]["reply"] = 5
    items[1]["scores"] = [1, 2]
    items[2]["judged"] = "high"
    items[3]["answer"] = ["a", "list"]
    items[4]["id"] = ["not", "a", "string"]
    task["evidence"] = encode(items)
    output = assert_invalid(write(tmp_path / "shapes.bundle.json", bundle))
    assert "item #5 (no id): not an item of the task's test set" in output


def test_lone_surrogates_and_long_integers(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["HERE"]
    before, after = split_at(bundle, "HERE")
    surrogate, digits = tmp_path / "surrogate.bundle.json", tmp_path / "digits.bundle.json"
    surrogate.write_text(before + '"\\ud800"' + after)
    digits.write_text(before + "1" * 5000 + after)
    assert_invalid(surrogate, digits, expected=("lone surrogate", "digits"))


def test_a_task_name_cannot_print_a_line_of_its_own(bundle: dict) -> None:
    fake = "ccpt_tp\n  ccpt_pi_emergent: verified (all 200 test items)"
    task_named(bundle, "ccpt_tp")["task"] = fake
    for check in (check_bundle(reseal(bundle)), check_bundle({**bundle, "notes": ["edited"]})):
        lines = [task.line() for task in check.tasks] + check.problems
        assert all("\n" not in line for line in lines)
        assert "ccpt_tp\\n  ccpt_pi_emergent: verified (all 200 test items)" in "".join(lines)


# --- an invalid bundle never says "verified" --------------------------------------------------
def test_an_invalid_bundle_names_no_task_verified(bundle: dict, tmp_path: Path) -> None:
    bundle["notes"] = ["edited after it was written"]
    path = write(tmp_path / "edited.bundle.json", bundle, resealed=False)
    output = assert_invalid(path, expected=("checksum: content_sha256 is",))
    assert task_lines(output) == [
        "  ccpt_npc_emergent: not counted (checked all 167 test items: no problem with this "
        "task, but the bundle is INVALID)",
        "  ccpt_pi_canceled: not counted (checked all 167 test items: no problem with this task, "
        "but the bundle is INVALID)",
        "  ccpt_pi_emergent: not counted (checked all 200 test items: no problem with this task, "
        "but the bundle is INVALID)",
        "  ccpt_tp: not counted (checked all 1000 test items: no problem with this task, but "
        "the bundle is INVALID)",
    ]


def test_a_task_with_a_problem_says_what_failed(bundle: dict, tmp_path: Path) -> None:
    task = task_named(bundle, "ccpt_pi_emergent")
    items = decode(task["evidence"], "pi")
    items[0]["scores"]["R_NP"] = 99.0
    task["evidence"] = encode(items)
    output = assert_invalid(write(tmp_path / "score.bundle.json", bundle))
    (line,) = [line for line in task_lines(output) if "ccpt_pi_emergent" in line]
    assert line.startswith("  ccpt_pi_emergent: FAILED (checked all 200 test items; ")
    assert line.endswith(" problems with this task, listed above)")


# --- the report reads bundles as validate-bundle does -----------------------------------------
def test_the_report_leaves_hostile_bundles_out(
    real_bundle: Path, bundle: dict, tmp_path: Path
) -> None:
    """``conceptcomb report`` on a folder of bundles from anyone: each hostile one is left
    out with a note naming its problem, the valid one gives its rows; no traceback, under
    the same 2 GiB address space."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "valid.bundle.json").write_bytes(real_bundle.read_bytes())
    deep = 200_000
    (folder / "deep.bundle.json").write_text("[" * deep + "]" * deep)
    (folder / "text.bundle.json").write_bytes(b"hello")
    for field, value in WRONG_TYPES.items():
        changed = json.loads(json.dumps(bundle))
        changed[field] = value
        write(folder / f"{field}.bundle.json", changed, field != "content_sha256")
    out = tmp_path / "report"
    command = [sys.executable, "-m", "conceptcomb.cli", "report", str(folder), "--out", str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    notes = [line for line in output.splitlines() if line.startswith("note: ")]
    assert sum("INVALID bundle, left out" in note for note in notes) == 2 + len(WRONG_TYPES)
    assert "note: deep.bundle.json: INVALID bundle, left out (1 problems; the first: limit:" in (
        output
    )
    assert "note: text.bundle.json: INVALID bundle, left out (1 problems; the first:" in output
    page = (out / "ccpt.md").read_text()
    assert "| verified |" in page  # the valid bundle's rows, verified

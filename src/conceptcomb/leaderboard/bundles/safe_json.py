"""Reading bundles from anyone within fixed limits: no file, nesting, string or evidence
makes ``validate-bundle`` use unbounded memory or time, or end in a traceback.

Every limit is far above what a bundle of this package's full test sets holds (the README's
table of them says how far) and each is checked before the work it bounds:

* the file's size, before it is read (`read_capped`);
* the nesting depth and the number of JSON values, before `json.loads` runs (its parser
  recurses once per level, and each value is an object in memory): `count_values` scans
  the raw bytes, with no recursion and no objects;
* the evidence's decompressed size, while it is decompressed in chunks: decompression stops
  at the limit, so a gzip bomb never inflates further (`inflate`);
* a key twice in one object, while parsing (an ``object_pairs_hook``);
* each string and key (at most `MAX_STRING` characters, no lone surrogate, which no UTF-8
  file can carry and the content's hash cannot encode), by a walk after parsing;
* the evidence of all tasks together (`EvidenceBudget`), task after task; the number of
  tasks and of items per task are `conceptcomb.leaderboard.checks.validate`'s and
  `conceptcomb.leaderboard.checks.verify`'s.

What breaks one raises `Refused`, whose message is the problem, on one line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MiB = 1024 * 1024

# Largest test sets (items): AbsPyramid detection over all relations 22,056 (the README of
# conceptcomb.abspyramid), CGGC 16,167 (cggc/packaged_data/build_info.json), CCPT type
# prediction 1,000, McRae 541 concepts.
LARGEST_TEST_SET = 22_056

MAX_FILE_BYTES = 64 * MiB  # a bundle file
MAX_DEPTH = 64  # arrays and objects inside each other (the bundle, and each evidence)
MAX_STRING = 1 * MiB  # characters of one string or key (the packed evidence excepted)
MAX_BUNDLE_VALUES = 1_000_000  # JSON values of the bundle file (the packed evidence is one)
MAX_ITEMS = 65_536  # evidence items of one task (~3x the largest test set)
MAX_EVIDENCE_BYTES = 256 * MiB  # the evidence of all tasks together, decompressed
MAX_EVIDENCE_VALUES = 8_000_000  # JSON values of the evidence of all tasks together

_INFLATE_CHUNK = 1 * MiB  # compressed bytes fed to zlib at a time
_OPENING = frozenset(b"[{")
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")
# After escaped backslashes and escaped quotes are blanked (length kept), every remaining
# quote opens or closes a string, and a string is a quote, no quote, a quote.
_STRING = re.compile(rb'"[^"]*"')
_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused(ValueError):
    """The input breaks a limit or is not well-formed JSON; ``str()`` is the problem."""

    def __init__(self, message: str, *, limit: bool = True) -> None:
        super().__init__(message)
        self.limit = limit  # False: not JSON at all (syntax, encoding, duplicate key)


def size_text(size: int) -> str:
    """``64 MiB``, ``1.5 MiB``, ``300 bytes``: sizes in messages."""
    if size < MiB:
        return f"{size:,} bytes"
    return f"{size / MiB:.1f}".removesuffix(".0") + " MiB"


def clip(text: str, most: int = 300) -> str:
    """The text, shortened to about ``most`` characters (messages quote what they found)."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text) - most:,} more characters)"


# --- reading ---------------------------------------------------------------------------------
def read_capped(path: Path, most: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes; Refused when it holds more than ``most`` (never read whole then)."""
    with path.open("rb") as handle:
        size = path.stat().st_size
        if size > most:
            raise Refused(f"{size_text(size)}, more than the {size_text(most)} a bundle may be")
        data = handle.read(most + 1)  # a file that grows, or reports no size (a pipe)
    if len(data) > most:
        raise Refused(f"more than the {size_text(most)} a bundle may be")
    return data


def read_bundle_json(path: Path) -> Any:
    """A bundle file's JSON within the limits above (Refused, or OSError, otherwise)."""
    data = read_capped(path)
    count_values(data, MAX_DEPTH, MAX_BUNDLE_VALUES)
    text = utf8(data)
    del data
    return parse(text, "bundle")


def utf8(data: bytes | bytearray) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at position {err.start:,})",
            limit=False,
        ) from None


def parse(text: str, where: str) -> Any:
    """`json.loads` with duplicate keys refused, then `check_strings`; run it after
    `count_values` (``where`` names the value in messages)."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except Refused:
        raise
    except RecursionError:  # not after count_values; kept as a last resort
        raise Refused(f"nested too deeply to read (more than {MAX_DEPTH} levels)") from None
    except MemoryError:
        raise Refused("too large to read in the memory available") from None
    except ValueError as err:  # JSONDecodeError, an integer of too many digits
        raise Refused(clip(str(err)), limit=False) from None
    check_strings(value, where)
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Refused(f"the key {clip(key, 80)!r} appears twice in one object", limit=False)
            seen.add(key)
    return found


class Oversized(Refused):
    """Decompresses to more than allowed."""


class TooManyValues(Refused):
    """More JSON values than allowed (``count``: how many)."""

    def __init__(self, count: int, most: int) -> None:
        super().__init__(f"{count:,} JSON values, more than {most:,}")
        self.count, self.most = count, most


def count_values(data: bytes | bytearray, max_depth: int, max_values: int) -> int:
    """How many JSON values the raw text holds (arrays, objects, strings, numbers...: each
    one object in memory once parsed), found without parsing; Refused when it nests deeper
    than ``max_depth`` or holds more than ``max_values`` values. Text that is not JSON may
    pass: `json.loads` then says what is wrong before it reaches any depth this counted."""
    neutral = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    structure = _STRING.sub(b'""', neutral).translate(None, b" \t\r\n")  # strings emptied
    del neutral
    containers = structure.count(b"[") + structure.count(b"{")
    empty = structure.count(b"[]") + structure.count(b"{}")
    # The first value, then one more per comma, and one more per non-empty container.
    values = 1 + structure.count(b",") + containers - empty
    if values > max_values:
        raise TooManyValues(values, max_values)
    depth = 0
    for byte in structure.translate(None, _NOT_BRACKET):
        if byte in _OPENING:
            depth += 1
            if depth > max_depth:
                raise Refused(f"nested deeper than {max_depth} levels (arrays and objects)")
        else:
            depth -= 1
    return values


def check_strings(value: Any, where: str) -> None:
    """Refused at the first string or key longer than `MAX_STRING`, or holding a lone
    surrogate (which no UTF-8 file can carry, and the content's hash cannot encode); the
    packed evidence (``data`` beside ``"encoding": "gzip+base64"``) is bounded by the file."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _bad_string(item):
                _refuse_string(value, where)
        elif isinstance(item, dict):
            packed = item.get("encoding") == "gzip+base64"
            for key, child in item.items():
                if _bad_string(key):
                    _refuse_string(value, where)
                if not (packed and key == "data" and isinstance(child, str)):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


def _bad_string(text: str) -> bool:
    return len(text) > MAX_STRING or (not text.isascii() and bool(_SURROGATE.search(text)))


def _refuse_string(value: Any, where: str) -> None:
    """Refused naming the first bad string (the search again, building paths now)."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and _bad_string(item):
            _string_problem(item, path)
        elif isinstance(item, dict):
            packed = item.get("encoding") == "gzip+base64"
            for key, child in reversed(item.items()):
                if _bad_string(key):
                    _string_problem(key, f"{path} (a key)")
                if not (packed and key == "data" and isinstance(child, str)):
                    stack.append((f"{path}.{clip(key, 40)}", child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{n}]", child) for n, child in reversed(list(enumerate(item))))
    raise AssertionError("no bad string found")  # pragma: no cover


def _string_problem(text: str, where: str) -> None:
    if len(text) > MAX_STRING:
        raise Refused(
            f"{where}: a string of {len(text):,} characters, more than the "
            f"{MAX_STRING:,} a string may hold"
        )
    raise Refused(f"{where}: a string with a lone surrogate (U+D800 to U+DFFF)", limit=False)


# --- evidence --------------------------------------------------------------------------------
@dataclass
class EvidenceBudget:
    """What the evidence of a bundle's tasks may still take, all tasks together."""

    bytes_left: int = MAX_EVIDENCE_BYTES
    values_left: int = MAX_EVIDENCE_VALUES
    spent: bool = False  # a task went over: the evidence of later tasks is not read


def _over_budget(err: Refused, budget: EvidenceBudget) -> str:
    if isinstance(err, TooManyValues):
        return (
            f"{err.count:,} JSON values, more than the {err.most:,} left of the "
            f"{MAX_EVIDENCE_VALUES:,} the evidence of all tasks may hold together"
        )
    return (
        f"decompresses to more than the {size_text(budget.bytes_left)} left of the "
        f"{size_text(MAX_EVIDENCE_BYTES)} the evidence of all tasks may take together"
    )


def inflate(packed: bytes, most: int) -> bytearray:
    """A single gzip member, decompressed in chunks and given up as soon as it outgrows
    ``most`` bytes (Refused), so that a decompression bomb never inflates further."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip header and trailer
    body = bytearray()
    fed = 0
    while fed < len(packed) and not inflater.eof:
        chunk = packed[fed : fed + _INFLATE_CHUNK]
        fed += len(chunk)
        while chunk and not inflater.eof:
            # At most one byte past the limit: enough to know it is over.
            body += inflater.decompress(chunk, most - len(body) + 1)
            if len(body) > most:
                raise Oversized(f"decompresses to more than {size_text(most)}")
            chunk = inflater.unconsumed_tail
    if not inflater.eof:
        raise Refused("not gzip+base64 JSON (the gzip stream ends early)", limit=False)
    if inflater.unused_data or fed < len(packed):
        raise Refused("not gzip+base64 JSON (data after the gzip stream)", limit=False)
    return body


def decode_evidence(
    record: dict[str, Any], where: str, budget: EvidenceBudget | None = None
) -> list[dict[str, Any]]:
    """The items of a task's evidence record (``where`` is ``bundle.tasks[i].evidence``),
    within the budget (a fresh one when None); Refused with the problem otherwise."""
    budget = budget if budget is not None else EvidenceBudget()
    try:
        items = _decode(record, where, budget)
    except Refused as err:
        message = str(err)
        if isinstance(err, (TooManyValues, Oversized)):
            budget.spent = True
            message = _over_budget(err, budget)
        if not message.startswith(where):
            message = f"{where}.data: {message}"
        raise Refused(message, limit=err.limit) from None
    if len(items) > MAX_ITEMS:
        raise Refused(
            f"{where}: {len(items):,} items, more than the {MAX_ITEMS:,} any task may hold "
            f"(the largest test set has {LARGEST_TEST_SET:,})"
        )
    return items


def _decode(record: dict[str, Any], where: str, budget: EvidenceBudget) -> list[dict[str, Any]]:
    text = record.get("data")
    if not isinstance(text, str):
        raise Refused("not gzip+base64 JSON (not a string)", limit=False)
    try:
        packed = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as err:
        raise Refused(f"not base64 ({clip(str(err))})", limit=False) from None
    try:
        body = inflate(packed, budget.bytes_left)
    except zlib.error as err:
        raise Refused(f"not gzip+base64 JSON ({clip(str(err))})", limit=False) from None
    del packed
    budget.bytes_left -= len(body)
    if hashlib.sha256(body).hexdigest() != record.get("sha256"):
        raise Refused(
            f"{where}.sha256 does not match the items: the evidence was edited after it was "
            "written",
            limit=False,
        )
    budget.values_left -= count_values(body, MAX_DEPTH, budget.values_left)
    decoded = utf8(body)
    del body
    items = parse(decoded, f"{where}.items")
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise Refused("expected a list of item objects", limit=False)
    return items

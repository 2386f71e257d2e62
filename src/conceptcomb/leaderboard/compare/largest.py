"""``conceptcomb compare A B --items K``: under each row, the K items whose values differ
most between A and B, for a look at what a difference is made of over SSH.

Each item is named by its key as compare names unpaired items (the stable id without the
pinned file's sha256: ``ccpt_emergent:12``; ``doc 3`` or ``sample 7`` for another package's
task), with both values and both replies cut to one line. A corpus metric (BLEU, CIDEr,
macro-F1) has no value per item: its rows say so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptcomb.leaderboard.compare.comparison import Row

REPLY_WIDTH = 96  # characters of a reply shown on its line
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ItemDifference:
    """One paired item of a row: its id, A's and B's values and replies."""

    item: str  # the stable id (`readable` shows it)
    a: float
    b: float
    reply_a: str | None
    reply_b: str | None

    @property
    def difference(self) -> float:
        return self.a - self.b

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "reply_a": self.reply_a,
            "reply_b": self.reply_b,
        }


@dataclass(frozen=True)
class Largest:
    """A row's K items of largest |A - B| (``items``), of ``differing`` that differ at all;
    ``why`` where the row has no value per item."""

    items: list[ItemDifference]
    differing: int = 0
    why: str | None = None


def parse_count(value: str | None) -> int | None:
    """``--items K`` as a count of at least 1 (ValueError otherwise); None when not given."""
    if value is None:
        return None
    count = int(value.strip())  # "2.5", "x": ValueError
    if count < 1:
        raise ValueError(value)
    return count


def largest(row: Row, count: int) -> Largest:
    """The ``count`` paired items of the row's metric with the largest |A - B| (ties: by
    id), items whose value either run leaves undefined left out."""
    pairing = row.pairing
    if pairing is None or row.metric not in pairing.a.scores or row.metric not in pairing.b.scores:
        return Largest([], why="a corpus metric: no value per item")
    a = pairing.a.scores[row.metric][pairing.rows_a]
    b = pairing.b.scores[row.metric][pairing.rows_b]
    keep = np.flatnonzero(np.isfinite(a) & np.isfinite(b) & (a != b))
    ids = [pairing.a.ids[n] for n in pairing.rows_a]
    order = sorted(keep, key=lambda n: (-abs(a[n] - b[n]), ids[n]))
    replies_a, replies_b = pairing.a.replies, pairing.b.replies
    chosen = [
        ItemDifference(
            ids[n],
            float(a[n]),
            float(b[n]),
            None if replies_a is None else replies_a[pairing.rows_a[n]],
            None if replies_b is None else replies_b[pairing.rows_b[n]],
        )
        for n in order[:count]
    ]
    return Largest(chosen, differing=len(keep))


def one_line(text: str | None, width: int = REPLY_WIDTH) -> str:
    """A reply on one line: whitespace runs as one space, other unprintable characters
    (a terminal's escape sequences) as "?", cut to ``width`` with "…"."""
    if text is None:
        return "(no reply recorded)"
    flat = _SPACE.sub(" ", text).strip()
    flat = "".join(c if c.isprintable() else "?" for c in flat)
    if not flat:
        return '""'
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:.4g}" if abs(value) < 0.01 and value else f"{value:.2f}"


def lines(found: Largest, metric: str, letters: tuple[str, str], readable: Any) -> list[str]:
    """What the table prints under a row: a header, then per item its id and values, and
    each run's reply on a line of its own."""
    a, b = letters
    if found.why:
        return [f"    {metric}: {found.why}"]
    if not found.items:
        return [f"    {metric}: no paired item differs between {a} and {b}"]
    shown, differing = len(found.items), found.differing
    out = [f"    largest |{a} - {b}| of {metric}: {shown} of the {differing} items that differ"]
    for item in found.items:
        out.append(
            f"      {readable(item.item)}  {a} {_number(item.a)}  {b} {_number(item.b)}  "
            f"({a} - {b} {'+' if item.difference > 0 else ''}{_number(item.difference)})"
        )
        out.append(f"        {a}: {one_line(item.reply_a)}")
        out.append(f"        {b}: {one_line(item.reply_b)}")
    return out

"""JSON Lines files (data files, saved replies), read with one-line errors naming file and line.

Every reader of this package's JSONL goes through `read_jsonl`: each non-blank line must
be a JSON object in UTF-8. Two ways of naming a line are in use, kept as users know them:
``file:12`` (saved replies, CGGC data) and ``file, line 12`` (AbsPyramid data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import DataFormatError


@dataclass(frozen=True)
class LineStyle:
    """How errors name a line, and what they call a line that is no JSON object."""

    where: str  # format with {path} and {number}
    not_json: str
    not_object: str

    def at(self, path: Path, number: int) -> str:
        return self.where.format(path=path, number=number)


COLON = LineStyle("{path}:{number}", "not a JSON line", "expected a JSON object.")
LINE = LineStyle("{path}, line {number}", "not a JSON object", "not a JSON object.")


def read_jsonl(
    path: Path,
    content: bytes | None = None,
    *,
    style: LineStyle = COLON,
    empty: str | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of ``path`` (or of ``content``, its
    bytes when already read). ``empty`` names what the file should hold: an empty file
    is then an error ("the file holds no <empty>.")."""
    rows = []
    raw = path.read_bytes() if content is None else content
    for number, data in enumerate(raw.split(b"\n"), start=1):
        where = style.at(path, number)
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataFormatError(f"{where}: not UTF-8 text ({err}).") from err
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFormatError(f"{where}: {style.not_json} ({err}).") from err
        if not isinstance(row, dict):
            raise DataFormatError(f"{where}: {style.not_object}")
        rows.append((number, row))
    if not rows and empty:
        raise DataFormatError(f"{path}: the file holds no {empty}.")
    return rows

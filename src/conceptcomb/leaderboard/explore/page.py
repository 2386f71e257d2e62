"""The explorer's page: one HTML file with its script, style and data inside it.

The script and the style are package files (``static/``, linted by eslint), put into the page
as they are; a Content-Security-Policy allows that script and that style by their sha256 and
nothing else: no network (``default-src 'none'``), no other script, no inline handler. The
data is JSON in a ``<script type="application/json">`` block (never run), with ``<``, ``>``
and ``&`` written as ``\\u003c``... so that no text in it can close the block; the script
shows every text with ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

PAGE = "explore.html"


def static(name: str) -> str:
    return (
        resources.files("conceptcomb.leaderboard.explore")
        .joinpath("static", name)
        .read_text(encoding="utf-8")
    )


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def data_json(data: dict[str, Any]) -> str:
    """JSON that cannot end its script block, nor a line of the script that reads it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(char, escaped)
    return text


def html(data: dict[str, Any], title: str = "conceptcomb explorer") -> str:
    script, style = static("explorer.js"), static("explorer.css")
    policy = (
        f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{safe_title}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>The explorer needs JavaScript (its own script only: no network).</noscript>\n"
        '<div id="app"></div>\n'
        f'<script type="application/json" id="explorer-data">{data_json(data)}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def write(data: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / PAGE
    path.write_text(html(data), encoding="utf-8")
    return path

"""Writing tables: Markdown, CSV and a self-contained HTML page (plots inlined as PNG)."""

from __future__ import annotations

import base64
import csv
import html
import io
import re
from collections.abc import Sequence
from pathlib import Path

import conceptcomb
from conceptcomb.common.tables import PUBLISHED, Cell, Row, Table

FIXED = ("model", "setting", "framework / source", "items", "task version")
JUDGE = "judge"  # a judged table's column (`Table.judged`), after the framework / source
# Markdown and CSV: the last column (the fixed columns and the metrics stay together);
# HTML: beside the items, where a reader sees it without scrolling.
VERIFICATION = "verification"
HTML_FIXED = (*FIXED, VERIFICATION)
LEGEND = (
    "verification: *verified* rows come from a bundle whose per-item evidence `conceptcomb "
    "validate-bundle` checked on the whole test set of the pinned dataset; *partial* on a "
    "subset of it (a --limit run); *unverified* rows come from results files, or from a "
    "bundle without per-item evidence."
)
VERSION_LEGEND = (
    "task version: the version of the tasks a row ran (lm-eval `version`, Inspect task "
    "`version`, a bundle's `tasks[].version`); it changes with the task's prompts, data, "
    "parsing or scoring (see the benchmark README's Changelog), and rows of different "
    "versions are not comparable."
)


def cell_text(cell: Cell | None, digits: int, with_stderr: bool = True) -> str:
    if cell is None or cell.value is None:
        return "–"
    text = f"{cell.value:.{digits}f}"
    if with_stderr and cell.stderr is not None:
        text += f" ± {cell.stderr:.{digits}f}"
    return text


def _origin(row: Row) -> str:
    return f"**published**: {row.framework}" if row.origin == PUBLISHED else row.framework


def fixed_columns(table: Table, names: Sequence[str] = FIXED) -> list[str]:
    """The fixed columns, with the judge's after the framework / source in a judged table."""
    names = list(names)
    return [*names[:3], JUDGE, *names[3:]] if table.judged else names


def _fixed_cells(table: Table, row: Row, origin: str) -> list[str]:
    cells = [row.setting, origin, row.items or "–", row.version or "–"]
    return [*cells[:2], row.judge or "–", *cells[2:]] if table.judged else cells


def markdown(table: Table) -> str:
    fixed_names = fixed_columns(table)
    header = [*fixed_names, *(c.flat_title for c in table.columns), VERIFICATION]
    lines = [f"### {table.title}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "---|" * len(fixed_names) + "---:|" * len(table.columns) + "---|")
    for row in table.rows:
        model = f"**{row.model}**" if row.origin != PUBLISHED else row.model
        cells = [cell_text(row.cells.get(c.key), table.digits) for c in table.columns]
        fixed = [model, *_fixed_cells(table, row, _origin(row))]
        end = [row.verification or "–"]
        lines.append("| " + " | ".join(s.replace("|", "\\|") for s in fixed + cells + end) + " |")
    notes = table_notes(table)
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def table_notes(table: Table) -> list[str]:
    """The notes under a table, each a whole sentence (ending with its full stop)."""
    notes = [*table.notes, *_row_notes(table.rows), *_legend(table)]
    return [
        note if note.rstrip().endswith((".", "!", "?")) else note.rstrip() + "." for note in notes
    ]


def _legend(table: Table) -> list[str]:
    ours = table.ours()
    if not ours:
        return []
    notes = [LEGEND, VERSION_LEGEND]
    versions = sorted({row.version for row in ours if row.version})
    if len(versions) > 1:
        notes.append(
            f"these rows ran different task versions ({', '.join(versions)}): compare only "
            "rows of one version."
        )
    return notes


def _row_notes(rows: Sequence[Row]) -> list[str]:
    seen: dict[str, list[str]] = {}
    for row in rows:
        if row.note:
            seen.setdefault(row.note, []).append(f"{row.model} {row.setting}".strip())
    return [f"{', '.join(dict.fromkeys(who))}: {note}" for note, who in seen.items()]


def write_csv(table: Table, path: Path) -> None:
    """One line per row; each metric as value and stderr columns (empty when absent)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = ["table", "origin", "model", "setting", "framework_or_source", "items"]
        header += ["task_version", "note", *([JUDGE] if table.judged else [])]
        for column in table.columns:
            header += [column.key, f"{column.key}_stderr"]
        writer.writerow([*header, VERIFICATION])
        for row in table.rows:
            line = [table.key, row.origin, row.model, row.setting, row.framework, row.items]
            line += [row.version, row.note, *([row.judge] if table.judged else [])]
            for column in table.columns:
                cell = row.cells.get(column.key)
                line.append("" if cell is None or cell.value is None else repr(cell.value))
                line.append("" if cell is None or cell.stderr is None else repr(cell.stderr))
            writer.writerow([*line, row.verification])


# --- HTML ------------------------------------------------------------------------------------
CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px;
       color: #1d1d1f; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 6px; }
p.meta { color: #666; font-size: 12px; margin: 0 0 12px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0; }
th, td { border: 1px solid #d0d0d0; padding: 3px 6px; background: #fff; }
th { background: #f0f2f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td { white-space: nowrap; }
/* Long names wrap (a model's path, a paper's source); a value wraps only before its ±. */
td.name { white-space: normal; overflow-wrap: anywhere; min-width: 9em; max-width: 17em; }
td.source { white-space: normal; min-width: 7em; max-width: 12em; }
td.num { white-space: normal; min-width: 3.5em; }
/* Wider than the window: the table scrolls and the model column stays in view. */
th.name, td.name { position: sticky; left: 0; z-index: 1; }
tr.ours td { background: #eaf3ff; font-weight: 600; }
tr.published td { color: #555; }
span.badge { font-size: 10px; border-radius: 3px; padding: 0 4px; margin-right: 4px; }
span.ours { background: #1f77b4; color: white; } span.pub { background: #999; color: white; }
ul.notes { font-size: 12px; color: #444; margin: 4px 0 0 0; padding-left: 18px; }
div.scroll { overflow-x: auto; } figure { margin: 12px 0; }
figure img { max-width: 1100px; border: 1px solid #ddd; }
figcaption { font-size: 12px; color: #555; }
tr td.verified { color: #1a7f37; } tr td.partial { color: #9a6700; }
tr td.unverified { color: #888; }
"""


def _header_cell(name: str, rowspan: int = 1) -> str:
    kind = ' class="name"' if name == HTML_FIXED[0] else ""
    span = f' rowspan="{rowspan}"' if rowspan > 1 else ""
    return f"<th{kind}{span}>{html.escape(name)}</th>"


def _html_header(table: Table) -> str:
    names = fixed_columns(table, HTML_FIXED)
    fixed = "".join(_header_cell(name, 2) for name in names)
    groups: list[tuple[str, int]] = []
    for column in table.columns:
        if groups and groups[-1][0] == column.group:
            groups[-1] = (column.group, groups[-1][1] + 1)
        else:
            groups.append((column.group, 1))
    if all(not name for name, _ in groups):
        fixed = "".join(_header_cell(name) for name in names)
        titles = "".join(f"<th>{html.escape(c.title)}</th>" for c in table.columns)
        return f"<tr>{fixed}{titles}</tr>"
    spans = "".join(f'<th colspan="{n}">{html.escape(name)}</th>' for name, n in groups)
    titles = "".join(f"<th>{html.escape(c.title)}</th>" for c in table.columns)
    return f"<tr>{fixed}{spans}</tr><tr>{titles}</tr>"


def _html_row(table: Table, row: Row) -> str:
    ours = row.origin != PUBLISHED
    badge = (
        '<span class="badge ours">ours</span>' if ours else '<span class="badge pub">paper</span>'
    )
    title = f' title="{html.escape(row.note)}"' if row.note else ""
    fixed = [
        f'<td class="name"{title}>{badge}{html.escape(row.model)}</td>',
        f"<td>{html.escape(row.setting)}</td>",
        f'<td class="source">{html.escape(row.framework)}</td>',
        *([f'<td class="source">{html.escape(row.judge or "–")}</td>'] if table.judged else []),
        f"<td>{html.escape(row.items or '–')}</td>",
        f"<td>{html.escape(row.version or '–')}</td>",
        f'<td class="{row.verification}">{html.escape(row.verification or "–")}</td>',
    ]
    cells = [
        f'<td class="num">{_number_html(row.cells.get(c.key), table.digits)}</td>'
        for c in table.columns
    ]
    kind = "ours" if ours else "published"
    return f'<tr class="{kind}">' + "".join(fixed + cells) + "</tr>"


def _number_html(cell: Cell | None, digits: int) -> str:
    """A value and its ± standard error, which may wrap onto a second line, only there."""
    return html.escape(cell_text(cell, digits)).replace(" ± ", " ±\u00a0")


def html_table(table: Table) -> str:
    body = "".join(_html_row(table, row) for row in table.rows)
    notes = table_notes(table)
    note_list = "".join(f"<li>{inline_html(n)}</li>" for n in notes)
    return (
        f"<h2>{html.escape(table.title)}</h2>"
        f'<div class="scroll"><table><thead>{_html_header(table)}</thead>'
        f"<tbody>{body}</tbody></table></div>"
        + (f'<ul class="notes">{note_list}</ul>' if notes else "")
    )


_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")


def inline_html(text: str) -> str:
    """A note written in Markdown (`code`, **strong**, *emphasis*) as HTML, escaped."""
    parts = _CODE.split(text)  # odd positions: code spans, kept verbatim
    out = []
    for i, part in enumerate(parts):
        escaped = html.escape(part)
        if i % 2:
            out.append(f"<code>{escaped}</code>")
        else:
            escaped = _STRONG.sub(r"<strong>\1</strong>", escaped)
            out.append(_EMPHASIS.sub(r"<em>\1</em>", escaped))
    return "".join(out)


def html_figure(png: Path, caption: str) -> str:
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def html_page(title: str, sections: Sequence[str], sources: Sequence[str]) -> str:
    """A page with no external resource: styles inline, images as data: URIs."""
    listed = ", ".join(html.escape(s) for s in sources)
    buffer = io.StringIO()
    buffer.write('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">')
    buffer.write(f"<title>{html.escape(title)}: leaderboard</title><style>{CSS}</style>")
    buffer.write("</head><body>")
    buffer.write(f"<h1>{html.escape(title)}</h1>")
    buffer.write(
        f'<p class="meta">conceptcomb {conceptcomb.__version__} report. Blue rows '
        f"(<b>ours</b>) come from: {listed}. Grey rows are the papers' published numbers, "
        "with their source table.</p>"
    )
    for section in sections:
        buffer.write(section)
    buffer.write("</body></html>\n")
    return buffer.getvalue()

"""Plots of leaderboard tables (PNG, matplotlib's Agg backend; the ``report`` extra).

A benchmark names the plots of its tables (``PLOTS`` in ``<benchmark>/tables.py``):

* `emergence_plot`: E and C per model (ours and the paper's Base, Human, Gold rows), with
  standard errors (CCPT);
* `confusion_plot`: a confusion matrix per model, from ``cm_<gold>_as_<predicted>`` columns;
* `gap_plot`: id vs ood per model and metric, the gap being the distance between the dots.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.tables import PUBLISHED, Row, Table

OURS_COLOR, PAPER_COLOR = "#1f77b4", "#b8b8b8"
ID_COLOR, OOD_COLOR = "#1f77b4", "#ff7f0e"
INSTALL_HINT = "pip install 'conceptcomb[report]'"


def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as err:
        raise ConfigError(f"The report's plots need matplotlib: {INSTALL_HINT}.") from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(row: Row) -> str:
    where = "paper" if row.origin == PUBLISHED else row.framework.split()[0]
    setting = f" · {row.setting}" if row.setting else ""
    return f"{row.model}{setting} ({where})"


def _value(row: Row, key: str) -> tuple[float, float]:
    cell = row.cells.get(key)
    if cell is None or cell.value is None:
        return math.nan, 0.0
    return cell.value, cell.stderr or 0.0


def emergence_plot(table: Table, path: Path) -> Path:
    """Horizontal bars: E (property induction), C (canceled), E (noun phrase completion)."""
    plt = pyplot()
    rows = table.ours() + [
        row
        for row in table.rows
        if row.origin == PUBLISHED and (row.setting == "Base" or row.model in ("Human", "Gold"))
    ]
    panels = (
        ("pi_emergent:E", "(1) property induction: emergence E ↑"),
        ("pi_canceled:C", "(2) property induction: cancellation C ↑"),
        ("npc_emergent:E", "(3) noun phrase completion: emergence E ↑"),
    )
    height = 1.2 + 0.32 * len(rows)
    fig, axes = plt.subplots(1, 3, figsize=(13, height), sharey=True)
    positions = list(range(len(rows)))[::-1]
    colors = [OURS_COLOR if row.origin != PUBLISHED else PAPER_COLOR for row in rows]
    for axis, (key, title) in zip(axes, panels, strict=True):
        values = [_value(row, key) for row in rows]
        axis.barh(
            positions,
            [0.0 if math.isnan(v) else v for v, _ in values],
            xerr=[e for _, e in values],
            color=colors,
            edgecolor="#333333",
            linewidth=0.4,
            error_kw={"elinewidth": 0.8, "capsize": 2},
        )
        for y, (v, e), row in zip(positions, values, rows, strict=True):
            # our values are written out: a bar of width 0 and a missing value look alike
            text = "n/a" if math.isnan(v) else (f"{v:.1f}" if row.origin != PUBLISHED else "")
            axis.text(0.5 if math.isnan(v) else v + e + 1, y, text, va="center", fontsize=7)
        axis.set_title(title, fontsize=9)
        axis.set_xlim(0, 100)
        axis.grid(axis="x", color="#e5e5e5")
        axis.set_axisbelow(True)
    axes[0].set_yticks(positions, [_label(row) for row in rows], fontsize=8)
    fig.suptitle(
        "CCPT: emergence and cancellation per model (blue: ours; grey: paper)", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def confusion_plot(table: Table, path: Path) -> Path:
    """One 4x4 heatmap per model: rows gold type, columns predicted type, percent."""
    plt = pyplot()
    rows = table.ours() + [row for row in table.rows if row.origin == PUBLISHED]
    ncols = min(len(rows), 4)
    nrows = math.ceil(len(rows) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, 3.4 * nrows), squeeze=False)
    types = list(
        dict.fromkeys(
            c.key.removeprefix("cm_").split("_as_")[0]
            for c in table.columns
            if c.key.startswith("cm_")
        )
    )
    short = [name[:4] for name in types]
    for index, axis in enumerate(axes.flat):
        if index >= len(rows):
            axis.axis("off")
            continue
        row = rows[index]
        matrix = [[_value(row, f"cm_{gold}_as_{pred}")[0] for pred in types] for gold in types]
        axis.imshow(matrix, vmin=0, vmax=100, cmap="Blues")
        for i, line in enumerate(matrix):
            for j, value in enumerate(line):
                text = "n/a" if math.isnan(value) else f"{value:.0f}"
                color = "white" if not math.isnan(value) and value > 60 else "#222222"
                axis.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
        axis.set_xticks(range(4), short, fontsize=8)
        axis.set_yticks(range(4), short, fontsize=8)
        axis.set_xlabel("predicted", fontsize=8)
        axis.set_ylabel("gold", fontsize=8)
        axis.set_title(_label(row), fontsize=8)
    fig.suptitle("CCPT property-type prediction: confusion matrices (% of each gold type)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _pairs(table: Table) -> list[tuple[str, Row, Row]]:
    """(label, id row, ood row) for every model with both."""
    found: dict[tuple[str, str, str], dict[str, Row]] = {}
    for row in table.rows:
        setting, _, style = row.setting.partition(" ")
        if setting in ("id", "ood"):
            found.setdefault((row.model, row.framework, style), {})[setting] = row
    pairs = []
    for (_, _, style), rows in found.items():
        if "id" in rows and "ood" in rows:
            label = _label(rows["id"]).replace(" · id", "") + (f" {style}" if style else "")
            pairs.append((label, rows["id"], rows["ood"]))
    ours = [p for p in pairs if p[1].origin != PUBLISHED]
    return ours + [p for p in pairs if p[1].origin == PUBLISHED]


def gap_plot(table: Table, path: Path) -> Path:
    """Per metric: a dot for id and one for ood per model; the line between them is the gap."""
    plt = pyplot()
    pairs = _pairs(table)
    columns = table.columns
    fig, axes = plt.subplots(2, 4, figsize=(14, 1.6 + 0.55 * len(pairs)), sharey=True)
    positions = list(range(len(pairs)))[::-1]
    for axis, column in zip(axes.flat, columns, strict=False):
        # One call per kind of mark, not one per model: each artist costs a draw of its own.
        ids = [_value(id_row, column.key)[0] for _, id_row, _ in pairs]
        oods = [_value(ood_row, column.key)[0] for _, _, ood_row in pairs]
        axis.hlines(positions, ids, oods, color="#999999", linewidth=1.2, zorder=1)
        axis.scatter(ids, positions, color=ID_COLOR, s=22, zorder=2, label="id")
        axis.scatter(oods, positions, color=OOD_COLOR, s=22, zorder=2, label="ood")
        axis.set_title(f"{column.title} (gap = id - ood)", fontsize=9)
        axis.grid(axis="x", color="#e5e5e5")
    axes[0][0].set_yticks(positions, [label for label, _, _ in pairs], fontsize=8)
    axes[1][0].set_yticks(positions, [label for label, _, _ in pairs], fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles[:2], labels[:2], loc="upper right", fontsize=8)
    fig.suptitle("CGGC: in-distribution (id) vs compositional generalization (ood) per model")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

"""The plots drawn from the papers' own rows (no model needed): the CGGC id-vs-ood gap and
the CCPT confusion matrix."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from conceptcomb.ccpt.tables import ccpt_type_prediction
from conceptcomb.cggc.tables import cggc_table4
from conceptcomb.common import plots


def test_gap_plot_pairs_every_model_of_table_4(tmp_path: Path) -> None:
    table = cggc_table4([])
    pairs = plots._pairs(table)
    assert [label for label, _, _ in pairs][:2] == ["Llama2 (paper)", "Llama2-chat (paper)"]
    assert len(pairs) == 8
    _, id_row, ood_row = pairs[0]
    assert (id_row.setting, ood_row.setting) == ("id", "ood")
    assert id_row.cells["coverage"].value - ood_row.cells["coverage"].value == pytest.approx(4.04)
    png = plots.gap_plot(table, tmp_path / "gap.png")
    with Image.open(png) as image:
        assert image.format == "PNG" and image.width == 1400
        colours = {rgb for _, rgb in image.convert("RGB").getcolors(1 << 24)}
    assert (0x1F, 0x77, 0xB4) in colours and (0xFF, 0x7F, 0x0E) in colours  # id and ood dots


def test_confusion_plot_of_table_5(tmp_path: Path) -> None:
    png = plots.confusion_plot(ccpt_type_prediction([]), tmp_path / "confusion.png")
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] > 300
        assert len(image.convert("RGB").getcolors(1 << 24)) > 50  # a heatmap, not a blank page

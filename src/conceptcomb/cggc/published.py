"""CGGC's published rows (Fu and Frank, Findings of EMNLP 2024): Tables 4, 6 and 7.

Percentages as printed, CIDEr x10 as CommonGen reports it; the rows are in ``paper_tables/``.
"""

from __future__ import annotations

from importlib.resources import files

from conceptcomb.common.tables import PublishedRow, parse_block

PAPER = "Fu and Frank (Findings of EMNLP 2024)"

NOTES = {
    "gpt4o": "evaluated on 100 random test instances only (the paper's footnote)",
    "llama2chat": "as printed: the ROUGE-2 gap 2.14 is not id - ood (8.35 - 6.11 = 2.24)",
    "table7": "the paper does not name Table 7's model; its analyses use Llama2",
    "table6": "Llama2 (the paper's analyses use it, footnote 12); METEOR as printed",
}

# A file per paper table (see `conceptcomb.common.tables.parse_block`).
TABLES = files("conceptcomb.cggc") / "paper_tables"

CGGC_METRICS = ("rouge2", "rougeL", "bleu3", "bleu4", "meteor", "cider", "spice", "coverage")
# Table 4: id, ood and the gap (id - ood), as printed.
CGGC_TABLE4 = "cggc_table4"
# Table 6: the gap per structure type of the test items.
CGGC_TABLE6 = "cggc_table6"
# Table 7: difficulty-based demonstrations (ood).
CGGC_TABLE7 = "cggc_table7"
# Fig. 4: packaging of the item's primitives over the demonstrations (ood).
CGGC_FIG4 = "cggc_fig4"
# Table 7's setting -> our task whose demonstrations are chosen that way
CGGC_TABLE7_TASKS = {
    "level easy (typeA)": "cggc_ood_typeA",
    "level medium (typeB)": "cggc_ood_typeB",
    "level hard (typeC)": "cggc_ood_typeC",
    "order easy-to-hard": "cggc_ood_easy2hard",
    "order hard-to-easy": "cggc_ood_hard2easy",
}


def published() -> list[PublishedRow]:
    return [
        row
        for key, name in ((CGGC_TABLE4, "4"), (CGGC_TABLE6, "6"), (CGGC_TABLE7, "7"))
        for row in parse_block(
            key, f"{PAPER}, Table {name}", CGGC_METRICS, TABLES / f"table{name}.txt", NOTES
        )
    ]

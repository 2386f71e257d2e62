"""CCPT's published rows (Song et al., NAACL 2025): Tables 3 and 5, in ``paper_tables/``."""

from __future__ import annotations

from importlib.resources import files

from conceptcomb.common.tables import PublishedRow, parse_block

PAPER = "Song et al. (NAACL 2025)"
# Table 3's judge as the paper names it (section 4, "GPT-4o OpenAI (2024b)"): no snapshot is
# stated for the judge (GPT-4o-20240513 is one of the models it evaluates).
PAPER_JUDGE = "GPT-4o"

NOTES = {
    "oracle": "Multi-Oracle: best of 5 samples per item, an upper bound the paper does not rank",
    "sonnet": "as printed: its noun-phrase-completion cells repeat its property-induction "
    "emergent cells (33.0, 81.2, 39.4), probably a slip in the paper",
    "gold": "the dataset's own answers judged the same way: an upper bound",
}

# A file per paper table (see `conceptcomb.common.tables.parse_block`).
TABLES = files("conceptcomb.ccpt") / "paper_tables"

# Table 3, generative tasks judged by GPT-4o. Columns: property induction emergent (R_HMP,
# R_NP, E), property induction canceled (R_HMP, R_NP, C), noun phrase completion emergent
# (R_HMP, R_NP, E). The ± term is the standard error over three sampling seeds (T = 0.7,
# top-p 0.95; Appendix), not over items.
CCPT_GENERATIVE = "ccpt_generative"
CCPT_GENERATIVE_COLUMNS = (
    "pi_emergent:R_HMP", "pi_emergent:R_NP", "pi_emergent:E",
    "pi_canceled:R_HMP", "pi_canceled:R_NP", "pi_canceled:C",
    "npc_emergent:R_HMP", "npc_emergent:R_NP", "npc_emergent:E",
)  # fmt: skip

# Table 5, GPT-4o's property-type prediction as a row-normalised confusion matrix: the cells
# are its rows (gold type) in order, after the accuracy, 56.4, stated in section 5.2 (the
# mean of the diagonal: the 1000 items hold 250 of each type).
CCPT_TYPE_PREDICTION = "ccpt_type_prediction"
PROPERTY_TYPES = ("emergent", "component", "canceled", "others")
CCPT_TYPE_PREDICTION_COLUMNS = (
    "accuracy",
    *(f"cm_{gold}_as_{pred}" for gold in PROPERTY_TYPES for pred in PROPERTY_TYPES),
)


def published() -> list[PublishedRow]:
    tables = (
        (CCPT_GENERATIVE, "Table 3", CCPT_GENERATIVE_COLUMNS, "table3.txt", PAPER_JUDGE),
        (CCPT_TYPE_PREDICTION, "Table 5", CCPT_TYPE_PREDICTION_COLUMNS, "table5.txt", ""),
    )
    return [
        row
        for key, label, columns, name, judge in tables
        for row in parse_block(key, f"{PAPER}, {label}", columns, TABLES / name, NOTES, judge=judge)
    ]

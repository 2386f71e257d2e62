"""AbsPyramid's published rows (Wang et al., Findings of NAACL 2024): detection (Tables 4, 5
and 10) and generation (Tables 7 and 19-21), as printed in ``paper_tables/``."""

from __future__ import annotations

from importlib.resources import files

from conceptcomb.common.tables import PublishedRow, parse_block

PAPER = "Wang et al. (Findings of NAACL 2024)"

NOTES = {
    "api": "1,000 random test items per relation (Appendix B)",
    "pluscot": "printed as '+ CoT' under ChatGPT",
    "fine_tuned": "fine-tuned on the train split before generating",
    "bleu_order": "as printed: BLEU-2 above BLEU-1",
}

# A file per paper table (see `conceptcomb.common.tables.parse_block`).
TABLES = files("conceptcomb.abspyramid") / "paper_tables"

ABSPYRAMID_DETECTION = "abspyramid_detection"
DETECTION_RELATIONS = ("noun", "verb", "event", "all")
DETECTION_METRICS = ("accuracy", "macro_f1", "auc")
ABSPYRAMID_DETECTION_COLUMNS = tuple(
    f"{relation}:{metric}" for relation in DETECTION_RELATIONS for metric in DETECTION_METRICS
)
_SEPARATE = ABSPYRAMID_DETECTION_COLUMNS[:9]  # noun, verb, event
_NO_AUC = tuple(c for c in _SEPARATE if not c.endswith(":auc"))
# Table -> its columns. Table 4: each relation trained separately, the setting is the
# paper's row group; Table 5: all relations trained together (the only rows with an "all"
# column); Table 10: the NLI-format prompt (our _nli and _nli_cot tasks), no AUC.
DETECTION_TABLES = {"4": _SEPARATE, "5": ABSPYRAMID_DETECTION_COLUMNS, "10": _NO_AUC}

ABSPYRAMID_GENERATION = "abspyramid_generation"
GENERATION_METRICS = ("bleu1", "bleu2", "rouge2", "rougeL", "meteor")
# Table 7: all relations; Tables 19, 20, 21: one relation each.
GENERATION_TABLES = {"all": "7", "noun": "19", "verb": "20", "event": "21"}


def _rows(key: str, table: str, columns: tuple[str, ...]) -> tuple[PublishedRow, ...]:
    """Rows of ``Table <table>`` (its file ``paper_tables/table<table>.txt``)."""
    source = f"{PAPER}, Table {table}"
    return parse_block(key, source, columns, TABLES / f"table{table}.txt", NOTES)


def published() -> list[PublishedRow]:
    rows = [
        row
        for table, columns in DETECTION_TABLES.items()
        for row in _rows(ABSPYRAMID_DETECTION, table, columns)
    ]
    for relation, table in GENERATION_TABLES.items():
        columns = tuple(f"{relation}:{name}" for name in GENERATION_METRICS)
        rows += _rows(ABSPYRAMID_GENERATION, table, columns)
    return rows

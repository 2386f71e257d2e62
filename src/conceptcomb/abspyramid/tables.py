"""AbsPyramid's leaderboard tables: detection (Tables 4, 5, 10), generation (7, 19-21)."""

from __future__ import annotations

from collections.abc import Iterable

from conceptcomb.abspyramid.published import (
    ABSPYRAMID_DETECTION,
    ABSPYRAMID_DETECTION_COLUMNS,
    ABSPYRAMID_GENERATION,
    DETECTION_METRICS,
    DETECTION_RELATIONS,
    GENERATION_METRICS,
    published,
)
from conceptcomb.common.runs import Run
from conceptcomb.common.tables import Column, PlotSpec, Table, collect, our_row, published_rows

ABSPYRAMID_VARIANTS = {
    "": "log-likelihood of Yes/No (zero-shot prompt)",
    "_zs": "zero-shot, generated answer",
    "_cot": "CoT",
    "_icl": "10-shot ICL",
    "_icl_cot": "CoT + 10-shot",  # Table 4's "ChatGPT (CoT + 10-shot)"
    "_nli": "NLI prompt",
    "_nli_cot": "NLI prompt + CoT",
}
# The formats are compared with the zero-shot generated answer on the same items.
ABSPYRAMID_REFERENCE = ABSPYRAMID_VARIANTS["_zs"]
_METRIC_TITLES = {"accuracy": "Acc", "macro_f1": "Ma-F1", "auc": "AUC"}


def abspyramid_detection(runs: Iterable[Run]) -> Table:
    columns = []
    for key in ABSPYRAMID_DETECTION_COLUMNS:
        relation, metric = key.split(":")
        group = relation.capitalize()
        columns.append(Column(key, _METRIC_TITLES[metric], group, True, group))
    table = Table(
        ABSPYRAMID_DETECTION,
        "abspyramid",
        "AbsPyramid abstraction detection (Wang et al. 2024, Tables 4, 5, 10)",
        columns,
        digits=2,
    )
    for run in runs:
        for suffix, setting in ABSPYRAMID_VARIANTS.items():
            wanted = {
                f"abspyramid_det_{relation}{suffix}": (f"{relation}:", list(DETECTION_METRICS))
                for relation in DETECTION_RELATIONS
            }
            tasks, cells = collect(run, wanted)
            if tasks:
                versus = (
                    None if setting == ABSPYRAMID_REFERENCE else (setting, ABSPYRAMID_REFERENCE)
                )
                table.rows.append(our_row(run, setting, tasks, cells, versus=versus))
    table.rows += published_rows(published(), ABSPYRAMID_DETECTION)
    table.notes += [
        "Values are percent. Tables 4 and 10 train/evaluate each relation separately (no All "
        "column); Table 5 trains all relations together. Fine-tuned rows are not zero-shot models.",
        "Generated answers have no probability, hence no AUC (as the paper's LLM API rows).",
    ]
    return table


def abspyramid_generation(runs: Iterable[Run]) -> Table:
    titles = {"bleu1": "B-1", "bleu2": "B-2", "rouge2": "R-2", "rougeL": "R-L", "meteor": "Meteor"}
    columns = [Column(name, titles[name], "", True) for name in GENERATION_METRICS]
    table = Table(
        ABSPYRAMID_GENERATION,
        "abspyramid",
        "AbsPyramid abstraction generation (Wang et al. 2024, Tables 7, 19-21)",
        columns,
        digits=2,
    )
    names = list(GENERATION_METRICS)
    for run in runs:
        for relation in DETECTION_RELATIONS:
            tasks, cells = collect(run, {f"abspyramid_gen_{relation}": ("", names)})
            if tasks:
                table.rows.append(our_row(run, relation, tasks, cells))
    for row in published_rows(published(), ABSPYRAMID_GENERATION):
        row.cells = {key.split(":")[1]: cell for key, cell in row.cells.items()}
        table.rows.append(row)
    table.notes.append(
        "Setting = relation (all is Table 7; noun, verb, event Tables 19-21). The paper's "
        "models were fine-tuned on the train split; ours are evaluated as given."
    )
    return table


def plots() -> dict[str, list[PlotSpec]]:
    """Table key -> its plots (drawn only when the report asks: matplotlib is optional)."""
    return {}


def tables(runs: list[Run]) -> list[Table]:
    """Every leaderboard table of the benchmark, built from the runs (papers' rows after)."""
    return [abspyramid_detection(runs), abspyramid_generation(runs)]

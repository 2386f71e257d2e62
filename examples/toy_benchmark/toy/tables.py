"""The toy's leaderboard table: a row per run and task."""

from __future__ import annotations

from conceptcomb.common.runs import Run
from conceptcomb.common.tables import Column, PlotSpec, Table, collect, our_row
from conceptcomb.toy.tasks import all_specs


def tables(runs: list[Run]) -> list[Table]:
    table = Table("toy", "toy", "Toy: repeat a word", [Column("exact_match", "EM", "", True)])
    for run in runs:
        for spec in all_specs():
            found, cells = collect(run, {spec.name: ("", ["exact_match"])})
            if found:
                table.rows.append(our_row(run, spec.describe(), found, cells))
    return [table]


def plots() -> dict[str, list[PlotSpec]]:
    return {}

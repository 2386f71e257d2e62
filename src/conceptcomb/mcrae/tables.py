"""McRae's leaderboard table (ESSLLI 2008 task 3): P@10/20/30, phrase and strict matching."""

from __future__ import annotations

from collections.abc import Iterable

from conceptcomb.common.runs import Run
from conceptcomb.common.tables import (
    Column,
    PlotSpec,
    Table,
    collect,
    our_row,
)
from conceptcomb.mcrae.published import NOTE

MCRAE = "mcrae"
MCRAE_OPTIONS = ("tie_rule", "senses")


def mcrae(runs: Iterable[Run]) -> Table:
    from conceptcomb.mcrae.metrics import CUTOFFS, MODES, metric_name

    columns = [
        Column(
            metric_name("P", cutoff, mode),
            f"P@{cutoff}",
            f"{mode} matching",
            True,
            "" if mode == "phrase" else mode,
        )
        for mode in MODES
        for cutoff in CUTOFFS
    ]
    table = Table(MCRAE, "mcrae", "McRae property generation (ESSLLI 2008, task 3)", columns)
    table.digits = 3
    names = [c.key for c in columns]
    for run in runs:
        for task_name, setting in (("mcrae_esslli44", "44 ESSLLI nouns"), ("mcrae_all", "all")):
            tasks, cells = collect(run, {task_name: ("", names)})
            if tasks:
                # only McRae's own options (lm-eval's --metadata goes to every task)
                mcrae_options = {k: v for k, v in tasks[0].options.items() if k in MCRAE_OPTIONS}
                options = ", ".join(f"{k}={v}" for k, v in sorted(mcrae_options.items()))
                label = f"{setting} ({options})" if options else setting
                table.rows.append(our_row(run, label, tasks, cells))
    table.notes.append(NOTE)
    return table


def plots() -> dict[str, list[PlotSpec]]:
    """Table key -> its plots (drawn only when the report asks: matplotlib is optional)."""
    return {}


def tables(runs: list[Run]) -> list[Table]:
    """Every leaderboard table of the benchmark, built from the runs (papers' rows after)."""
    return [mcrae(runs)]

"""``conceptcomb cggc ...``: build the dataset, print its statistics, report results."""

from __future__ import annotations

import argparse

from conceptcomb.cggc.analysis import report
from conceptcomb.cggc.dataset_build import builder, stats


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cggc = commands.add_parser("cggc", help="CGGC: build the dataset, statistics, Table 4 report")
    actions = cggc.add_subparsers(dest="cggc_command", required=True)
    build = actions.add_parser(
        "build", help="build CGGC from CommonGen v1.1 and ConceptNet (paper section 4)"
    )
    builder.add_arguments(build)
    build.set_defaults(run=builder.run)
    show = actions.add_parser(
        "stats",
        help="Tables 2, 10 (per reading of Fig. 3's types) and 12 of a built or official "
        "dataset, beside the paper's",
    )
    stats.add_arguments(show)
    show.set_defaults(run=stats.run)
    table = actions.add_parser("report", help="Table 4 (id, ood, gap) from lm-eval/Inspect results")
    report.add_arguments(table)
    table.set_defaults(run=report.run)

"""``conceptcomb explore RUN... --out DIR``: the items behind `compare`'s numbers, in one page
that opens from disk (no server, no network)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conceptcomb.common.errors import ConceptcombError
from conceptcomb.leaderboard.compare.cli import RUN_HELP, variant_pairs
from conceptcomb.leaderboard.explore import data, page
from conceptcomb.leaderboard.statistics import stats


def add_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "explore",
        help="write an item explorer: one self-contained HTML page with every run's reply "
        "to each item, their per-item values and compare's paired statistics",
        description="Reads what `conceptcomb compare` reads and writes DIR/explore.html: a "
        "page that opens from disk with no server and no network. Choose two runs as A and "
        "B: compare's A - B heads the view; show only the items where they differ, sort by "
        "A - B, search, filter by the benchmark's own fields. Guide: docs/exploring.md.",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help=RUN_HELP)
    parser.add_argument("--out", type=Path, required=True, help="folder to write explore.html to")
    parser.add_argument(
        "--variants",
        nargs="*",
        metavar="TASK_A=TASK_B",
        default=None,
        help="explore variants of one task within each model (as `compare --variants`)",
    )
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=stats.N_RESAMPLES,
        help=f"bootstrap resamples for corpus metrics (default {stats.N_RESAMPLES:,}, as compare)",
    )
    parser.add_argument("--data-dir", help="folder with the benchmarks' files (as compare)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.n_resamples < 100:
        print("conceptcomb: error: --n-resamples: at least 100", file=sys.stderr)
        return 2
    named = variant_pairs(args.variants)
    if named is None:
        print("conceptcomb: error: --variants: pairs are written TASK_A=TASK_B", file=sys.stderr)
        return 2
    if args.out.exists() and not args.out.is_dir():
        print(f"conceptcomb: error: --out {args.out}: not a folder", file=sys.stderr)
        return 2
    try:
        found = data.gather(
            args.runs,
            args.data_dir,
            named if args.variants is not None else None,
            args.n_resamples,
        )
    except ConceptcombError as err:
        print(f"conceptcomb: error: {err}", file=sys.stderr)
        return 2
    if not found["views"]:
        for note in found["notes"]:
            print(f"note: {note}", file=sys.stderr)
        print("conceptcomb: error: no run holds per-item scores of any task", file=sys.stderr)
        return 1
    path = page.write(found, args.out)
    items = sum(len(v["items"]) for v in found["views"])
    print(f"wrote {path} ({len(found['views'])} views, {items:,} items, "
          f"{path.stat().st_size / 1e6:.1f} MB)")  # fmt: skip
    return 0

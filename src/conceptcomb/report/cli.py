"""``conceptcomb report``, ``conceptcomb submit-bundle`` and ``conceptcomb validate-bundle``."""

from __future__ import annotations

import argparse
from pathlib import Path

from conceptcomb.report import build

RESULTS_HELP = (
    "lm-eval output folders or results_*.json (samples beside them), Inspect logs (.eval or "
    ".json) or their folders, `conceptcomb score --output` files; runs of the same model in "
    "the same framework are merged"
)


def run_submit(args: argparse.Namespace) -> int:
    from conceptcomb.report.bundle import calibration_summary, write_bundles
    from conceptcomb.report.runs import read_runs
    from conceptcomb.report.validate import validate_file

    calibration = calibration_summary(args.calibration) if args.calibration else None
    paths = write_bundles(read_runs(args.results), args.out, calibration)
    for path in paths:
        problems = validate_file(path)
        state = "valid" if not problems else "INVALID: " + "; ".join(problems)
        print(f"{path}  ({state})")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from conceptcomb.report.validate import validate_file

    code = 0
    for path in args.bundles:
        problems = validate_file(path)
        if problems:
            code = 1
            print(f"{path}: INVALID")
            for problem in problems:
                print(f"  - {problem}")
        else:
            print(f"{path}: valid")
    return code


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = commands.add_parser(
        "report",
        help="leaderboard tables (Markdown, CSV, HTML) and plots, the papers' rows beside yours",
        description="One page per benchmark the results touch, in the papers' layouts: CCPT "
        "Tables 3 and 5, CGGC Tables 4 (with the id-ood gap) and 7, AbsPyramid Tables 4/5/10 "
        "and 7/19-21, McRae P@10/20/30. The papers' published rows are marked as such.",
    )
    build.add_arguments(report)
    report.set_defaults(run=build.run)

    submit = commands.add_parser(
        "submit-bundle",
        help="one JSON file per model run for a leaderboard (versions, data checksums, "
        "prompts' hash, judge, metrics with standard errors)",
    )
    submit.add_argument("results", nargs="+", type=Path, help=RESULTS_HELP)
    submit.add_argument("--out", type=Path, default=Path("bundles"), help="folder (bundles/)")
    submit.add_argument(
        "--calibration",
        type=Path,
        help="`conceptcomb judge calibrate --output` file of the judge the runs used: its "
        "correlations with human ratings go into the bundle",
    )
    submit.set_defaults(run=run_submit)

    validate = commands.add_parser(
        "validate-bundle",
        help="check bundles: schema, content checksum, data revisions and checksums, no secrets",
    )
    validate.add_argument("bundles", nargs="+", type=Path, help="*.bundle.json files")
    validate.set_defaults(run=run_validate)

"""``conceptcomb report``, ``conceptcomb submit-bundle`` and ``conceptcomb validate-bundle``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conceptcomb.report import build

RESULTS_HELP = (
    "lm-eval output folders or results_*.json (samples beside them), Inspect logs (.eval or "
    ".json) or their folders, `conceptcomb score --output` files; runs of the same model in "
    "the same framework are merged"
)


def run_submit(args: argparse.Namespace) -> int:
    from conceptcomb.report.bundle import calibration_summary, write_bundles
    from conceptcomb.report.runs import nothing_usable, read_runs
    from conceptcomb.report.validate import check_file

    calibration = calibration_summary(args.calibration) if args.calibration else None
    runs = read_runs(args.results)
    for note in dict.fromkeys(note for run in runs for note in run.notes):
        print(f"note: {note}")
    usable = [run for run in runs if run.tasks]
    if not usable:
        print(f"conceptcomb: error: {nothing_usable(args.results, runs)}", file=sys.stderr)
        return 1
    paths = write_bundles(usable, args.out, calibration)
    for path in paths:
        check = check_file(path)
        state = "valid" if check.valid else "INVALID: " + "; ".join(check.problems)
        print(f"{path}  ({state})  {path.stat().st_size / 1024:.0f} KB")
        for task in check.tasks:
            print(f"  {task.line()}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from conceptcomb.report.validate import check_file

    code = 0
    settings = _rescore_settings(args) if args.rescore else None
    for path in args.bundles:
        check = check_file(path, args.data_dir)
        if check.problems:
            code = 1
            print(f"{path}: INVALID")
            for problem in check.problems:
                print(f"  - {problem}")
        else:
            print(f"{path}: valid")
        for task in check.tasks:
            print(f"  {task.line()}")
        if settings is not None and check.valid and not _rescore(path, check, settings, args):
            code = 1
    return code


def _rescore_settings(args: argparse.Namespace) -> Any:
    from conceptcomb.common.errors import ConfigError
    from conceptcomb.scorers.cli_options import judge_settings

    settings = judge_settings(args)
    if not settings.enabled:
        raise ConfigError("--rescore asks a judge again: choose one (--judge openai or local).")
    if args.tolerance < 0:
        raise ConfigError("--tolerance must be 0 or more.")
    return settings


def _rescore(path: Path, check: Any, settings: Any, args: argparse.Namespace) -> bool:
    """Ask the judge again for every task with evidence; False when one differs."""
    from conceptcomb.report.validate import read_bundle_file
    from conceptcomb.report.verify import UNVERIFIED, rescore_lines, rescore_task

    records = {record["task"]: record for record in read_bundle_file(path)["tasks"]}
    ok = True
    for task in check.tasks:
        if task.status == UNVERIFIED or not task.items:
            continue
        result = rescore_task(
            records[task.task], task.items, settings, args.tolerance, args.data_dir
        )
        ok = ok and result.ok
        for line in rescore_lines(result, args.tolerance):
            print(f"  {line}")
    return ok


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = commands.add_parser(
        "report",
        help="leaderboard tables (Markdown, CSV, HTML) and plots, the papers' rows beside yours",
        description="One page per benchmark the results touch, in the papers' layouts: CCPT "
        "Tables 3 and 5, CGGC Tables 4 (with the id-ood gap), 6 (the gap per structure type, "
        "t-tests), 7 and Fig. 4, AbsPyramid Tables 4/5/10 and 7/19-21, McRae P@10/20/30. The "
        "papers' published rows are marked as such.",
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
        help="check bundles: schema, content checksum, data revisions and checksums, no "
        "secrets, and the per-item evidence (verified, partial or unverified per task)",
        description="Offline: the schema, content_sha256, the datasets' pins, no secrets; the "
        "item ids against the task's test set in the pinned dataset (a subset is partial), "
        "each stored reply parsed again, the judge questions its answer asks, the per-item "
        "scores its ratings give, and the claimed metrics aggregated from the per-item scores. "
        "With --rescore a judge is asked every stored question again (through the judge "
        "cache) and the recomputed metrics are compared with the claimed ones.",
    )
    validate.add_argument("bundles", nargs="+", type=Path, help="*.bundle.json files")
    validate.add_argument(
        "--data-dir",
        help="folder with the benchmarks' pinned files (default: CONCEPTCOMB_DATA_DIR or the "
        "cache, downloading what is missing)",
    )
    validate.add_argument(
        "--rescore",
        action="store_true",
        help="ask the judge (the --judge-* options) every stored question again; exit 1 when "
        "a recomputed metric differs from the claimed one by more than --tolerance",
    )
    validate.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="largest accepted |recomputed - claimed| per metric, on the metric's scale (0: "
        "exact, up to floating-point rounding; a judge that is not deterministic needs more)",
    )
    from conceptcomb.scorers.cli_options import add_judge_options

    add_judge_options(validate)
    validate.set_defaults(run=run_validate)

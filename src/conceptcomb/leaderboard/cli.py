"""``conceptcomb report``, ``submit-bundle``, ``validate-bundle``, ``export``, ``compare``
(`conceptcomb.leaderboard.compare.cli`) and ``explore`` (`conceptcomb.leaderboard.explore`)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conceptcomb.leaderboard.compare import cli as compare_cli
from conceptcomb.leaderboard.explore import cli as explore_cli
from conceptcomb.leaderboard.report import build

RESULTS_HELP = (
    "lm-eval output folders or results_*.json (samples beside them), Inspect logs (.eval or "
    ".json) or their folders, `conceptcomb score --output` files; runs of the same model in "
    "the same framework are merged"
)


def run_submit(args: argparse.Namespace) -> int:
    try:
        return _submit(args)
    finally:  # what `_start_checks` started ends with the command (none is left loading)
        _stop_checks()


def _submit(args: argparse.Namespace) -> int:
    from conceptcomb.leaderboard.bundles.bundle import calibration_summary, write_bundles
    from conceptcomb.leaderboard.checks.verdicts import checked_file
    from conceptcomb.leaderboard.report.runs import nothing_usable, read_runs

    calibration = calibration_summary(args.calibration) if args.calibration else None
    _start_checks(_named_tasks(args.results))  # while the runs are read (Inspect's import)
    runs = read_runs(args.results)
    _start_checks(task for run in runs for task in run.tasks)  # files named otherwise
    for note in dict.fromkeys(note for run in runs for note in run.notes):
        print(f"note: {note}")
    usable = [run for run in runs if run.tasks]
    if not usable:
        print(f"conceptcomb: error: {nothing_usable(args.results, runs)}", file=sys.stderr)
        return 1
    paths = write_bundles(usable, args.out, calibration)
    for path in paths:
        check = checked_file(path, reuse=False)  # remembered: `export` and `report` reuse it
        state = "valid" if check.valid else "INVALID: " + "; ".join(check.problems)
        print(f"{path}  ({state})  {path.stat().st_size / 1024:.0f} KB")
        for task in check.tasks:
            print(f"  {task.line()}")
    return 0


def _named_tasks(paths: list[Path]) -> set[str]:
    """The tasks of ours that the results' file names name: lm-eval's
    ``samples_<task>_<date>.jsonl``, Inspect's ``<time>_<task-with-dashes>_<id>.eval``."""
    from conceptcomb.benchmarks import known_tasks

    names = set()
    for path in map(Path, paths):
        files = path.rglob("*") if path.is_dir() else [path]
        names |= {"_" + re.sub(r"[-.]", "_", file.name) + "_" for file in files}
    return {task for task in known_tasks() if any(f"_{task}_" in name for name in names)}


def _start_checks(tasks: Iterable[str]) -> None:
    """Set going what the bundles' checks will wait on (`conceptcomb.common.evidence`'s
    `StartsEarly`: CGGC's METEOR JVM, whose paraphrase tables take ~12 s of CPU to load)
    while the runs are read and the bundles built, not once the check has begun. Started
    once per process (a later check reuses it)."""
    from conceptcomb.benchmarks import evidence_adapter, known_tasks

    ours = known_tasks()
    first = {ours[task]: task for task in sorted(set(tasks), reverse=True) if task in ours}
    for benchmark, task in sorted(first.items()):
        checker = evidence_adapter(benchmark)
        if checker is not None and hasattr(checker, "start"):
            checker.start(task)
            _STARTED.append(checker)


_STARTED: list[Any] = []  # the checkers `_start_checks` set going, for `_stop_checks`


def _stop_checks() -> None:
    """End what the checkers started (a JVM still loading its tables would go on for
    seconds after the command ends)."""
    while _STARTED:
        checker = _STARTED.pop()
        if hasattr(checker, "stop"):
            checker.stop()


def run_validate(args: argparse.Namespace) -> int:
    from conceptcomb.leaderboard.checks.validate import check_eee, read_bundle_file
    from conceptcomb.leaderboard.checks.verdicts import checked_file
    from conceptcomb.leaderboard.exports.read_eee import find_inputs, read_exports

    code = 0
    settings = _rescore_settings(args) if args.rescore else None
    if args.rejudge is not None and args.rejudge < 1:
        from conceptcomb.common.errors import ConfigError

        raise ConfigError("--rejudge N: the number of judge questions to ask again, 1 or more.")
    inputs = find_inputs(args.bundles)
    for path, problem in inputs.problems:
        code = 1
        print(f"{path}: INVALID\n  - {problem}")
    for path in inputs.bundles:  # checked again, always; remembered for `export`, `report`
        check = checked_file(path, args.data_dir, reuse=False)
        code |= _print_check(str(path), check)
        if settings is not None and check.valid:
            tasks = read_bundle_file(path)["tasks"]
            code |= not _rescore(tasks, check, settings, args)
        if args.rejudge is not None and check.valid:
            code |= not _rejudge(read_bundle_file(path)["tasks"], check, args)
    exports, loose = read_exports(inputs.aggregates)  # EEE files of `conceptcomb export`
    for problem in loose:
        code = 1
        print(f"INVALID: {problem}")
    for export in exports:
        check = check_eee(export, args.data_dir)
        code |= _print_check(export.label, check)
        if settings is not None and check.valid and export.bundle is not None:
            code |= not _rescore(export.bundle["tasks"], check, settings, args)
        if args.rejudge is not None and check.valid and export.bundle is not None:
            code |= not _rejudge(export.bundle["tasks"], check, args)
    return code


def _print_check(label: str, check: Any) -> int:
    if check.problems:
        print(f"{label}: INVALID")
        for problem in check.problems:
            print(f"  - {problem}")
    else:
        print(f"{label}: valid")
    for task in check.tasks:
        print(f"  {task.line()}")
    return 1 if check.problems else 0


def _export_bundles(args: argparse.Namespace) -> list[tuple[str, dict[str, Any], Any]]:
    """(where, bundle, its check) of every input: bundles read and checked, results made into
    bundles as `submit-bundle` makes them. An INVALID bundle stops the export (ExportError)."""
    from conceptcomb.leaderboard.bundles.bundle import build_bundle
    from conceptcomb.leaderboard.bundles.safe_json import Refused
    from conceptcomb.leaderboard.checks import verdicts
    from conceptcomb.leaderboard.checks.validate import read_bundle_file
    from conceptcomb.leaderboard.exports.eee import ExportError
    from conceptcomb.leaderboard.report.runs import BUNDLE_SUFFIX, read_runs

    found = []
    for path in args.inputs:
        if not path.exists():
            raise ExportError(f"{path}: no such file or folder (give bundles or results)")
    bundles = [p for p in args.inputs if p.is_file() and p.name.endswith(BUNDLE_SUFFIX)]
    for path in bundles:
        try:
            bundle = read_bundle_file(path)
        except (OSError, Refused) as err:
            raise ExportError(f"{path}: not a readable bundle ({err})") from None
        found.append((str(path), bundle))
    results = [p for p in args.inputs if p not in bundles]
    if results:
        for run in read_runs(results):
            found.append((f"{run.model.label} ({run.framework})", build_bundle(run)))
    if not found:
        raise ExportError("no bundle and no results of this package's tasks in the inputs")
    checked = []
    for where, bundle in found:
        check = verdicts.checked(bundle, args.data_dir, reuse=not args.recheck)
        if check.problems:
            raise ExportError(
                f"{where}: INVALID bundle ({check.problems[0]}): see `conceptcomb "
                "validate-bundle`; only a valid bundle is exported"
            )
        checked.append((where, _scrubbed(bundle), check))
    return checked


def _scrubbed(bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle as an export carries it: no private host and no local path, which a bundle
    written before `without_private_hosts` may hold (its judge's old record kept the
    endpoint); its content hash made again where that changed anything."""
    from conceptcomb.leaderboard.bundles.bundle import (
        content_sha256,
        without_local_paths,
        without_private_hosts,
    )

    clean = without_private_hosts(without_local_paths(bundle))
    if clean != bundle:
        clean["content_sha256"] = content_sha256(clean)
    return clean


def run_export(args: argparse.Namespace) -> int:
    from conceptcomb.leaderboard.exports.eee import (
        ExportOptions,
        export_bundle,
        files_of,
        write_files,
    )

    options = ExportOptions(
        model_id=args.model_id,
        organization=args.organization,
        relationship=args.evaluator_relationship,
        deployment_type=args.deployment_type,
        model_availability=args.model_availability,
    ).checked()
    bundles = _export_bundles(args)
    if args.to == "hf":
        from conceptcomb.leaderboard.exports.hf import parse_dataset_ids, write_eval_results

        given = parse_dataset_ids(args.dataset_id or [])
        pairs = [(where, bundle) for where, bundle, _ in bundles]
        for path, count in write_eval_results(pairs, args.out, options, given, args.source_url):
            print(f"{path}  ({count} entries)")
        for where, _, check in bundles:
            if check.remembered:
                print(f"{where}:{remembered_note(check)}")
        print(
            "Send them as a pull request to the model's repository on the Hub (its "
            ".eval_results/ folder), e.g. `hf upload MODEL_REPO "
            f"{args.out / '.eval_results'} .eval_results --create-pr`."
        )
        return 0
    exports = [(where, check, export_bundle(b, options, where)) for where, b, check in bundles]
    for where, check, tasks in exports:
        write_files(files_of(tasks), args.out)
        states = {task.task: task.line() for task in check.tasks}
        print(f"{where}:" + remembered_note(check))
        for task in tasks:
            print(f"  {args.out / task.aggregate.path}")
            print(
                f"    {states.get(task.task, task.task)}; {task.results} results, "
                f"{task.items} items in {task.rows} instance rows"
            )
    print(
        f"Check them with `conceptcomb validate-bundle {args.out}` and EEE's own `every_eval_ever "
        f'validate "{args.out.resolve()}/data/*/*/*/*.json*"`; send them as a pull request to '
        "the Every Eval Ever datastore (evaleval/EEE_datastore on the Hub)."
    )
    return 0


def remembered_note(check: Any) -> str:
    """What `export` adds after a bundle whose verdict was reused ("" for one checked now)."""
    if not check.remembered:
        return ""
    return (
        f" valid (the verdict of its check at {check.remembered}, same content and package; "
        "--recheck checks it again)"
    )


def _rescore_settings(args: argparse.Namespace) -> Any:
    from conceptcomb.common.errors import ConfigError
    from conceptcomb.scorers.cli_options import judge_settings

    settings = judge_settings(args)
    if not settings.enabled:
        raise ConfigError("--rescore asks a judge again: choose one (--judge openai or local).")
    if args.tolerance < 0:
        raise ConfigError("--tolerance must be 0 or more.")
    return settings


def _given_judge(args: argparse.Namespace) -> tuple[Any, bool]:
    """The ``--judge-*`` options as settings, and whether they or their ``CONCEPTCOMB_JUDGE*``
    variables name a judge (else the one the bundle names is asked, with the other options:
    cache, device, retries)."""
    from conceptcomb.scorers.cli_options import judge_settings
    from conceptcomb.scorers.judge_settings import environment_value

    choosing = ("judge", "judge_model", "judge_base_url")
    named = any(getattr(args, o) is not None or environment_value(o) for o in choosing)
    return judge_settings(args), named


def _rejudge(tasks: list[Any], check: Any, args: argparse.Namespace) -> bool:
    """Ask a seeded sample of each judged task's questions again; False when one disagrees."""
    from conceptcomb.leaderboard.checks.rejudge import judged_records, rejudge_task
    from conceptcomb.leaderboard.checks.verify import UNVERIFIED

    states = {task.task: task for task in check.tasks}
    judged = judged_records(tasks)
    if not judged:
        print("  --rejudge: this bundle has no judged task (nothing a judge rated to ask again)")
        return True
    ok = True
    for record in judged:
        state = states.get(str(record["task"]))
        if state is None or state.status == UNVERIFIED or not state.items:
            print(f"  {record['task']}: no per-item evidence: no judge question to ask again")
            continue
        options, named = _given_judge(args)
        result = rejudge_task(record, state.items, args.rejudge, options, named,
                              args.data_dir, args.rejudge_seed)  # fmt: skip
        if result is None:
            print(f"  {record['task']}: its evidence names no judge question to ask again")
            continue
        ok = ok and result.ok
        print(f"  {result.line()}")
        if result.usage:
            print(f"    {result.usage}")
    return ok


def _rescore(tasks: list[Any], check: Any, settings: Any, args: argparse.Namespace) -> bool:
    """Ask the judge again for every task with evidence; False when one differs."""
    from conceptcomb.leaderboard.checks.verify import UNVERIFIED, rescore_lines, rescore_task

    records = {record["task"]: record for record in tasks}
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
    validate.add_argument(
        "bundles",
        nargs="+",
        type=Path,
        help="*.bundle.json files, Every Eval Ever files of `conceptcomb export --to eee` "
        "(an aggregate <uuid>.json with its <uuid>_samples.jsonl beside it), or folders of either",
    )
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
    validate.add_argument(
        "--rejudge",
        type=int,
        metavar="N",
        help="ask a seeded random sample of N of each judged task's distinct judge questions "
        "again (the judge the --judge-* options, or their CONCEPTCOMB_JUDGE* variables, "
        "name; without them, the judge the bundle "
        "names, where it can be reached: the local judge offline) and compare with the "
        "stored ratings: share equal, within one point, mean |difference| with its 95%% "
        "interval, Spearman; exit 1 beyond the tolerance (docs/judge.md)",
    )
    validate.add_argument(
        "--rejudge-seed", type=int, default=0, help="seed of --rejudge's sample (0)"
    )
    from conceptcomb.scorers.cli_options import add_judge_options

    add_judge_options(validate)
    validate.set_defaults(run=run_validate)
    _add_export(commands)
    compare_cli.add_command(commands)
    explore_cli.add_command(commands)
    _add_judge_agree(commands)


def run_agree(args: argparse.Namespace) -> int:
    import json

    from conceptcomb.leaderboard.checks.agreement import agree, lines
    from conceptcomb.scorers.cli_options import prepare_output

    if args.resamples is not None and args.resamples < 10:
        from conceptcomb.common.errors import ConfigError

        raise ConfigError("--resamples: at least 10 bootstrap resamples (1000 by default).")
    output = prepare_output(args.json, "--json")
    results = agree(args.runs[0], args.runs[1], args.data_dir, args.resamples)
    for result in results:
        print("\n".join(lines(result)))
    if output:
        data = {"a": str(args.runs[0]), "b": str(args.runs[1])}
        data["tasks"] = [result.to_json() for result in results]
        output.write_text(json.dumps(data, indent=2) + "\n")
        print(f"figures written to {output}")
    return 0


def _add_judge_agree(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``conceptcomb judge agree``, beside the benchmarks' ``judge`` commands (calibrate)."""
    judge = commands.choices.get("judge") or commands.add_parser("judge", help="judge tools")
    actions = [a for a in judge._actions if isinstance(a, argparse._SubParsersAction)]
    subcommands = actions[0] if actions else judge.add_subparsers(dest="judge_command")
    agree = subcommands.add_parser(
        "agree",
        help="two scorings of the same replies by two judges: how far their ratings and "
        "metrics agree",
        description="Per judged task: the judge questions both scorings rated, paired by "
        "prompt: Spearman's rho, Kendall's tau-b (scipy) and Krippendorff's alpha, ordinal "
        "(the krippendorff package), each with a 95% percentile bootstrap interval (1000 "
        "resamples of the questions, seeded), the shares rated the same and within one "
        "point, and the mean difference A - B with its t interval; per metric, A - B on the "
        "items both hold, paired, with its 95% interval (clustered by the items' unit), as "
        "`conceptcomb compare` computes it.",
    )
    agree.add_argument(
        "runs",
        nargs=2,
        type=Path,
        metavar="RUN",
        help="a *.bundle.json, an `export --to eee` folder, or `conceptcomb score --output` "
        "results (written with --samples-output): the same replies, scored by two judges",
    )
    agree.add_argument("--json", help="write every figure as JSON to this file")
    agree.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (1000)")
    agree.add_argument(
        "--data-dir", help="folder with the benchmarks' pinned files (default: as the tasks)"
    )
    agree.set_defaults(run=run_agree)


def _add_export(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    export = commands.add_parser(
        "export",
        help="leaderboard files from bundles or results: Every Eval Ever (--to eee) or the "
        "Hugging Face Hub's .eval_results (--to hf)",
        description="--to eee: per task, EEE 0.3.0's aggregate and instance files laid out as "
        "its datastore (data/<benchmark>/<developer>/<model>/<uuid>.json and "
        "<uuid>_samples.jsonl), with everything the bundle holds: `validate-bundle` checks "
        "them as it checks the bundle. --to hf: .eval_results/<benchmark>_<framework>_<model>."
        "yaml, one entry per task for its headline metric. Only valid bundles are exported.",
    )
    export.add_argument(
        "inputs", nargs="+", type=Path, help=f"*.bundle.json files, or {RESULTS_HELP}"
    )
    export.add_argument("--to", required=True, choices=["eee", "hf"], help="the format")
    export.add_argument("--out", type=Path, required=True, help="folder to write into")
    export.add_argument(
        "--model-id",
        help="the model as the Hub names it, OWNER/NAME (default: from the run; needed when "
        "the run names a local path)",
    )
    export.add_argument(
        "--organization",
        default="unspecified",
        help="who ran the evaluation (EEE source_organization_name)",
    )
    export.add_argument(
        "--evaluator-relationship",
        default="third_party",
        choices=["first_party", "third_party", "collaborative", "other"],
        help="your relation to the model's developer (EEE; default third_party)",
    )
    export.add_argument(
        "--deployment-type",
        choices=["self_deployed", "externally_managed", "unknown"],
        help="who ran the model (default: from its runner: local weights self_deployed, "
        "API providers externally_managed)",
    )
    export.add_argument(
        "--model-availability",
        choices=["open_weights", "closed_weights", "unknown"],
        help="whether the model's weights are published (default: from its runner)",
    )
    export.add_argument(
        "--dataset-id",
        action="append",
        metavar="BENCHMARK=OWNER/NAME[@REV]",
        help="--to hf: the benchmark's dataset on the Hub, for a benchmark whose eval.yaml "
        "names none (CGGC, McRae) or to name another",
    )
    export.add_argument(
        "--source-url",
        help="--to hf: where the evidence is published (default: the task's Every Eval Ever "
        "record in the EEE datastore)",
    )
    export.add_argument(
        "--data-dir",
        help="folder with the benchmarks' pinned files, to check the bundles as "
        "validate-bundle --data-dir does",
    )
    build.add_recheck(export)
    export.set_defaults(run=run_export)

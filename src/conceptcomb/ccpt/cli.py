"""CCPT's own commands: ``conceptcomb plan`` (judge questions, tokens, cost before a run)
and ``conceptcomb judge calibrate`` (a judge against CCPT's human relevance ratings)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conceptcomb.scorers.cli_options import (
    add_judge_options,
    judge_failure_warning,
    judge_settings,
    prepare_output,
)


def run_plan(args: argparse.Namespace) -> int:
    from conceptcomb.ccpt.judge_tools.plan import plan_tasks

    report = plan_tasks(
        args.tasks,
        judge_settings(args),
        predictions=args.predictions or (),
        limit=args.limit,
        data_dir=args.data_dir,
        oracle_n=args.oracle_n,
    )
    print(report.table())
    if args.output:
        Path(args.output).write_text(
            json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8"
        )
        print(f"plan written to {args.output}")
    if args.questions_output:
        report.write_questions(args.questions_output)
        print(f"questions still to ask written to {args.questions_output}")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from conceptcomb.ccpt.judge_tools.calibration import DEFAULT_PAIRS, calibrate

    output = prepare_output(args.output, "--output")
    pairs = DEFAULT_PAIRS if args.n is None else args.n
    report = calibrate(judge_settings(args), pairs, args.seed, args.data_dir)
    warning = judge_failure_warning(report.usage)
    print(report.table())
    print(f"[conceptcomb] {report.usage.summary()}")
    if warning:
        print(warning, file=sys.stderr)
    if output:
        output.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"results written to {output}")
    return 0


_PLAN_DESCRIPTION = (
    "Prints, per task, the items, the distinct judge questions, how many the "
    "judge cache already answers, the judge requests left, their tokens (tiktoken "
    "o200k_base, GPT-4o's encoding; other judges' tokenizers differ a little) and, for "
    "OpenAI models with a known price, the cost. Nothing is called. The judge rates what "
    "the model replies (the property it names), so: with --predictions (saved replies) the "
    "questions are exact, the ones `conceptcomb score` or the judged run will ask; "
    "without, the plan gives the questions known before any reply, an upper bound (three "
    "per reply) and how many distinct questions the dataset's own answers would raise. "
    "Use the same judge options as the run (judge model, endpoint, cache): they decide "
    "what the cache holds. With Inspect's --model-role grader=MODEL the judge is that "
    "model, whose cache entries this plan cannot see."
)


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    plan = commands.add_parser(
        "plan",
        help="count the judge questions, tokens and cost of a run, without calling anything",
        description=_PLAN_DESCRIPTION,
    )
    plan.add_argument(
        "tasks",
        nargs="+",
        help="CCPT task names or the group: ccpt, ccpt_pi_emergent ccpt_tp, ...",
    )
    plan.add_argument(
        "--predictions",
        type=Path,
        action="append",
        help="saved replies: an lm-eval samples_<task>_*.jsonl, an Inspect log, a JSONL of "
        '{"doc": ..., "response": ...} lines (one task only), or a folder searched for lm-eval '
        "samples files and Inspect .eval logs of the tasks (the newest per task); repeatable. "
        "Tasks without saved replies are estimated from their items.",
    )
    plan.add_argument(
        "--limit",
        type=int,
        help="first N items of each task planned from its items, as lm_eval --limit (saved "
        "replies are planned as they are)",
    )
    plan.add_argument(
        "--data-dir", default=None, help="the CCPT files (else as the tasks find them)"
    )
    plan.add_argument(
        "--oracle-n", type=int, default=5, help="replies per item of *_oracle tasks (5)"
    )
    plan.add_argument("--output", help="write the plan as JSON")
    plan.add_argument(
        "--questions-output",
        type=Path,
        help="write the exact questions still to ask (from saved replies) as JSONL",
    )
    add_judge_options(plan)
    plan.set_defaults(run=run_plan)

    judge = commands.add_parser("judge", help="judge tools")
    judge_commands = judge.add_subparsers(dest="judge_command", required=True)
    calibrate = judge_commands.add_parser(
        "calibrate", help="correlate a judge with CCPT's human relevance ratings"
    )
    calibrate.add_argument(
        "--n", type=int, default=None, help="number of pairs (default: 300, as the paper's check)"
    )
    calibrate.add_argument("--seed", type=int, default=0, help="seed of the sampled pairs (0)")
    calibrate.add_argument(
        "--data-dir",
        default=None,
        help="the CCPT files (default: CONCEPTCOMB_DATA_DIR or the cache)",
    )
    calibrate.add_argument("--output", help="write the correlations as JSON")
    add_judge_options(calibrate)
    calibrate.set_defaults(run=run_calibrate)

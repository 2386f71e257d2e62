"""The ``conceptcomb`` command: a demo run, rescoring, judge calibration, data, paths.

conceptcomb demo                  # CCPT on the packaged SmolLM2 with the local judge
conceptcomb score TASK --predictions PATH [judge options] [--output results.json]
conceptcomb plan TASKS [--predictions PATH] [judge options]  # judge questions, tokens, cost
conceptcomb judge calibrate [judge options] [--n 300] [--seed 0]
conceptcomb seeds RESULTS...      # mean ± SEM over seeded runs (Table 3)
conceptcomb data fetch ccpt       # download and check the pinned CCPT files
conceptcomb data verify ccpt --data-dir DIR
conceptcomb data fetch abspyramid # download the AbsPyramid hub files at the pinned revision
conceptcomb data fetch mcrae; conceptcomb data fetch esslli08-nouns
conceptcomb tasks-path            # the folder to pass to lm_eval --include_path
conceptcomb smollm2               # lm_eval / inspect options for the packaged SmolLM2
conceptcomb cggc build --out DIR  # build CGGC (also: cggc stats, cggc report)
conceptcomb report RESULTS... --out DIR          # leaderboard tables, plots, HTML pages
conceptcomb submit-bundle RESULTS... --out DIR   # one leaderboard bundle per model run
conceptcomb validate-bundle FILE... [--rescore]  # checksums, secrets, per-item evidence
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

from conceptcomb import demo, smollm2
from conceptcomb.abspyramid.data import ABSPYRAMID_DATASET
from conceptcomb.ccpt.data import CCPT_DATASET
from conceptcomb.ccpt.tasks import all_specs, method_specs
from conceptcomb.cggc import cli as cggc_cli
from conceptcomb.cggc.sources import CN100K_DATASET, COMMONGEN_DATASET
from conceptcomb.common.datafiles import PinnedDataset, resolve_files
from conceptcomb.common.errors import ConceptcombError, ConfigError, JudgeError
from conceptcomb.common.hubfiles import HubDataset, file_digests, resolve_hub_files
from conceptcomb.common.results import ScoreReport
from conceptcomb.mcrae.data import ESSLLI_NOUNS_DATASET, MCRAE_DATASET
from conceptcomb.report import cli as report_cli
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import packaged_smollm2_gguf
from conceptcomb.scorers.rating import JudgeUsage

DATASETS: dict[str, PinnedDataset] = {
    CCPT_DATASET.key: CCPT_DATASET,
    "mcrae": MCRAE_DATASET,
    # Same data folder (mcrae/) as the norms, another upstream repository.
    "esslli08-nouns": ESSLLI_NOUNS_DATASET,
    # what CGGC is built from (`conceptcomb cggc build` fetches them when not named)
    "cggc-commongen": COMMONGEN_DATASET,
    "cggc-conceptnet": CN100K_DATASET,
}
# Datasets published only on the Hugging Face hub: revision pinned, no sha256 to check.
HUB_DATASETS: dict[str, HubDataset] = {ABSPYRAMID_DATASET.key: ABSPYRAMID_DATASET}
PACKAGE_DIR = Path(__file__).resolve().parent


def tasks_path() -> Path:
    """Folder holding every YAML task of this package (for ``lm_eval --include_path``)."""
    return PACKAGE_DIR


def lm_eval_has_our_tasks() -> bool:
    """True after a regular (non-editable) install, which copies our YAML into lm-eval.

    An editable install leaves a copy from install time too, which goes stale as the
    checkout changes: there (the package is not beside lm-eval) the checkout's YAML is used.
    """
    import lm_eval  # here, not at the top: commands that never run lm-eval start faster

    lm_eval_dir = Path(lm_eval.__file__).resolve().parent
    installed_beside = PACKAGE_DIR.parent == lm_eval_dir.parent
    return installed_beside and (lm_eval_dir / "tasks" / "conceptcomb").is_dir()


def include_path_args() -> list[str]:
    """``--include_path`` for an editable install (a regular one puts our YAML in lm-eval)."""
    return [] if lm_eval_has_our_tasks() else ["--include_path", str(tasks_path())]


def run_smollm2(args: argparse.Namespace) -> int:
    inspect_args = smollm2.inspect_model_args(args.tokenizer_dir)
    lm_eval_args = smollm2.lm_eval_hf_model_args()
    print("# lm-eval, offline (CCPT also needs a judge choice in --metadata, see below):")
    print(shlex.join(["lm_eval", *lm_eval_args, "--apply_chat_template", "--tasks", "TASK"]))
    print("# Inspect, offline (HF_HUB_OFFLINE=1: else the hf provider looks the name up):")
    print("HF_HUB_OFFLINE=1 " + shlex.join(["inspect", "eval", "conceptcomb/TASK", *inspect_args]))
    gguf = packaged_smollm2_gguf()
    server = ["python", "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias",
              smollm2.SERVED_NAME, "--host", "127.0.0.1", "--port", "8000"]  # fmt: skip
    print("# Faster on a CPU (what `conceptcomb demo` does): llama.cpp's OpenAI-compatible server")
    print(shlex.join(server))
    model_args = (
        f"model={smollm2.SERVED_NAME},base_url=http://127.0.0.1:8000/v1/chat/completions,"
        "tokenized_requests=False,tokenizer_backend=None"
    )
    print(shlex.join(["lm_eval", "--model", "local-chat-completions", "--model_args",
                      model_args, "--apply_chat_template", "--tasks", "TASK"]))  # fmt: skip
    print(
        "# Judged tasks (CCPT, cggc_*_verified) need a judge: --metadata "
        '\'{"judge": "local"}\' (lm-eval) or -T judge=local (Inspect) for the offline one, or '
        "judge_base_url/judge_model for any OpenAI-compatible server."
    )
    return 0


def run_hub_data(args: argparse.Namespace) -> int:
    dataset = HUB_DATASETS[args.benchmark]
    files = resolve_hub_files(dataset, dataset.files, args.data_dir)
    for name, digest in zip(files, file_digests(files.values()).values(), strict=True):
        print(f"ok  {name}  {files[name]}  sha256={digest}")
    print(
        f"All {len(files)} files of {dataset.describe()} are present. No checksums are pinned "
        "for this dataset: the sha256 above are for your records."
    )
    return 0


def run_data(args: argparse.Namespace) -> int:
    if args.benchmark in HUB_DATASETS:
        return run_hub_data(args)
    dataset = DATASETS[args.benchmark]
    names = [pinned.name for pinned in dataset.files]
    files = resolve_files(dataset, names, args.data_dir)
    for name, path in files.items():
        print(f"ok  {name}  {path}")
    print(f"All {len(files)} files of {dataset.describe()} are present and match their sha256.")
    return 0


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """``--judge-*`` flags; unset ones fall back to CONCEPTCOMB_JUDGE* and the defaults."""
    group = parser.add_argument_group("judge (default: the paper's gpt-4o at OpenAI)")
    group.add_argument("--judge", choices=["openai", "local", "off"])
    group.add_argument("--judge-model", help="model name, or a local model path for --judge local")
    group.add_argument(
        "--judge-base-url",
        help="OpenAI-compatible endpoint, e.g. a vLLM server; several, comma-separated, share "
        "the load (replicas serving the same model)",
    )
    group.add_argument("--judge-api-key-env", help="NAME of the variable holding the API key")
    group.add_argument("--judge-concurrency", type=int, help="requests in flight per endpoint (16)")
    group.add_argument("--judge-max-retries", type=int, help="retries of 429/5xx/timeouts (5)")
    group.add_argument("--judge-format-retries", type=int, help="re-asks of malformed answers (3)")
    group.add_argument("--judge-timeout", type=float, help="seconds per request (60)")
    group.add_argument("--judge-cache", help="cache file, or 'off'")
    group.add_argument(
        "--judge-response-format",
        choices=["text", "json_schema", "json_object"],
        help="text (the paper's); json_schema (OpenAI, vLLM) or json_object (llama.cpp) "
        "constrain the answer to the JSON the prompt asks for",
    )


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    options = {name: getattr(args, name, None) for name in JudgeSettings.option_names()}
    return JudgeSettings.resolve(options)


def npc_modifier(args: argparse.Namespace) -> str:
    """``--npc-modifier`` (else $CONCEPTCOMB_NPC_MODIFIER, else lemma); NPC tasks only."""
    from conceptcomb.ccpt.modifiers import resolve_npc_modifier

    if args.npc_modifier and not args.task.startswith("ccpt_npc_"):
        raise ConceptcombError(
            f"--npc-modifier applies to the noun phrase completion tasks (ccpt_npc_*), "
            f"not {args.task}: drop it."
        )
    return resolve_npc_modifier(args.npc_modifier)


def rescore(args: argparse.Namespace) -> ScoreReport:
    """Score saved replies with the rescoring function of the task's benchmark."""
    predictions = Path(args.predictions)
    if args.task.startswith("ccpt_") and args.task.endswith("_oracle"):
        from conceptcomb.ccpt.oracle_rescore import rescore_oracle

        return rescore_oracle(
            args.task, predictions, judge_settings(args), args.samples_output, npc_modifier(args)
        )
    if args.task.startswith("ccpt_"):
        from conceptcomb.ccpt.rescore import rescore as rescore_ccpt

        return rescore_ccpt(
            args.task, predictions, judge_settings(args), args.samples_output, npc_modifier(args)
        )
    if args.task.startswith("mcrae_"):
        from conceptcomb.mcrae.rescore import score_report

        return score_report(args.task, predictions)
    ccpt = [spec.name for spec in [*all_specs(), *method_specs()]]
    known = ", ".join([*ccpt, "mcrae_esslli44", "mcrae_all"])
    raise ConceptcombError(f"{args.task}: `conceptcomb score` knows these tasks: {known}.")


def prepare_output(value: str | Path | None, option: str) -> Path | None:
    """Create an output file's folder and check that it can be written, before any
    expensive work (judging), so that no finished run is lost to a typo in a path."""
    if not value:
        return None
    path = Path(value)
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder: name a file in it, e.g. {path}/out.json.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.open("a", encoding="utf-8").close()
        else:
            tempfile.TemporaryFile(dir=path.parent).close()
    except OSError as err:
        raise ConfigError(
            f"{option} {path} cannot be written ({err.strerror or err}): choose another path."
        ) from err
    return path


def judge_failure_warning(usage: JudgeUsage | None) -> str | None:
    """`JudgeError` when every judge question failed (nothing is printed or written); the
    warning line to print when some did; None when none did."""
    if usage is None:
        return None
    if usage.all_failed:
        raise JudgeError(
            f"every one of the {usage.questions} judge questions failed, so no judged metric "
            f"could be computed and no results were written; last error: {usage.last_error}"
        )
    warning = usage.failure_warning()
    return f"conceptcomb: {warning}" if warning else None


def run_score(args: argparse.Namespace) -> int:
    output = prepare_output(args.output, "--output")
    prepare_output(args.samples_output, "--samples-output")
    report = rescore(args)
    report.model_name = args.model_name
    if args.samples_output is not None and args.task.startswith("ccpt_"):
        report.samples_output = str(args.samples_output)
    usage = JudgeUsage(**report.usage) if report.usage else None
    warning = judge_failure_warning(usage)
    print(report.table())
    if usage is not None:
        print(f"[conceptcomb] {usage.summary()}")
    for note in report.notes:
        print(f"note: {note}")
    if warning:
        print(warning, file=sys.stderr)
    if output:
        report.write(output)
        print(f"results written to {output}")
    return 0


def run_plan(args: argparse.Namespace) -> int:
    from conceptcomb.ccpt.plan import plan_tasks

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
        Path(args.output).write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"plan written to {args.output}")
    if args.questions_output:
        report.write_questions(args.questions_output)
        print(f"questions still to ask written to {args.questions_output}")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from conceptcomb.ccpt.calibration import calibrate

    output = prepare_output(args.output, "--output")
    report = calibrate(judge_settings(args), args.n, args.seed, args.data_dir)
    warning = judge_failure_warning(report.usage)
    print(report.table())
    print(f"[conceptcomb] {report.usage.summary()}")
    if warning:
        print(warning, file=sys.stderr)
    if output:
        output.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"results written to {output}")
    return 0


def run_seeds(args: argparse.Namespace) -> int:
    from conceptcomb.common.seeds import seed_report

    output = prepare_output(args.output, "--output")
    report = seed_report(args.results)
    print(report.table(args.digits))
    for note in report.notes:
        print(f"note: {note}")
    if output:
        output.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        print(f"results written to {output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conceptcomb", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    demo_parser = commands.add_parser(
        "demo",
        help="real CGGC (and CCPT) items end to end on the packaged SmolLM2, offline",
        description=demo.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_arguments(demo_parser)
    demo_parser.set_defaults(run=demo.run)

    smollm2_parser = commands.add_parser(
        "smollm2",
        help="print the lm_eval and inspect model options of the packaged SmolLM2 (offline)",
        description="Writes the packaged SmolLM2-135M-Instruct's tokenizer to a folder once "
        "(Inspect's hf provider loads it by path) and prints the model options of lm_eval and "
        "inspect eval for that model, to paste before --tasks / after the task.",
    )
    smollm2_parser.add_argument(
        "--tokenizer-dir",
        type=Path,
        default=None,
        help="where to write the tokenizer (~/.cache/conceptcomb/smollm2-tokenizer)",
    )
    smollm2_parser.set_defaults(run=run_smollm2)

    score = commands.add_parser("score", help="score saved replies without rerunning the model")
    score.add_argument(
        "task",
        help="task name, e.g. ccpt_pi_emergent, ccpt_pi_emergent_oracle (best of the N "
        "replies per item) or mcrae_esslli44",
    )
    score.add_argument(
        "--predictions",
        required=True,
        help="lm-eval samples_<task>_*.jsonl, an Inspect log, or a JSONL of "
        '{"doc": {...}, "response": "..."} lines (CCPT; "responses": [...] for *_oracle); '
        "for McRae also the ESSLLI 2008 'concept property score' format",
    )
    score.add_argument("--output", help="write the metrics (and judge usage) as JSON")
    score.add_argument(
        "--samples-output",
        type=Path,
        help="write per-item records as JSONL (reply, parsed answer, judge questions and "
        "ratings, scores): `submit-bundle` puts them in the bundle as its evidence",
    )
    score.add_argument(
        "--model-name",
        help="the model that wrote the replies, as reports and bundles name it (default: "
        "the model of the lm-eval results or Inspect log the replies come from)",
    )
    score.add_argument(
        "--npc-modifier",
        choices=["lemma", "surface"],
        help="ccpt_npc_*: judge the modifier's spaCy lemma as the paper (lemma, default) or "
        "the modifier as written (surface); else $CONCEPTCOMB_NPC_MODIFIER",
    )
    add_judge_options(score)
    score.set_defaults(run=run_score)

    plan = commands.add_parser(
        "plan",
        help="count the judge questions, tokens and cost of a run, without calling anything",
        description="Prints, per task, the items, the distinct judge questions, how many the "
        "judge cache already answers, the judge requests left, their tokens (tiktoken "
        "o200k_base, GPT-4o's encoding; other judges' tokenizers differ a little) and, for "
        "OpenAI models with a known price, the cost. Nothing is called. The judge rates what "
        "the model replies (the property it names), so: with --predictions (saved replies) the "
        "questions are exact, the ones `conceptcomb score` or the judged run will ask; "
        "without, the plan gives the questions known before any reply, an upper bound (three "
        "per reply) and how many distinct questions the dataset's own answers would raise. "
        "Use the same judge options as the run (judge model, endpoint, cache): they decide "
        "what the cache holds. With Inspect's --model-role grader=MODEL the judge is that "
        "model, whose cache entries this plan cannot see.",
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
    calibrate.add_argument("--n", type=int, default=300, help="number of pairs (300)")
    calibrate.add_argument("--seed", type=int, default=0)
    calibrate.add_argument("--data-dir", default=None)
    calibrate.add_argument("--output", help="write the correlations as JSON")
    add_judge_options(calibrate)
    calibrate.set_defaults(run=run_calibrate)

    seeds = commands.add_parser(
        "seeds",
        help="mean ± standard error of the mean over seeded runs (Table 3)",
        description="Per task and metric, the mean over runs and its standard error (sample "
        "SD / sqrt(n)). Sample each run with its own seed, e.g. lm_eval ... --gen_kwargs "
        "do_sample=true,temperature=0.7,top_p=0.95 --seed N, or inspect eval ... "
        "--temperature 0.7 --top-p 0.95 --seed N (N = 0, 1, 2 as the CCPT paper).",
    )
    seeds.add_argument(
        "results",
        nargs="+",
        type=Path,
        help="one file per run: lm-eval results_*.json (or folders holding them), Inspect "
        "logs, `conceptcomb score --output` files",
    )
    seeds.add_argument("--output", help="write means, SEMs and the values as JSON")
    seeds.add_argument("--digits", type=int, default=1, help="decimals shown (1, as Table 3)")
    seeds.set_defaults(run=run_seeds)

    data = commands.add_parser("data", help="download or check benchmark files")
    data.add_argument("action", choices=["fetch", "verify"])
    data.add_argument("benchmark", choices=sorted([*DATASETS, *HUB_DATASETS]))
    data.add_argument("--data-dir", default=None, help="check this folder instead of the cache")
    data.set_defaults(run=run_data)

    path = commands.add_parser("tasks-path", help="print the folder for lm_eval --include_path")
    path.set_defaults(run=lambda _: print(tasks_path()) or 0)

    cggc_cli.add_commands(commands)
    report_cli.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ConceptcombError as err:
        print(f"conceptcomb: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The ``conceptcomb`` command: a demo run, rescoring, judge calibration, data, paths.

conceptcomb demo                  # CCPT on the packaged SmolLM2 with the local judge
conceptcomb score TASK --predictions PATH [judge options] [--output results.json]
conceptcomb plan TASKS [--predictions PATH] [judge options]  # judge questions, tokens, cost
conceptcomb judge calibrate [judge options] [--n 300] [--seed 0]
conceptcomb judge agree RUN RUN   # two judges' scorings of the same replies: how far apart
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
conceptcomb validate-bundle FILE --rejudge N     # its judge asked N of its questions again
conceptcomb compare RUN RUN [RUN...]             # A - B on the same items, 95% CI, p, MDD
conceptcomb explore RUN... --out DIR             # the items of every run, in one offline page
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

import conceptcomb
from conceptcomb import demo, smollm2
from conceptcomb.benchmarks import benchmarks, get, known_tasks
from conceptcomb.common.datafiles import PinnedDataset, resolve_files
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.hubfiles import HubDataset, file_digests, resolve_hub_files
from conceptcomb.common.lm_eval_paths import include_path_args as include_path_args  # re-export
from conceptcomb.common.lm_eval_paths import lm_eval_has_our_tasks as lm_eval_has_our_tasks
from conceptcomb.common.lm_eval_paths import tasks_path
from conceptcomb.common.results import ScoreReport
from conceptcomb.leaderboard import cli as leaderboard_cli
from conceptcomb.scorers.cli_options import (
    add_judge_options,
    judge_failure_warning,
    judge_settings,
    prepare_output,
)


def datasets() -> dict[str, PinnedDataset | HubDataset]:
    """``conceptcomb data fetch KEY``: every benchmark's pinned sources."""
    return {key: dataset for b in benchmarks() for key, dataset in b.datasets().items()}


def run_smollm2(args: argparse.Namespace) -> int:
    if args.args == "lm_eval":  # for $(conceptcomb smollm2 --args lm_eval) in a command line
        print(shlex.join(smollm2.lm_eval_hf_model_args(args.model_dir)))
        return 0
    inspect_args = smollm2.inspect_model_args(args.model_dir)
    if args.args == "inspect":
        print(shlex.join(inspect_args))
        return 0
    lm_eval_args = smollm2.lm_eval_hf_model_args(args.model_dir)
    print("# lm-eval, offline (CCPT also needs a judge choice in --metadata, see below):")
    print(shlex.join(["lm_eval", *lm_eval_args, "--apply_chat_template", "--tasks", "TASK"]))
    print("# Inspect, offline (HF_HUB_OFFLINE=1: else the hf provider looks the name up):")
    print("HF_HUB_OFFLINE=1 " + shlex.join(["inspect", "eval", "conceptcomb/TASK", *inspect_args]))
    from conceptcomb.scorers.local_judge import packaged_smollm2_gguf

    gguf = packaged_smollm2_gguf()
    server = ["python", "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias",
              smollm2.SERVED_NAME, "--host", "127.0.0.1", "--port", "8000"]  # fmt: skip
    print("# With the llama extra (`conceptcomb demo --engine llama-cpp`): llama.cpp's server")
    print(shlex.join(server))
    model_args = (
        f"model={smollm2.SERVED_NAME},base_url=http://127.0.0.1:8000/v1/chat/completions,"
        "tokenized_requests=False,tokenizer_backend=None"
    )
    print(shlex.join(["lm_eval", "--model", "local-chat-completions", "--model_args",
                      model_args, "--apply_chat_template", "--tasks", "TASK"]))  # fmt: skip
    folder = smollm2.hf_folder(args.model_dir)
    local = json.dumps({"judge": "local", "judge_model": str(folder)})
    print(
        "# Judged tasks (CCPT, cggc_*_verified) need a judge: the offline one on the same "
        f"folder is --metadata {shlex.quote(local)} (lm-eval) or -T judge=local "
        f"-T judge_model={shlex.quote(str(folder))} (Inspect); or judge_base_url/judge_model "
        "for any OpenAI-compatible server."
    )
    print(
        f"# CCPT: SmolLM2 writes up to 1,024 tokens on most items (10 items took over 10 "
        f"minutes on a CPU): --gen_kwargs max_gen_toks={CCPT_TOKENS} (Inspect: --max-tokens "
        f"{CCPT_TOKENS}) ends each reply there. 3 items, judged offline (drop --limit for all):"
    )
    print(shlex.join(ccpt_command(lm_eval_args, local)))
    return 0


CCPT_TOKENS = 128  # SmolLM2's CCPT replies: long enough for the answer's dictionary


def ccpt_command(lm_eval_args: list[str], metadata: str) -> list[str]:
    """`conceptcomb smollm2`'s CCPT run of the packaged model: 3 items, the reply capped."""
    return ["lm_eval", *lm_eval_args, "--apply_chat_template", "--tasks", "ccpt_pi_emergent",
            "--limit", "3", "--gen_kwargs", f"max_gen_toks={CCPT_TOKENS}",
            "--metadata", metadata, *include_path_args()]  # fmt: skip


def run_hub_data(dataset: HubDataset, args: argparse.Namespace) -> int:
    files = resolve_hub_files(dataset, dataset.files, args.data_dir)
    for name, digest in zip(files, file_digests(files.values()).values(), strict=True):
        print(f"ok  {name}  {files[name]}  sha256={digest}")
    if dataset.fully_pinned:
        print(f"All {len(files)} files of {dataset.describe()} are present and match their sha256.")
    else:
        print(
            f"All {len(files)} files of {dataset.describe()} are present. This dataset is not "
            "pinned to a full commit and sha256 yet (scripts/pin_hub_dataset.py): the sha256 "
            "above are for your records."
        )
    return 0


def data_choices() -> dict[str, list[str]]:
    """``conceptcomb data ACTION NAME``: each dataset by its key, and each benchmark with
    several datasets by the benchmark's key (``cggc``: both sources of its build)."""
    choices = {key: [key] for key in datasets()}
    for benchmark in benchmarks():
        keys = list(benchmark.datasets())
        if len(keys) > 1 and benchmark.key not in choices:
            choices[benchmark.key] = keys
    return dict(sorted(choices.items()))


def run_data(args: argparse.Namespace) -> int:
    for key in data_choices()[args.benchmark]:
        _run_dataset(datasets()[key], args)
    if args.benchmark == "cggc":
        from conceptcomb.cggc.data import describe_dataset

        print(f"The CGGC tasks read {describe_dataset(None)}.")
    return 0


def _run_dataset(dataset: PinnedDataset | HubDataset, args: argparse.Namespace) -> None:
    if isinstance(dataset, HubDataset):
        run_hub_data(dataset, args)
        return
    names = [pinned.name for pinned in dataset.files]
    files = resolve_files(dataset, names, args.data_dir)
    for name, path in files.items():
        print(f"ok  {name}  {path}")
    print(f"All {len(files)} files of {dataset.describe()} are present and match their sha256.")


def rescore(args: argparse.Namespace) -> ScoreReport:
    """Score saved replies with the rescoring function of the task's benchmark."""
    key = known_tasks().get(args.task)
    benchmark = get(key) if key else None
    if benchmark is None or benchmark.rescore is None:
        known = [t for b in benchmarks() if b.rescore for t in b.task_names()]
        raise ConceptcombError(
            f"{args.task}: `conceptcomb score` knows these tasks: {', '.join(known)}."
        )
    options = {"npc_modifier": args.npc_modifier}
    settings = judge_settings(args)
    predictions = _replies_of_results(Path(args.predictions), args)
    if not _stored_run(predictions):
        return benchmark.rescore(args.task, predictions, settings, args.samples_output, options)
    from conceptcomb.leaderboard.checks.replies import stored_replies

    # A bundle or an EEE export: its stored replies, with the options the run scored with
    # (unless given) and the model it names, re-scored by this judge.
    stored = stored_replies(predictions, args.task)
    args.model_name = args.model_name or stored.model
    if options["npc_modifier"] is None and args.task.startswith("ccpt_npc_"):
        options["npc_modifier"] = stored.options.get("npc_modifier")
    with tempfile.TemporaryDirectory(prefix="conceptcomb-score-") as folder:
        replies = stored.write(Path(folder) / f"{args.task}.jsonl")
        report = benchmark.rescore(args.task, replies, settings, args.samples_output, options)
    report.predictions, report.source_format = str(predictions), "bundle"
    return report


def _replies_of_results(path: Path, args: argparse.Namespace) -> Path:
    """The replies behind a results file given as ``--predictions`` (what `compare` names as
    a run): an lm-eval ``results_*.json``'s samples file of the task, a ``conceptcomb score
    --output`` file's ``--samples-output`` (and the model it names); any other path as it is."""
    from conceptcomb.common.evidence import lm_eval_samples_path

    if path.suffix != ".json" or not path.is_file() or path.name.endswith(".bundle.json"):
        return path
    if path.name.startswith("results_"):
        return lm_eval_samples_path(path, args.task) or path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return path
    if not isinstance(data, dict) or "predictions_format" not in data:
        return path
    samples = Path(str(data.get("samples_output") or ""))
    samples = samples if samples.is_file() else path.parent / samples.name
    if not data.get("samples_output") or not samples.is_file():
        raise ConceptcombError(
            f"{path}: `conceptcomb score` ran without --samples-output (or the file moved): "
            "its replies are not kept; give them with --predictions."
        )
    args.model_name = args.model_name or data.get("model_name")
    return samples


def _stored_run(path: Path) -> bool:
    """A bundle or an EEE export (the leaderboard's readers are imported only for a path
    that may be one: a JSONL of replies starts scoring without them)."""
    if not path.exists() or not (
        path.is_dir() or path.suffix == ".json" or path.name.endswith("_samples.jsonl")
    ):
        return False
    from conceptcomb.leaderboard.checks.replies import is_stored_run

    return is_stored_run(path)


def run_score(args: argparse.Namespace) -> int:
    output = prepare_output(args.output, "--output")
    prepare_output(args.samples_output, "--samples-output")
    report = rescore(args)
    report.model_name = args.model_name
    from conceptcomb.scorers.rating import JudgeUsage  # aiohttp: only where a judge may run

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


def table_differences(tables: list, data_dir: str | None = None) -> list[str]:
    """`conceptcomb.leaderboard.report.variants.text_report` (imported when called)."""
    from conceptcomb.leaderboard.report.variants import text_report

    return text_report(tables, data_dir)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conceptcomb", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--version",
        action="version",
        version=f"conceptcomb {conceptcomb.__version__}",
        help="print the version and exit",
    )
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
        description="Converts the packaged SmolLM2-135M-Instruct GGUF once into a transformers "
        "folder (as the demo does; a second to load, where the GGUF takes ~20 s every time) "
        "and prints the model options of lm_eval and inspect eval for that folder, to paste "
        "before --tasks / after the task.",
    )
    smollm2_parser.add_argument(
        "--model-dir",
        type=Path,
        default=None,
        help="the converted folder (~/.cache/conceptcomb/smollm2-135m-instruct-hf)",
    )
    smollm2_parser.add_argument(
        "--args",
        choices=("lm_eval", "inspect"),
        default=None,
        help="print only that framework's model options, for $(conceptcomb smollm2 --args ...)",
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
        help="lm-eval samples_<task>_*.jsonl, an Inspect log, a JSONL of "
        '{"doc": {...}, "response": "..."} lines (CCPT; "responses": [...] for *_oracle); '
        "for McRae also the ESSLLI 2008 'concept property score' format; or a *.bundle.json, "
        "an `export --to eee` folder, an lm-eval results_*.json or a `conceptcomb score "
        "--output` file: the replies it stores (or its samples beside it), re-scored with "
        "this judge",
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

    data = commands.add_parser(
        "data",
        help="download or check benchmark files",
        description="Finds each pinned file of the dataset (in --data-dir, else "
        "CONCEPTCOMB_DATA_DIR, else the cache, else downloaded into the cache) and checks its "
        "sha256; a file that differs is refused with the file's name.",
    )
    data.add_argument(
        "action",
        choices=["fetch", "verify"],
        help="fetch or verify: the same work, named as you mean it (with --data-dir only "
        "that folder is checked, nothing is downloaded)",
    )
    data.add_argument(
        "benchmark",
        choices=list(data_choices()),
        metavar="DATASET",
        help="ccpt, mcrae, esslli08-nouns (the McRae ESSLLI 2008 noun list), abspyramid; "
        "cggc: CGGC's sources, cggc-commongen (CommonGen v1.1) and cggc-conceptnet (CN-100K), "
        "which `conceptcomb cggc build` reads (the built dataset ships with the package)",
    )
    data.add_argument("--data-dir", default=None, help="check this folder instead of the cache")
    data.set_defaults(run=run_data)

    path = commands.add_parser("tasks-path", help="print the folder for lm_eval --include_path")
    path.set_defaults(run=lambda _: print(tasks_path()) or 0)

    for benchmark in benchmarks():
        if benchmark.commands is not None:
            benchmark.commands(commands)
    # A benchmark's report command prints its tables' paired differences with the
    # leaderboard's statistics, which its layer cannot import: handed in here.
    parser.set_defaults(table_differences=table_differences)
    leaderboard_cli.add_commands(commands)
    describe_subcommands(parser)
    return parser


def describe_subcommands(parser: argparse.ArgumentParser) -> None:
    """A subcommand's ``--help`` opens with its help line where it has no longer description."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = str(helps[name]).rstrip(".") + "."
                describe_subcommands(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ConceptcombError as err:
        print(f"conceptcomb: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

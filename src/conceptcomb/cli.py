"""The ``conceptcomb`` command: a demo run, data management, paths for lm-eval.

conceptcomb demo                  # CCPT on the packaged SmolLM2 with the local judge
conceptcomb data fetch ccpt       # download and check the pinned CCPT files
conceptcomb data verify ccpt --data-dir DIR
conceptcomb tasks-path            # the folder to pass to lm_eval --include_path
conceptcomb cggc build --out DIR  # build CGGC (also: cggc stats, cggc report)
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

import lm_eval

from conceptcomb.ccpt.data import CCPT_DATASET
from conceptcomb.ccpt.tasks import all_specs
from conceptcomb.cggc import cli as cggc_cli
from conceptcomb.cggc.sources import CN100K_DATASET, COMMONGEN_DATASET
from conceptcomb.common.datafiles import PinnedDataset, resolve_files
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.scorers.judges import packaged_smollm2_gguf

DATASETS: dict[str, PinnedDataset] = {
    CCPT_DATASET.key: CCPT_DATASET,
    # what CGGC is built from (`conceptcomb cggc build` fetches them when not named)
    "cggc-commongen": COMMONGEN_DATASET,
    "cggc-conceptnet": CN100K_DATASET,
}
PACKAGE_DIR = Path(__file__).resolve().parent


def tasks_path() -> Path:
    """Folder holding every YAML task of this package (for ``lm_eval --include_path``)."""
    return PACKAGE_DIR


def lm_eval_has_our_tasks() -> bool:
    """True after a regular (non-editable) install, which copies our YAML into lm-eval."""
    return (Path(lm_eval.__file__).resolve().parent / "tasks" / "conceptcomb").is_dir()


def demo_command(
    task: str, limit: int, judge: str, max_gen_toks: int, output_path: str | None
) -> list[str]:
    gguf = packaged_smollm2_gguf()
    command = [
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={gguf.parent},gguf_file={gguf.name}",
        "--tasks",
        task,
        "--limit",
        str(limit),
        "--apply_chat_template",
        "--gen_kwargs",
        f"max_gen_toks={max_gen_toks}",
        "--metadata",
        json.dumps({"judge": judge}),
    ]
    if output_path:
        command += ["--output_path", output_path, "--log_samples"]
    if not lm_eval_has_our_tasks():
        command += ["--include_path", str(tasks_path())]
    return command


def run_demo(args: argparse.Namespace) -> int:
    command = demo_command(args.task, args.limit, args.judge, args.max_gen_toks, args.output_path)
    print("Running:", shlex.join(command), flush=True)
    code = subprocess.call(command)
    if args.judge == "local":
        print(
            "Note: the local judge (SmolLM2-135M) only shows that the pipeline runs; its "
            "ratings do not agree with human ones (see the README). Use an API judge, e.g. "
            "--judge openai with OPENAI_API_KEY set, for numbers comparable to the paper.",
            flush=True,
        )
    return code


def run_data(args: argparse.Namespace) -> int:
    dataset = DATASETS[args.benchmark]
    names = [pinned.name for pinned in dataset.files]
    files = resolve_files(dataset, names, args.data_dir)
    for name, path in files.items():
        print(f"ok  {name}  {path}")
    print(f"All {len(files)} files of {dataset.describe()} are present and match their sha256.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conceptcomb", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run a task on the packaged SmolLM2 (offline)")
    demo.add_argument("--task", default="ccpt_pi_emergent", choices=[s.name for s in all_specs()])
    demo.add_argument("--limit", type=int, default=5)
    demo.add_argument("--judge", default="local", choices=["local", "openai", "off"])
    demo.add_argument("--max-gen-toks", type=int, default=256)
    demo.add_argument("--output-path", default=None, help="also write results and samples")
    demo.set_defaults(run=run_demo)

    data = commands.add_parser("data", help="download or check benchmark files")
    data.add_argument("action", choices=["fetch", "verify"])
    data.add_argument("benchmark", choices=sorted(DATASETS))
    data.add_argument("--data-dir", default=None, help="check this folder instead of the cache")
    data.set_defaults(run=run_data)

    path = commands.add_parser("tasks-path", help="print the folder for lm_eval --include_path")
    path.set_defaults(run=lambda _: print(tasks_path()) or 0)

    cggc_cli.add_commands(commands)
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

"""How far is a judge from the GPT-4o ratings the CCPT files record? ``judge agree`` on the
same replies (docs/judge.md).

The CCPT files record GPT-4o's 1-10 relevance ratings of each item's own answer (its noun
phrase, head and modifier with the property). This script takes the first ``--items`` items
of a property-induction task with their own answers as replies, scores them with those
recorded ratings (a loopback judge that answers only with them: the paper's judge, replayed)
into a bundle, re-scores that bundle with the judge you give (default: the packaged local
judge, offline) as a maintainer would (``conceptcomb score --predictions BUNDLE``), and runs
``conceptcomb judge agree`` on the two. It prints each command it runs.

    python scripts/judge_vs_recorded_gpt4o.py --items 80 --out judge-vs-gpt4o
    python scripts/judge_vs_recorded_gpt4o.py --items 200 --out vs -- --judge-base-url URL \\
        --judge-model NAME
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import sys
import time
from pathlib import Path

from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.cli import main as conceptcomb
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings, write_gold_predictions


def run(*args: str, quiet: bool = False) -> None:
    """``conceptcomb ARGS``, printed before it runs; stops the script when it fails."""
    print(f"$ conceptcomb {shlex.join(args)}", flush=True)
    started = time.perf_counter()
    out = io.StringIO()
    with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
        code = conceptcomb(list(args))
    if code != 0:
        print(out.getvalue())
        sys.exit(f"conceptcomb {args[0]} failed ({code})")
    print(f"# {time.perf_counter() - started:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=80, help="first N items of the task (80)")
    parser.add_argument("--task", default="ccpt_pi_emergent", choices=["ccpt_pi_emergent",
                        "ccpt_pi_canceled"], help="the task (ccpt_pi_emergent)")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="folder for every file")
    parser.add_argument("judge", nargs="*", help="after --: the judge options (--judge local)")
    args = parser.parse_args()
    judge = args.judge or ["--judge", "local", "--judge-cache", "off"]
    spec = CcptTaskSpec(args.task.removeprefix("ccpt_"))
    args.out.mkdir(parents=True, exist_ok=True)
    replies = args.out / "own_answers.jsonl"
    items = write_gold_predictions(spec, replies)[: args.items]
    lines = replies.read_text(encoding="utf-8").splitlines()[: args.items]
    replies.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"# {len(items)} items of {args.task} with their own answers: {replies}")
    recorded = args.out / "recorded-gpt-4o"
    with LoopbackServer(ratings=recorded_ratings(items), strict=True) as gpt4o:
        print(f"# a loopback judge at {gpt4o.base_url} answers with the recorded GPT-4o ratings")
        run("score", args.task, "--predictions", str(replies), "--judge-base-url",
            gpt4o.base_url, "--judge-model", "gpt-4o", "--judge-cache", "off", "--model-name",
            "ccpt-own-answers", "--output", str(recorded / "results.json"),
            "--samples-output", str(recorded / "samples.jsonl"), quiet=True)  # fmt: skip
    run("submit-bundle", str(recorded / "results.json"), "--out", str(recorded), quiet=True)
    (bundle,) = recorded.glob("*.bundle.json")
    other = args.out / "other-judge"
    run("score", args.task, "--predictions", str(bundle), *judge, "--output",
        str(other / "results.json"), "--samples-output", str(other / "samples.jsonl"),
        quiet=True)  # fmt: skip
    run("judge", "agree", str(bundle), str(other / "results.json"), "--json",
        str(args.out / "agree.json"))  # fmt: skip


if __name__ == "__main__":
    main()

"""Table 3's noun phrase completion rows from the replies the CCPT authors recorded.

The authors' ``results/npc_emergent_<model>_<method>.csv`` (their repository at the pinned
commit; ``../shared/data/ccpt/results`` or ``--results DIR``) keep every model's replies per
sampling seed and GPT-4o's ratings of what they judged. This script scores each seed's
replies with the task's own code (`conceptcomb.ccpt.scoring.score_replies`, the core
``conceptcomb score`` and both frameworks run; the paper's ``npc_modifier=lemma``), the
judge a loopback server that answers only with the ratings the authors recorded (a question
they never asked fails and is left out, counted), and prints per model and method the mean
over seeds beside Table 3's row (Base and CoT: the methods one prompt answers).

``--out DIR`` also writes each seed's replies through ``conceptcomb score`` (Base as
``ccpt_npc_emergent``, CoT as ``ccpt_npc_emergent_cot``, judged by the same replay) into
``DIR/<model>_<method>/seed<N>/``, the runs ``conceptcomb compare`` pairs (the seeds of a
folder averaged per item); ``--model`` keeps the files of one model (``gpt-4o``).

    python scripts/replay_ccpt_npc.py [--results DIR] [--data-dir DIR] [--out DIR] [--model M]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.published import CCPT_GENERATIVE, published
from conceptcomb.ccpt.scoring import score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec, task_version
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import (
    csv_rows,
    recorded_replies,
    replay_table,
    score_predictions,
)

REPO = Path(__file__).resolve().parents[1]
SPEC = CcptTaskSpec(NPC_EMERGENT)
METRICS = ("R_HMP", "R_NP", "E")
# The files' model names -> Table 3's; methods -> its settings.
MODELS = {
    "gpt-4o": "GPT-4o",
    "Meta-Llama-3.1-70B-Instruct": "LLaMa3.1-70B",
    "Qwen2.5-72B-Instruct": "Qwen2.5-72B",
    "claude-3-5-sonnet-20241022": "Sonnet-3.5",
    "o1-mini-2024-09-12": "o1-mini",
    "o1-2024-12-17": "o1",
}
METHODS = {"naive": "Base", "cot": "CoT"}


def seeds(path: Path) -> list[str]:
    """The column prefixes of a file's runs (``gpt-4o_naive_0`` ...), one per seed."""
    header = csv_rows(path)[0]
    columns = [c for c in header if c.endswith("_modifier") and not c.startswith("meta.")]
    return [c.removesuffix("_modifier") for c in columns]


def replay(
    path: Path, run: str, items: list, out: Path | None = None
) -> tuple[dict[str, float], int]:
    """One seed's metrics, and how many questions the recorded ratings could not answer;
    with ``out``, its ``conceptcomb score`` results there too."""
    recorded = list(recorded_replies(path, run))
    table, _ = replay_table(recorded)
    with LoopbackServer(ratings=table, strict=True) as server:
        options = {"judge_base_url": server.base_url, "judge_cache": "off"}
        settings = JudgeSettings.resolve({**options, "judge_format_retries": 0})
        scores, _ = score_replies(SPEC, items, [r.reply for r in recorded], settings)
        unknown = len(server.stats.unknown)
        if out is not None:
            write_scored(out, run, items, [r.reply for r in recorded], server.base_url)
    result = aggregate(SPEC, [score.metrics for score in scores])
    return {name: result[name].value for name in METRICS}, unknown


def write_scored(out: Path, run: str, items: list, replies: list[str], judge_url: str) -> None:
    """``conceptcomb score`` of one seed's replies into ``out/<model>_<method>/seed<N>/``."""
    model, method, seed = run.rsplit("_", 2)
    folder = out / f"{model}_{method}" / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    predictions = folder / "predictions.jsonl"
    pairs = zip(items, replies, strict=True)
    lines = [{"doc": item.as_doc(), "response": reply} for item, reply in pairs]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    task = SPEC.name + ("_cot" if method == "cot" else "")
    judge = ("--judge-base-url", judge_url, "--judge-model", "gpt-4o", "--judge-cache", "off",
             "--judge-format-retries", "0")  # fmt: skip
    score_predictions(folder, task, predictions, model, *judge, "--npc-modifier", "lemma")


def paper_rows() -> dict[tuple[str, str], list[float]]:
    rows = [row for row in published() if row.table == CCPT_GENERATIVE]
    return {
        (row.model, row.setting): [row.cells[f"npc_emergent:{m}"].value for m in METRICS]
        for row in rows
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO.parent / "shared/data/ccpt/results")
    parser.add_argument("--data-dir", default=None, help="the CCPT files (default: as ever)")
    parser.add_argument("--out", type=Path, default=None, help="write conceptcomb score runs")
    parser.add_argument("--model", choices=sorted(MODELS), default=None, help="only this model")
    args = parser.parse_args()
    if args.data_dir:  # --out's conceptcomb score reads the CCPT files from there too
        os.environ["CONCEPTCOMB_DATA_DIR"] = args.data_dir
    items = load_items(SPEC, args.data_dir)
    paper = paper_rows()
    print(f"ccpt_npc_emergent {task_version()}, {len(items)} items, npc_modifier=lemma")
    print("| model | setting | seeds | R_HMP | R_NP | E | unanswered | Table 3 R_HMP / R_NP / E |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model in MODELS.items():
        if args.model not in (None, name):
            continue
        for method, setting in METHODS.items():
            path = args.results / f"npc_emergent_{name}_{method}.csv"
            if not path.is_file():
                continue
            runs = [replay(path, run, items, args.out) for run in seeds(path)]
            means = [statistics.fmean(values[m] for values, _ in runs) for m in METRICS]
            unknown = sum(count for _, count in runs)
            published_cells = paper.get((model, setting))
            theirs = " / ".join(f"{v:.1f}" for v in published_cells) if published_cells else "-"
            cells = " | ".join(f"{value:.1f}" for value in means)
            print(f"| {model} | {setting} | {len(runs)} | {cells} | {unknown} | {theirs} |")


if __name__ == "__main__":
    main()

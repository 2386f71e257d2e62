"""Table 3's noun phrase completion rows from the replies the CCPT authors recorded.

The authors' ``results/npc_emergent_<model>_<method>.csv`` (their repository at the pinned
commit; ``../shared/data/ccpt/results`` or ``--results DIR``) keep every model's replies per
sampling seed and GPT-4o's ratings of what they judged. This script scores each seed's
replies with the task's own code (`conceptcomb.ccpt.scoring.score_replies`, the core
``conceptcomb score`` and both frameworks run; the paper's ``npc_modifier=lemma``), the
judge a loopback server that answers only with the ratings the authors recorded (a question
they never asked fails and is left out, counted), and prints per model and method the mean
over seeds beside Table 3's row (Base and CoT: the methods one prompt answers).

    python scripts/replay_ccpt_npc.py [--results DIR] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.published import CCPT_GENERATIVE, published
from conceptcomb.ccpt.scoring import score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec, task_version
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import csv_rows, recorded_replies, replay_table

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


def replay(path: Path, run: str, items: list) -> tuple[dict[str, float], int]:
    """One seed's metrics, and how many questions the recorded ratings could not answer."""
    recorded = list(recorded_replies(path, run))
    table, _ = replay_table(recorded)
    with LoopbackServer(ratings=table, strict=True) as server:
        settings = JudgeSettings.resolve(
            {"judge_base_url": server.base_url, "judge_cache": "off", "judge_format_retries": 0}
        )
        scores, _ = score_replies(SPEC, items, [r.reply for r in recorded], settings)
        unknown = len(server.stats.unknown)
    result = aggregate(SPEC, [score.metrics for score in scores])
    return {name: result[name].value for name in METRICS}, unknown


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
    args = parser.parse_args()
    items = load_items(SPEC, args.data_dir)
    paper = paper_rows()
    print(f"ccpt_npc_emergent {task_version()}, {len(items)} items, npc_modifier=lemma")
    print("| model | setting | seeds | R_HMP | R_NP | E | unanswered | Table 3 R_HMP / R_NP / E |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model in MODELS.items():
        for method, setting in METHODS.items():
            path = args.results / f"npc_emergent_{name}_{method}.csv"
            if not path.is_file():
                continue
            runs = [replay(path, run, items) for run in seeds(path)]
            means = [statistics.fmean(values[m] for values, _ in runs) for m in METRICS]
            unknown = sum(count for _, count in runs)
            published_cells = paper.get((model, setting))
            theirs = " / ".join(f"{v:.1f}" for v in published_cells) if published_cells else "-"
            cells = " | ".join(f"{value:.1f}" for value in means)
            print(f"| {model} | {setting} | {len(runs)} | {cells} | {unknown} | {theirs} |")


if __name__ == "__main__":
    main()

"""``conceptcomb cggc report``: Table 4 (id, ood and the gap) from lm-eval or Inspect results.

Reads lm-eval ``results_*.json`` files (or folders holding them) and Inspect logs, finds
the CGGC tasks in them, and prints one row per task plus the gap (id minus ood) for every
id/ood pair of the same framework and variant (``cggc_id`` / ``cggc_ood``,
``cggc_id_script`` / ``cggc_ood_script``). Inspect rows are marked "(inspect)".
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from conceptcomb.cggc.metrics import METRICS
from conceptcomb.common.errors import DataFormatError

Scores = dict[str, float]


def lm_eval_scores(path: Path) -> dict[str, Scores]:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
    except (json.JSONDecodeError, KeyError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: not an lm-eval results file ({err}).") from err
    found: dict[str, Scores] = {}
    for task, values in results.items():
        if not task.startswith("cggc_"):
            continue
        found[task] = {
            info.name: float(values[f"{info.name},none"])
            for info in METRICS
            if f"{info.name},none" in values and values[f"{info.name},none"] is not None
        }
    return found


def inspect_scores(path: Path) -> dict[str, Scores]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path), header_only=True)
    task = str((log.eval.metadata or {}).get("task") or log.eval.task.split("/")[-1])
    if not task.startswith("cggc") or log.results is None:
        return {}
    scores = log.results.scores[0].metrics
    return {f"{task} (inspect)": {name: float(m.value) for name, m in scores.items()}}


def collect(paths: list[Path]) -> dict[str, Scores]:
    found: dict[str, Scores] = {}
    for path in paths:
        files = (
            sorted(path.rglob("results_*.json")) + sorted(path.rglob("*.eval"))
            if path.is_dir()
            else [path]
        )
        for file in files:
            reader = lm_eval_scores if file.suffix == ".json" else inspect_scores
            found.update(reader(file))
    return found


def _cell(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.2f}"


def table4(found: dict[str, Scores]) -> str:
    header = f"{'task':<32}" + "".join(f"{info.title:>10}" for info in METRICS)
    lines = [header]
    for task in sorted(found):
        lines.append(
            f"{task:<32}" + "".join(f"{_cell(found[task].get(i.name)):>10}" for i in METRICS)
        )
    for task in sorted(found):
        if not task.startswith("cggc_id"):
            continue
        partner = "cggc_ood" + task.removeprefix("cggc_id")
        if partner in found:
            gap = {
                i.name: found[task].get(i.name, math.nan) - found[partner].get(i.name, math.nan)
                for i in METRICS
            }
            name = f"gap{task.removeprefix('cggc_id')} (id - ood)"
            lines.append(f"{name:<32}" + "".join(f"{_cell(gap[i.name]):>10}" for i in METRICS))
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", type=Path, help="lm-eval output folders/files, Inspect logs"
    )


def run(args: argparse.Namespace) -> int:
    found = collect(args.results)
    if not found:
        raise DataFormatError("no CGGC task results in " + ", ".join(map(str, args.results)))
    print(table4(found))
    return 0

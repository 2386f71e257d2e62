"""Judged runs for the judge tests of the leaderboard (issue 45): the CCPT items' own answers
(ccpt_pi_emergent), scored by ``conceptcomb score`` with a judge, made into a bundle."""

from __future__ import annotations

import json
from pathlib import Path

from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.testing.recorded import write_gold_predictions
from tests.leaderboard.eee_support import run_cli

SPEC = CcptTaskSpec("pi_emergent")
TASK = SPEC.name


def gold_predictions(out: Path, items: int, spec: CcptTaskSpec = SPEC) -> tuple[Path, list]:
    """The first ``items`` items of the task with their own answers, as a JSONL to score."""
    path = out / f"gold_{spec.name}.jsonl"
    found = write_gold_predictions(spec, path)[:items]
    lines = path.read_text().splitlines()[:items]
    path.write_text("\n".join(lines) + "\n")
    return path, found


def score(out: Path, name: str, predictions: Path, *judge: str, task: str = TASK) -> Path:
    """``conceptcomb score`` into ``out/<name>.results.json`` with its samples beside it."""
    results = out / f"{name}.results.json"
    code, printed = run_cli(
        "score", task, "--predictions", str(predictions), *judge, "--model-name", "gold",
        "--output", str(results), "--samples-output", str(out / f"{name}.samples.jsonl"),
    )  # fmt: skip
    assert code == 0, printed
    return results


def bundle_of(results: Path, out: Path) -> Path:
    """``submit-bundle`` of one results file: the one valid bundle."""
    code, printed = run_cli("submit-bundle", str(results), "--out", str(out))
    assert code == 0 and "(valid)" in printed, printed
    (path,) = out.glob("*.bundle.json")
    return path


def loopback(server, model: str = "gpt-4o", cache: str = "off") -> list[str]:
    return ["--judge-base-url", server.base_url, "--judge-model", model, "--judge-cache", cache]


def ratings_of(samples: Path) -> dict[tuple[str, str], float]:
    """(concept, property), lower-cased -> the rating a `score --samples-output` file holds."""
    found = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        for question in json.loads(line)["judged"].values():
            key = (question["concept"].lower(), question["property"].lower())
            found.setdefault(key, float(question["rating"]))
    return found

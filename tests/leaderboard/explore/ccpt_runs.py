"""Real CCPT runs for the explorer's tests: the dataset's own answers (some replaced), scored
by ``conceptcomb score`` (``ccpt_pi_emergent`` by a loopback judge replaying the authors'
recorded GPT-4o ratings), made into bundles by ``submit-bundle``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import (
    recorded_ratings,
    score_predictions,
    submit_bundle,
    write_gold_predictions,
)

JUDGED = "ccpt_pi_emergent"
TYPES = "ccpt_tp"
Reply = Callable[[int, str], str]  # (line number, the item's own answer) -> the reply sent


def replies(out: Path, task: str, lines: range, reply: Reply) -> Path:
    """The task's items at ``lines`` with the replies ``reply`` makes of their answers."""
    path = out / f"{task}.jsonl"
    write_gold_predictions(spec_by_name(task), path)
    found = path.read_text(encoding="utf-8").splitlines()
    chosen = []
    for n in lines:
        line = json.loads(found[n])
        chosen.append(json.dumps({**line, "response": reply(n, line["response"])}))
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


def ccpt_bundle(
    out: Path,
    model: str,
    reply: Reply,
    judge: str = "gpt-4o",
    shift: int = 0,
    types: bool = True,
) -> Path:
    """One model's bundle: ccpt_pi_emergent (20 items, judged by ``judge``, its ratings
    ``shift`` points above the recorded ones) and, with ``types``, ccpt_tp (40 items of all
    four property types)."""
    out.mkdir(parents=True)
    spec = spec_by_name(JUDGED)
    from conceptcomb.ccpt.data import load_items

    ratings = {k: min(10, r + shift) for k, r in recorded_ratings(load_items(spec)).items()}
    results = []
    judged = out / "judged"
    judged.mkdir()
    with LoopbackServer(ratings=ratings) as server:
        predictions = replies(judged, JUDGED, range(20), reply)
        results.append(score_predictions(
            judged, JUDGED, predictions, model, "--judge-base-url", server.base_url,
            "--judge-model", judge, "--judge-cache", "off",
        ))  # fmt: skip
    if types:
        typed = out / "types"
        typed.mkdir()
        predictions = replies(typed, TYPES, range(0, 1000, 25), reply)
        results.append(score_predictions(typed, TYPES, predictions, model))
    return submit_bundle(results, out)

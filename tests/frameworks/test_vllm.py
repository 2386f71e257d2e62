"""vLLM, run for real on the packaged SmolLM2: lm-eval's and Inspect's own vLLM runners, and
the judge against a vLLM OpenAI-compatible server, as users serve one.

vLLM lives in an environment of its own (`vllm_python`: on a CPU machine
scripts/install_vllm_cpu.sh makes one; .ci/run sets CONCEPTCOMB_VLLM_PYTHON). Two vLLM starts
serve the whole module (issue 53: each start takes one to two minutes of 2 CPU cores; these
were three): lm-eval's own engine (``lm_eval --model vllm``, the four tasks in one command),
and one ``vllm serve`` (`server`, eager, float32) that Inspect's vllm provider connects to
(``inspect eval --model vllm/smollm2 --model-base-url URL``, the four tasks in one
``eval``) and that the judge tests ask. They overlap: the lm-eval run goes on in the
background while the server starts, and the Inspect run starts as soon as the server
answers (a start is mostly single-threaded imports and set-up, each task's data is built in
one thread, and vLLM's CPU engine computes on one core of the two). Each task runs on its
first LIMIT items: its prompts (CGGC's 4-shot ones ~500 tokens) are what most of the
generation time goes to on the CPU. Then:

* every item gets the same prompt from both frameworks: lm-eval's (its chat template applied,
  as its samples log it) is the model's chat template rendered over the messages Inspect sent;
* every item gets the same reply (greedy; in float32 a reply does not depend on how each
  framework batches, which in bfloat16 it does: docs/running.md, "vLLM");
* both report the same metrics;
* the judge on the server: the preflight, concurrent questions, the cache, structured output,
  and a judged task run end to end with its judge on that server. SmolLM2-135M asked for a
  relevance rating in free text rarely answers in the asked format;
  ``judge_response_format=json_schema`` has vLLM's structured outputs constrain every answer
  to the rating's JSON schema, so that even this judge returns a valid rating every time.

Alone (``-n 0 -p no:randomly``, nice 15) the module took 399 s on 2 cores at load 10-13
(2026-12-06), 791 s at the same load before the runs overlapped and were cut to 2 items:
the two starts (~2 minutes each under that load) and each framework's building of CGGC's
16,167 ood items are most of it. It holds `vllm_turn`, one vLLM module at a time across
workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conceptcomb.common.errors import JudgeError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import preflight_judge, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.commands import OUR_LM_EVAL, inspect_eval_command, lm_eval_command
from conceptcomb.testing.sent_replies import inspect_items, lm_eval_items
from conceptcomb.testing.vllm_server import SERVED_NAME, VllmServer, cpu_environment
from tests.abspyramid.conftest import data_folder
from tests.conftest import SHARED_DATA
from tests.leftovers import temporary_folder_of_own

pytestmark = pytest.mark.slow

# One task of each benchmark with data here: CGGC's packaged data, ../shared's CCPT and McRae
# files, AbsPyramid's test fixtures with the 30 real detection records of ../shared first
# (its zero-shot detection task generates; its log-likelihood ones are lm-eval's only). CGGC
# writes 20 tokens an item, AbsPyramid 32; McRae and CCPT's property induction (judge off)
# up to 512 and 1,024, capped at MAX_TOKENS: the point is that both frameworks send and get
# the same.
TASKS = ("cggc_ood", "mcrae_esslli44", "ccpt_pi_emergent", "abspyramid_det_noun_zs")
LIMIT, MAX_TOKENS, MODEL_LEN = 2, 48, 2048
# Eager: no torch.compile (whose inductor needs a C++ compiler at run time and took ~3 of
# the ~3.5 minutes of a start here); the same in both frameworks.
ENGINE = {"dtype": "float32", "max_model_len": str(MODEL_LEN), "enforce_eager": "True"}
SERVE_EXTRA = ("--enforce-eager",)  # the server's engine as ENGINE: float32, MODEL_LEN tokens


# The commands, built as docs/running.md shows them (tests/test_docs_code.py checks that the
# page's commands are these, given its tasks, limits and folders; ``more``: this module's).
def lm_eval_engine_command(
    folder: str | Path,
    tasks: str | tuple[str, ...],
    limit: int,
    output_path: str | Path,
    program: str | Path | Sequence[str] = "lm_eval",
    include_path: str | None = None,
    **more: object,
) -> list[str]:
    """lm-eval's own vLLM engine on the model folder (``lm_eval --model vllm``)."""
    return lm_eval_command(
        tasks, model="vllm", model_args={"pretrained": folder, **ENGINE}, limit=limit,
        program=program, include_path=include_path, batch_size="auto",
        apply_chat_template=True, log_samples=True, output_path=output_path, **more,
    )  # fmt: skip


def judged_task_command(
    base_url: str,
    program: str | Path | Sequence[str] = "lm_eval",
    model_more: str = "",
    judge_more: dict[str, object] | None = None,
    **more: object,
) -> list[str]:
    """ccpt_pi_emergent in lm-eval, model and judge both the vLLM server at ``base_url``."""
    judge = {"judge_base_url": base_url, "judge_model": SERVED_NAME,
             "judge_response_format": "json_schema", **(judge_more or {})}  # fmt: skip
    model = (
        f"model={SERVED_NAME},base_url={base_url}/chat/completions,num_concurrent=4,"
        f"tokenized_requests=False,tokenizer_backend=None{model_more}"
    )
    return lm_eval_command(
        "ccpt_pi_emergent", model="local-chat-completions", model_args=model, limit=3,
        program=program, apply_chat_template=True, metadata=judge, **more,
    )  # fmt: skip


def vllm_env(vllm_python: Path) -> dict[str, str]:
    env = cpu_environment()
    env["PATH"] = f"{vllm_python.parent}{os.pathsep}{env['PATH']}"
    return env


def data_root(folder: Path) -> Path:
    """CCPT's and McRae's files of ../shared, and AbsPyramid's test data folder."""
    folder.mkdir()
    for name in ("ccpt", "mcrae"):
        (folder / name).symlink_to(SHARED_DATA / name, target_is_directory=True)
    data_folder(folder / "abspyramid")
    return folder


@pytest.fixture(scope="module", autouse=True)
def temporary_folder() -> Iterator[Path]:
    """vLLM leaves its IPC sockets (uuid-named) and its file store (vllm_dist_*) in
    TMPDIR: a short folder of the module's, removed after its last test."""
    with temporary_folder_of_own("vllm-") as folder:
        yield folder


@dataclass
class Background:
    """A command going on in the background, in a process group of its own; its output in
    ``log`` (the command line first)."""

    command: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> Background:
        with self.log.open("w", encoding="utf-8") as sink:
            sink.write(" ".join(self.command) + "\n\n")
            sink.flush()
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: vLLM's engine processes stop with it
            )  # fmt: skip
        return self

    def wait_ok(self) -> None:
        assert self.process is not None
        code = self.process.wait(timeout=1500)
        output = self.log.read_text(encoding="utf-8", errors="replace")
        assert code == 0, f"{self.command[0]} failed:\n{output[-4000:]}"

    def stop(self) -> None:
        """Its process group, where the module ends before it did (a failed test)."""
        if self.process is not None:
            if self.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture(scope="module")
def folders(vllm_python: Path, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The runs' folder (their data inside) and environment."""
    out = tmp_path_factory.mktemp("vllm-runs")
    # Judge off for CCPT by the variable both frameworks read (Inspect refuses a -T option
    # that a task lacks, and only CCPT's tasks have `judge`).
    env = {**vllm_env(vllm_python), "CONCEPTCOMB_JUDGE": "off",
           "CONCEPTCOMB_DATA_DIR": str(data_root(out / "data"))}  # fmt: skip
    return out, env


@pytest.fixture(scope="module")
def engine_run(
    vllm_python: Path, smollm2_folder: Path, vllm_turn: None, folders: tuple[Path, dict[str, str]]
) -> Iterator[Background]:
    """lm-eval's own vLLM engine (``lm_eval --model vllm``, the module's first vLLM start)
    on the four tasks, LIMIT items each, started in the background: `server` asks for it
    first, so that the module's `vllm serve` starts beside it (two starts of mostly
    single-threaded imports and set-up, and vLLM's CPU engine computes on one core of the
    two). `runs` waits for its end. The command line is docs/running.md's
    (`lm_eval_engine_command`), run by lm-eval's own parser and runner with a task index of
    our tasks only (`commands.OUR_LM_EVAL`, in the vLLM environment), not first lm-eval's
    ~14,000 task files (about 16 s on 2 idle cores)."""
    out, env = folders
    program = (str(vllm_python), *OUR_LM_EVAL[1:])  # `-m conceptcomb...`, in vLLM's env
    command = lm_eval_engine_command(
        smollm2_folder, TASKS, LIMIT, out / "lm_eval", program=program,
        gen_kwargs=f"max_gen_toks={MAX_TOKENS}",
    )  # fmt: skip
    running = Background(command, env, out / "lm_eval.log").start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def server(vllm_python: Path, smollm2_folder: Path, engine_run: Background) -> Iterator[VllmServer]:
    """The module's one ``vllm serve``: Inspect's runs and the judge tests ask it. It
    starts while lm-eval's engine run (`engine_run`, started first) goes on. Its first user
    pays its start (and any wait for `vllm_turn`): it answered 133 s after its start, beside
    the lm-eval run's, on 2 cores at load 10-13 (2026-12-06)."""
    engine = SERVE_EXTRA  # as ENGINE: float32, MODEL_LEN tokens, no torch.compile
    with VllmServer(vllm_python, smollm2_folder, max_model_len=MODEL_LEN, extra=engine) as running:
        yield running


@pytest.fixture(scope="module")
def runs(
    vllm_python: Path,
    engine_run: Background,
    server: VllmServer,
    folders: tuple[Path, dict[str, str]],
) -> Iterator[dict[str, Path]]:
    """The lm-eval run's output folder (its own engine, `engine_run`) and the Inspect run's
    log folder (Inspect's vllm provider on the module's server, the four tasks, LIMIT items
    each, started as soon as the server answers, beside what is left of the lm-eval run).
    Its first user waits for the end of both."""
    out, env = folders
    inspect = inspect_eval_command(
        [f"conceptcomb/{task}" for task in TASKS], model=f"vllm/{SERVED_NAME}",
        model_base_url=server.base_url, limit=LIMIT, program=vllm_python.parent / "inspect",
        temperature=0, max_tokens=MAX_TOKENS, log_dir=out / "inspect", display="none",
    )  # fmt: skip
    running = Background(inspect, env, out / "inspect.log").start()
    try:
        engine_run.wait_ok()
        running.wait_ok()
        yield {"lm_eval": out / "lm_eval", "inspect": out / "inspect"}
    finally:
        running.stop()


@pytest.fixture(scope="module")
def sent(runs: dict[str, Path], smollm2_folder: Path) -> dict[str, dict]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder)
    return {"lm_eval": lm_eval_items(runs["lm_eval"]),
            "inspect": inspect_items(runs["inspect"], tokenizer)}  # fmt: skip


@pytest.mark.shared_data
def test_both_run_the_same_items(sent: dict[str, dict]) -> None:
    """Both frameworks ran the same items of each task. The first test of the module to ask
    for `sent` pays `runs` (lm-eval's own vLLM engine run and the server's start side by
    side, then Inspect on the server beside the end of the lm-eval run): 326 s of setup
    alone with `-p no:randomly` on 2 cores at load 10-13, 2026-12-06 (718 s at the same
    load before the runs overlapped and were cut from 4 items to 2)."""
    for framework, tasks in sent.items():
        assert set(tasks) == set(TASKS), framework
        assert all(len(items) == LIMIT for items in tasks.values()), framework
    for task in TASKS:
        assert set(sent["lm_eval"][task]) == set(sent["inspect"][task]), task


@pytest.mark.shared_data
def test_the_runs_kept_the_bytecode_they_compiled(runs: dict[str, Path], vllm_python: Path) -> None:
    """The vLLM processes write what they compile (`cpu_environment`): CI installs the venv
    without byte-compiling it and its image sets PYTHONDONTWRITEBYTECODE, so each process
    would compile vLLM, torch and transformers from source again."""
    venv = vllm_python.parent.parent
    for package in ("vllm", "torch", "transformers"):
        assert list(venv.glob(f"lib/python3*/site-packages/{package}/__pycache__/*.pyc")), package


@pytest.mark.shared_data
def test_both_send_the_same_prompts(sent: dict[str, dict]) -> None:
    for task in TASKS:
        for key, ours in sent["lm_eval"][task].items():
            assert ours["prompt"] == sent["inspect"][task][key]["prompt"], (task, key)


@pytest.mark.shared_data
def test_both_get_the_same_replies_in_float32(sent: dict[str, dict]) -> None:
    for task in TASKS:
        replies = {key: item["reply"] for key, item in sent["lm_eval"][task].items()}
        assert any(reply.strip() for reply in replies.values()), f"{task}: no reply at all"
        theirs = {key: sent["inspect"][task][key]["reply"] for key in replies}
        assert replies == theirs, task


@pytest.mark.shared_data
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
                assert their_value == pytest.approx(ours_value, rel=1e-9, abs=1e-12), (
                    task,
                    name,
                )


# --- The judge on the module's server --------------------------------------------------------
PAIRS = [("wooden spoon", "made of wood"), ("ice cream", "cold"), ("sports car", "fast"),
         ("dog", "barks"), ("red apple", "red"), ("stone wall", "soft"),
         ("paper boat", "floats"), ("glass bottle", "breakable")]  # fmt: skip
PROMPTS = [relevance_prompt(concept, prop) for concept, prop in PAIRS]
# Short answers: a rating in JSON is under 10 tokens; free text gets room to give one.
JUDGE_MAX_TOKENS = 64


def options(server: VllmServer, **more: object) -> JudgeSettings:
    return JudgeSettings.resolve({
        "judge_base_url": server.base_url, "judge_model": SERVED_NAME, "judge_cache": "off",
        "judge_max_tokens": JUDGE_MAX_TOKENS, "judge_concurrency": 4, **more,
    })  # fmt: skip


def test_the_preflight_passes_and_names_an_unknown_model(server: VllmServer) -> None:
    preflight_judge(options(server))
    with pytest.raises(JudgeError, match="no-such-model"):
        preflight_judge(options(server, judge_model="no-such-model"))


def test_json_schema_gets_a_rating_for_every_question(server: VllmServer) -> None:
    replies, usage, _ = rate_prompts(
        options(server, judge_response_format="json_schema", judge_format_retries=0),
        PROMPTS,
    )
    assert usage.questions == len(PROMPTS) and usage.failures == 0, usage.summary()
    assert usage.requests == len(PROMPTS)  # not one re-ask of a malformed answer
    assert all(reply.rating in range(1, 11) for reply in replies.values()), replies


def test_the_same_questions_in_free_text_fail_more_often(server: VllmServer) -> None:
    """The paper's free text, the same questions and token budget, no re-asks: what the
    json_schema format prevents (docs/judge.md records the rates measured)."""
    text = options(server, judge_format_retries=0)
    _, free, _ = rate_prompts(text, PROMPTS)
    _, shaped, _ = rate_prompts(options(server, judge_response_format="json_schema"), PROMPTS)
    print(f"format failures: text {free.failures}/{free.questions}, "
          f"json_schema {shaped.failures}/{shaped.questions}")  # fmt: skip
    assert free.questions == shaped.questions == len(PROMPTS)
    assert shaped.failures == 0 and free.failures > 0, (
        free.summary(),
        shaped.summary(),
    )


def test_the_cache_answers_a_second_run(server: VllmServer, tmp_path: Path) -> None:
    cache = str(tmp_path / "judge.sqlite")
    settings = options(server, judge_response_format="json_schema", judge_cache=cache)
    first, asked, _ = rate_prompts(settings, PROMPTS)
    again, cached, _ = rate_prompts(settings, PROMPTS)
    assert asked.requests == len(PROMPTS) and cached.requests == 0
    assert cached.cache_hits == len(PROMPTS)
    assert {p: r.rating for p, r in again.items()} == {p: r.rating for p, r in first.items()}


@pytest.mark.shared_data
def test_a_judged_task_runs_with_its_judge_on_the_server(
    server: VllmServer, tmp_path: Path
) -> None:
    """ccpt_pi_emergent in lm-eval, model and judge both served by vLLM (structured).
    28 s for the lm_eval process (lm-eval's parser and runner indexing our tasks only,
    `OUR_LM_EVAL`), 3 items generated and their judge questions answered by the server, on
    2 cores at load 10-13 (2026-12-06); as the module's first test to ask for the server
    (any order but the file's) it also pays that start, ~130 s at that load (`server`)."""
    command = judged_task_command(
        server.base_url, program=OUR_LM_EVAL,
        model_more=",max_retries=1", judge_more={"judge_concurrency": 4},
        gen_kwargs="max_gen_toks=48", output_path=tmp_path,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "judge usage [" in output and ", 0 failures" in output, output[-3000:]
    (results,) = tmp_path.rglob("results_*.json")
    metrics = json.loads(results.read_text())["results"]["ccpt_pi_emergent"]
    emergence = [value for key, value in metrics.items() if key.split(",")[0] == "E"]
    assert len(emergence) == 1 and isinstance(emergence[0], float), metrics

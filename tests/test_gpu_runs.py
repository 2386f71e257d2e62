"""benchmarks/gpu_runs.py: without a GPU it refuses in one line; its CPU rehearsal runs every
step end to end (a few items and tokens) and labels every line as no GPU figure. The GPU
figures are the script's to print on a GPU machine (docs/performance.md), never a test's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_runs.py"
LABEL = "[CPU rehearsal: no GPU figure] "


def test_refuses_in_one_line_without_a_gpu() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0
    assert re.fullmatch(
        r"gpu_runs\.py measures GPU runs, and torch \S+ sees no CUDA GPU here \((a CPU-only "
        r"build|no GPU visible)\): run it on a machine with one \(docs/performance\.md, "
        r"GPU runs\)\.",
        done.stderr.strip(),
    )


@pytest.mark.slow
@pytest.mark.shared_data  # the ccpt group reads the CCPT files
def test_cpu_rehearsal_runs_every_step() -> None:
    """The script's CPU rehearsal, every step on SmolLM2 in float32 with 1 item per task
    and 8 tokens: lm-eval and Inspect (hf) on the bare tasks and on the CCPT tasks, and
    lm-eval judged by the local judge, each a fresh process loading the model; then, in the
    script's process, the local judge and CGGC's local verifier, 4 questions one at a time
    and in a batch. 200 s on 2 cores at load 4-7 (2026-12-06); alone at load 9-10 the same
    day 234 s: the five framework processes 29, 37, 58, 48 and 21 s (each its imports, a
    model load, and the prefill of CCPT's ~450-token prompts on the CPU), the judge part
    ~13 s. Tried, not kept: at 4 tokens the judged run's reply held no answer to ask the
    judge about (no question reached it); 2 judge questions instead of 4 saved 3 s; lm-eval
    indexing our tasks only moved its three runs by -7 to +1 s, within the load's noise."""
    command = [sys.executable, str(SCRIPT), "--cpu-rehearsal", "--judge-cpu-questions", "4"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines and all(line.startswith(LABEL) for line in lines)
    text = "\n".join(line.removeprefix(LABEL) for line in lines)
    for name in ("lm-eval hf bare", "lm-eval hf plugin", "Inspect hf bare", "Inspect hf plugin"):
        assert re.search(rf"^{name}: \d+\.\d s, 32 tokens generated", text, re.MULTILINE), name
    assert re.search(r"judged by the local judge: \d+\.\d s, \d+ judge questions", text)
    assert re.search(r"^local judge cpu float32 batch 16: 4 questions in .* questions/s; largest "
                     r"rating difference from the CPU float32 one-at-a-time run: 0\.000\d\d ",
                     text, re.MULTILINE)  # fmt: skip
    assert re.search(r"^local verifier cpu float32 batch 1: 4 questions in .* questions/s$",
                     text, re.MULTILINE)  # fmt: skip
    assert re.search(r"^local verifier cpu float32 batch 16: 4 questions in .* questions/s; "
                     r"verdicts that differ from the CPU float32 one-at-a-time run: 0 over 4 "
                     r"questions$", text, re.MULTILINE)  # fmt: skip
    summary = lines[-1].removeprefix(LABEL)
    assert summary.startswith("summary: lm-eval hf plugin/bare ") and "FAILED" not in summary
    assert "Inspect hf plugin/bare " in summary and "vllm" not in summary
    assert "local verifier cpu float32 batch 16 " in summary

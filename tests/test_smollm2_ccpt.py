"""`conceptcomb smollm2` prints a CCPT command that finishes (issue 54): SmolLM2 writes up
to 1,024 tokens per CCPT item, so the command caps the reply; run as printed (3 items, the
offline judge on the same folder), it ends within minutes on a CPU."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.leaderboard.eee_support import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]


def test_the_printed_ccpt_command_finishes_in_minutes(smollm2_folder: Path, tmp_path: Path) -> None:
    """The printed command, run: one lm_eval process loading SmolLM2 (batch 8) and the
    local judge on the same folder, 3 ccpt_pi_emergent items generated (up to 128 tokens)
    and judged. 74 s on 2 cores at load 4-7 (2026-12-06)."""
    code, printed = run_cli("smollm2", "--model-dir", str(smollm2_folder))
    assert code == 0, printed
    lines = printed.splitlines()
    (line,) = [line for line in lines if line.startswith("lm_eval") and "ccpt_pi_emergent" in line]
    assert "max_gen_toks=128" in line and "--limit 3" in line
    assert any("max_gen_toks=128" in note for note in lines if note.startswith("# CCPT"))
    command = [*shlex.split(line), "--output_path", str(tmp_path)]
    # 5 min 30 s on 2 cores at load average 14 (2026-12-02), lm-eval's start and the
    # judge's load included; uncapped, SmolLM2's 1,024-token replies ran past 10 minutes.
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next(tmp_path.rglob("results_*.json")).read_text())
    assert results["n-samples"]["ccpt_pi_emergent"]["effective"] == 3
    assert "E,judged" in results["results"]["ccpt_pi_emergent"]

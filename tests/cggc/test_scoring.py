"""CGGC's scoring core as lm-eval reaches it: the SPICE jar option travels in the docs."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from conceptcomb.cggc import lm_eval_hooks, metrics
from conceptcomb.cggc.scoring import score_doc
from conceptcomb.common.errors import ConfigError


def test_spice_jar_option_reaches_the_lm_eval_aggregation(
    built_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(metrics.SPICE_ENV, raising=False)
    if metrics.spice_status() is None:
        pytest.skip("SPICE's CoreNLP jars are installed here")
    docs = lm_eval_hooks.load_dataset("cggc_ood", data_dir=str(built_dir), spice_jars=str(tmp_path))
    doc = docs["test"][0]
    assert doc["spice_jars"] == str(tmp_path)
    values = lm_eval_hooks.process_results(doc, [" A dog wags its tail."])
    assert values["rouge2"] == score_doc(doc, " A dog wags its tail.").values["rouge2"]
    with pytest.raises(ConfigError, match=f"spice_jars={tmp_path}"):  # the folder was used
        lm_eval_hooks.agg_spice([values["spice"]])
    plain = lm_eval_hooks.load_dataset("cggc_ood", data_dir=str(built_dir))["test"][0]
    assert "spice_jars" not in plain  # no option, docs as before; SPICE reported unavailable
    spice_value = lm_eval_hooks.process_results(plain, ["x"])["spice"]
    assert math.isnan(lm_eval_hooks.agg_spice([spice_value]))


def test_building_the_task_starts_meteors_jvm(
    built_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """METEOR's jar loads its tables for seconds: started when the task is built (lm-eval's
    docs, Inspect's task), it loads while the model generates and the items are scored, not
    when the corpus score is asked; a reply scored first starts it too."""
    if shutil.which("java") is None:
        pytest.skip("no java here: METEOR is reported unavailable instead")
    from conceptcomb.cggc import meteor_server
    from conceptcomb.cggc.inspect_adapter import named_task

    # As a process that hosts no METEOR server and names none (a run's own): `stop_meteor`
    # stops its JVM (the session's server would keep it, and the run would score through it).
    monkeypatch.setattr(meteor_server, "_HOSTED", {})
    monkeypatch.delenv(meteor_server.ENV, raising=False)
    metrics.stop_meteor()
    monkeypatch.setenv("RANK", "1")  # lm-eval's other ranks never aggregate: no JVM there
    doc = lm_eval_hooks.load_dataset("cggc_ood", data_dir=str(built_dir))["test"][0]
    score_doc(doc, " A dog wags its tail.")
    assert metrics._meteor_scorer.cache_info().currsize == 0
    monkeypatch.setenv("RANK", "0")
    scored = score_doc(doc, " A dog wags its tail.")  # a reply scored first: started
    assert metrics._meteor_scorer.cache_info().currsize == 1
    metrics.stop_meteor()
    lm_eval_hooks.load_dataset("cggc_ood", data_dir=str(built_dir))  # lm-eval builds it
    assert metrics._meteor_scorer.cache_info().currsize == 1
    jvm = metrics._meteor_scorer().meteor_p
    assert jvm.poll() is None  # running, and the one the replies and the corpus score use
    score_doc(doc, " A dog wags its tail.")
    assert 0.0 <= metrics.meteor([scored.scored]) <= 100.0
    assert metrics._meteor_scorer().meteor_p is jvm
    metrics.stop_meteor()
    named_task("cggc_ood", {"data_dir": str(built_dir)})  # Inspect builds it
    assert metrics._meteor_scorer.cache_info().currsize == 1
    assert metrics._meteor_scorer().meteor_p.poll() is None

"""The test items a CGGC task leaves out (issue 35): said once per run, in terms of the
run's numbers, and not at all where no run happens (bundles, reports)."""

from __future__ import annotations

import logging

from conceptcomb.cggc import docs
from conceptcomb.cggc.docs import left_out_notice, task_pairs
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name


def test_the_notice_says_what_it_means_for_the_numbers() -> None:
    notice = left_out_notice(spec_by_name("cggc_ood"), 4, 15985, 0, 182, spec_by_name("cggc_id"))
    assert notice == (
        "cggc_ood scores 15,985 of the 16,167 test items, leaving out 182 that cggc_id cannot "
        "serve, so that both settings score the same items and their gap compares like with "
        "like: its metrics and item counts are over those 15,985 items. Nothing to do; this is "
        "the task's design, the same in every run."
    )
    assert left_out_notice(spec_by_name("cggc_id"), 4, 10, 0, 0, None) is None


def test_said_once_per_process_and_not_for_bundles(monkeypatch, caplog) -> None:
    monkeypatch.setattr(docs, "_ANNOUNCED", set())
    spec, options = spec_by_name("cggc_ood"), TaskOptions(test_type="B")
    with caplog.at_level(logging.WARNING, logger="conceptcomb"):
        task_pairs(spec, options, announce=False)  # a bundle's evidence: nothing said
        assert not caplog.records
        first = task_pairs(spec, options)
        again = task_pairs(spec, options)
    assert first == again
    notices = [r.getMessage() for r in caplog.records if "test items" in r.getMessage()]
    assert len(notices) == 1 and notices[0].startswith(f"cggc_ood scores {len(first):,} of the ")


def test_spice_without_its_jars_is_said_once(monkeypatch, tmp_path, caplog, capsys) -> None:
    """Through the log alone (a print beside it showed the line twice), once per process."""
    from conceptcomb.cggc import metrics

    monkeypatch.delenv(metrics.SPICE_ENV, raising=False)
    monkeypatch.setattr(metrics, "spice_lib", lambda: tmp_path)  # no jars there
    metrics._warn_once.cache_clear()
    records = [metrics.Scored("1", "a dog runs", ("a dog runs fast",), ("dog", "run"))]
    with caplog.at_level(logging.WARNING, logger="conceptcomb"):
        for _ in range(3):
            assert metrics.spice(records) != metrics.spice(records)  # NaN
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("SPICE")]
    assert len(said) == 1 and "spice_jars=DIR" in said[0]
    assert "SPICE" not in capsys.readouterr().out

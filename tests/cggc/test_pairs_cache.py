"""A CGGC task's (test item, demonstrations) pairs are drawn once per machine and read back
from the cache (`conceptcomb.cggc.docs.task_pairs`): the same pairs and the same notice,
drawn again whenever anything that decides the draw differs, the code that draws included."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from conceptcomb.cggc import docs
from conceptcomb.cggc.data import load_dataset
from conceptcomb.cggc.docs import cached_pairs_path, pairs_key, task_pairs
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name
from tests.cggc.conftest import conceptcomb_modules_run


def cache_file(name: str, options: TaskOptions) -> Path:
    return cached_pairs_path(pairs_key(spec_by_name(name), options, load_dataset(None)))


def drawing_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_drawing(*args: object) -> None:
        raise AssertionError("the pairs were drawn again")

    docs.demonstration_source.cache_clear()  # nothing this process drew before
    monkeypatch.setattr(docs, "_draw_pairs", no_drawing)


def test_drawn_once_then_read_back_the_same(fresh_cache: Path, monkeypatch, caplog) -> None:
    """cggc_ood with its partner cggc_id: 16,167 test items, 182 the partner cannot serve."""
    spec, options = spec_by_name("cggc_ood"), TaskOptions()
    monkeypatch.setattr(docs, "_ANNOUNCED", set())
    with caplog.at_level(logging.WARNING, logger="conceptcomb"):
        drawn = task_pairs(spec, options)
        path = cache_file("cggc_ood", options)
        assert path.is_file() and fresh_cache in path.parents
        drawing_forbidden(monkeypatch)
        monkeypatch.setattr(docs, "_ANNOUNCED", set())  # as in the next process
        assert task_pairs(spec, options) == drawn
    notices = [r.getMessage() for r in caplog.records if "test items" in r.getMessage()]
    assert len(notices) == 2 and notices[0] == notices[1], notices
    assert "leaving out 182 that cggc_id cannot serve" in notices[0]


def test_what_decides_the_draw_is_in_the_key(monkeypatch) -> None:
    dataset = load_dataset(None)

    def key(name: str = "cggc_ood", **options: object) -> str:
        return pairs_key(spec_by_name(name), TaskOptions(**options), dataset)  # type: ignore[arg-type]

    base = key()
    different = [key("cggc_id"), key("cggc_ood_easy2hard"), key(seed=1), key(k=5),
                 key(test_type="B"), key("cggc_ood_d13")]  # fmt: skip
    assert len({base, *different}) == len(different) + 1
    assert key(spice_jars="/somewhere") == base  # scoring, not drawing
    assert key("cggc_ood_verified") == base  # the same items, verified afterwards
    monkeypatch.setattr(docs, "drawing_code_sha256", lambda: "0" * 64)
    assert key() != base  # a change to the code that draws


def test_the_draw_runs_only_the_code_the_key_hashes(monkeypatch) -> None:
    """Every conceptcomb module whose code runs while the pairs are drawn is in
    DRAWING_CODE: a rule moved to another module still changes the key."""
    spec, options = spec_by_name("cggc_ood_easy2hard"), TaskOptions()
    dataset = load_dataset(None)
    first_items = docs.evaluated_items(spec, options, dataset)[:40]
    monkeypatch.setattr(docs, "evaluated_items", lambda *args: first_items)
    docs.demonstration_source.cache_clear()
    drawn: list[docs.DrawnPairs] = []
    try:
        ours = conceptcomb_modules_run(
            lambda: drawn.append(
                docs._draw_pairs(spec, options, dataset, docs.paired_spec(spec, options))
            )
        )
    finally:
        docs.demonstration_source.cache_clear()
    assert drawn[0].pairs
    assert "conceptcomb.cggc.demos" in ours
    assert ours <= set(docs.DRAWING_CODE), sorted(ours - set(docs.DRAWING_CODE))


def test_a_damaged_or_foreign_cache_is_drawn_again(fresh_cache: Path) -> None:
    spec, options = spec_by_name("cggc_ood_d22"), TaskOptions()
    drawn = task_pairs(spec, options)
    path = cache_file("cggc_ood_d22", options)
    stored = json.loads(path.read_text())
    for damaged in ("{not json", json.dumps({**stored, "pairs": [["no-such-item", []]]})):
        path.write_text(damaged)
        docs.demonstration_source.cache_clear()
        assert task_pairs(spec, options) == drawn  # drawn again, and written again
        assert json.loads(path.read_text()) == stored

"""The explorer's page data is gathered with the garbage collector paused
(`conceptcomb.common.collector.collector_paused`, tests/common/test_collector.py) and each
text cleaned once (`explore.data.Strings`):
the collector is on again afterwards, even when gathering fails, and the page is the same
byte for byte as without either."""

from __future__ import annotations

import contextlib
import gc
import json
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.leaderboard.explore import data, page


def test_gather_pauses_and_resumes_on_error(collector_on, monkeypatch, tmp_path: Path) -> None:
    seen = []

    def failing(path: Path, data_dir: str | None = None) -> Any:
        seen.append(gc.isenabled())
        raise OSError("unreadable")

    monkeypatch.setattr(data, "read_argument", failing)
    with pytest.raises(OSError, match="unreadable"):
        data.gather([tmp_path / "x.bundle.json"])
    assert seen == [False] and gc.isenabled()


class CleanedEachTime:
    """The string table as it was: every add cleaned, then looked up."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, value: Any) -> int:
        if value is None:
            return -1
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = data._clean_text(text)
        if text not in self.index:
            self.index[text] = len(self.texts)
            self.texts.append(text)
        return self.index[text]


def test_strings_cleaned_once_same_table() -> None:
    long = "x" * (data.MOST_CHARS + 5)
    values = [
        "a", "b", "a", None, ["a", 1], {"k": "v"}, ["a", 1],
        "lone \udcff", "lone \udcfe", "lone ?", "lone \udcff",  # three clean to one text
        long, long + "y", long, long[: data.MOST_CHARS], "", "",
    ]  # fmt: skip
    new, old = data.Strings(), CleanedEachTime()
    assert [new.add(v) for v in values] == [old.add(v) for v in values]
    assert new.texts == old.texts


@pytest.mark.slow
@pytest.mark.shared_data
def test_page_identical_with_the_collector_on(tmp_path: Path, monkeypatch) -> None:
    from tests.conftest import require_shared_data
    from tests.leaderboard.explore.ccpt_runs import ccpt_bundle

    require_shared_data()
    runs = [
        ccpt_bundle(tmp_path / "a", "model-a", lambda n, answer: answer),
        ccpt_bundle(tmp_path / "b", "model-b", lambda n, answer: "no idea" if n % 3 else answer),
    ]
    paused = page.html(data.gather(runs, n_resamples=200))
    monkeypatch.setattr(data, "collector_paused", contextlib.nullcontext)
    monkeypatch.setattr(data, "Strings", CleanedEachTime)
    assert page.html(data.gather(runs, n_resamples=200)) == paused

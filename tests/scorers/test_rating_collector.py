"""The garbage collector while a rating loop runs (`conceptcomb.scorers.rating.quiet_collector`):
the objects that predate the loop frozen and the young threshold raised during it, the
collector as it was after it, and left alone where the process manages it.

A judge over the real loopback server records the collector's state from inside the loop.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_base import JudgeReply
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import RATING_YOUNG_THRESHOLD, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.judge_server import LoopbackServer, deterministic_rating

PAIRS = [(f"concept {i}", f"property {i % 5}") for i in range(20)]
PROMPTS = [relevance_prompt(c, p) for c, p in PAIRS]


class Node:
    """An object that can be in a reference cycle and be watched through a weak reference."""

    other: Node | None = None


class WatchedJudge(OpenAIJudge):
    """The API judge, noting the collector's state each time it is asked."""

    seen: list[tuple[int, tuple[int, int, int], bool]]
    fail = False  # raise on the fifth question, as a bug in a judge would

    async def ask(self, prompt: str) -> JudgeReply:
        self.seen.append((gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()))
        if self.fail and len(self.seen) == 5:
            raise RuntimeError("a bug in the judge")
        return await super().ask(prompt)


def watched(seen: list, fail: bool = False) -> Callable[[JudgeSettings], WatchedJudge]:
    def build(settings: JudgeSettings) -> WatchedJudge:
        judge = WatchedJudge(settings)
        judge.seen, judge.fail = seen, fail
        return judge

    return build


def settings_for(server: LoopbackServer) -> JudgeSettings:
    return JudgeSettings.resolve(
        {"judge": "openai", "judge_base_url": server.base_url, "judge_cache": "off"}
    )


@pytest.fixture
def collector() -> Iterator[tuple[int, int, int]]:
    """The collector's settings before the test, restored after whatever it did."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    assert gc.get_freeze_count() == 0
    yield threshold
    gc.unfreeze()
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_the_loop_runs_frozen_with_a_raised_threshold_and_restores_them(
    judge_server: LoopbackServer, fresh_cache: Path, collector: tuple[int, int, int]
) -> None:
    settings, seen, alive = settings_for(judge_server), [], []
    gc.collect()  # so that no young collection comes before the loop's freeze
    node = Node()
    node.other = node  # cyclic garbage that predates the loop: frozen during it
    gone = weakref.ref(node)
    del node

    def build(settings: JudgeSettings) -> WatchedJudge:
        alive.append(gone() is not None)
        return watched(seen)(settings)

    replies, usage, _ = rate_prompts(settings, PROMPTS, build=build)
    assert alive == [True]
    assert len(seen) == len(PROMPTS) and usage.failures == 0
    for frozen, threshold, enabled in seen:
        assert frozen > 0 and enabled
        assert threshold == (RATING_YOUNG_THRESHOLD, *collector[1:])
    for (concept, prop), prompt in zip(PAIRS, PROMPTS, strict=True):
        assert replies[prompt].rating == deterministic_rating(concept.capitalize(), prop)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == collector
    gc.collect()
    assert gone() is None  # unfrozen after the loop: collected again


def test_a_loop_that_raises_restores_the_collector(
    judge_server: LoopbackServer, fresh_cache: Path, collector: tuple[int, int, int]
) -> None:
    seen: list = []
    with pytest.raises(RuntimeError, match="a bug in the judge"):
        rate_prompts(settings_for(judge_server), PROMPTS, build=watched(seen, fail=True))
    assert seen and all(frozen > 0 for frozen, _, _ in seen)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == collector


def test_a_judge_that_raises_leaves_no_exception_unretrieved(
    judge_server: LoopbackServer,
    fresh_cache: Path,
    collector: tuple[int, int, int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The error reaches the caller, and nothing is logged later when the loop's objects are
    collected (that log, inside an unrelated `ast.parse` on Python 3.11, failed the parse)."""
    with pytest.raises(RuntimeError, match="a bug in the judge"):
        rate_prompts(settings_for(judge_server), PROMPTS, build=watched([], fail=True))
    gc.collect()
    assert [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()] == []


def test_a_process_that_froze_objects_keeps_its_settings(
    judge_server: LoopbackServer, fresh_cache: Path, collector: tuple[int, int, int]
) -> None:
    gc.freeze()
    seen: list = []
    rate_prompts(settings_for(judge_server), PROMPTS, build=watched(seen))
    assert {(threshold, enabled) for _, threshold, enabled in seen} == {(collector, True)}
    assert all(frozen > 0 for frozen, _, _ in seen)
    assert gc.get_freeze_count() > 0  # still frozen: the process unfreezes them


def test_a_process_that_turned_the_collector_off_keeps_it_off(
    judge_server: LoopbackServer, fresh_cache: Path, collector: tuple[int, int, int]
) -> None:
    gc.disable()
    seen: list = []
    rate_prompts(settings_for(judge_server), PROMPTS, build=watched(seen))
    assert set(seen) == {(0, collector, False)}
    assert not gc.isenabled() and gc.get_threshold() == collector

"""`collector_paused`: the garbage collector off inside, as it was after (on again after an
error, left off where it was off), as a context manager and as a decorator."""

from __future__ import annotations

import gc

import pytest

from conceptcomb.common.collector import collector_paused, heap_frozen


def test_paused_inside_and_on_again_after(collector_on) -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_again_after_an_error(collector_on) -> None:
    with pytest.raises(ZeroDivisionError), collector_paused():
        assert not gc.isenabled()
        _ = 1 / 0
    assert gc.isenabled()


def test_left_off_where_it_was_off(collector_on) -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_as_a_decorator(collector_on) -> None:
    @collector_paused()
    def build() -> bool:
        return gc.isenabled()

    assert build() is False and build() is False
    assert gc.isenabled()


def test_heap_frozen_inside_and_unfrozen_after() -> None:
    kept = [[] for _ in range(10)]  # objects that exist before
    with heap_frozen() as froze:
        assert froze and gc.get_freeze_count() >= len(kept)
        with heap_frozen() as again:  # frozen already: left alone
            assert not again
        gc.collect()  # walks only the young objects
    assert gc.get_freeze_count() == 0

"""Python's cyclic garbage collector, paused while a large structure is built.

Building makes millions of small objects that live on and hold no reference cycle worth
collecting: CGGC's data parsed (~50 MB of JSON, ~38k items), a task's ~16k docs or samples,
the explorer's page data (every item's evidence of every run). Each time such a build grows
the heap by a quarter, the collector walks the whole heap (a full collection) for nothing.
Measured: over half the CPU of building a CGGC task (lm-eval's docs of cggc_ood, 2.94 ->
1.32 s: `benchmarks/cggc_build.py`), ~23 s of the 118 s of tests/cggc's fast tests, a large
part of writing the explorer's page on 10 runs of the full cggc_ood (docs/performance.md).
Reference counting still frees what it can; the collector runs again when the pause ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside (also as a decorator: ``@collector_paused()``), then on
    again, error or not, if it was on before: nested pauses end with the outermost."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@contextmanager
def heap_frozen() -> Iterator[bool]:
    """The objects that exist now frozen while inside (`gc.freeze`: no collection walks them,
    not even an explicit ``gc.collect()``), unfrozen after; yields whether it froze them. A
    process that froze objects itself manages them and is left alone (False)."""
    if gc.get_freeze_count():
        yield False
        return
    gc.freeze()
    try:
        yield True
    finally:
        gc.unfreeze()

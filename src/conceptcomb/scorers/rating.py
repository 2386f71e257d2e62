"""Asking a judge many questions: dedup, cache, bounded concurrency, usage accounting.

`RatingSession` is what both framework adapters use. Identical prompts in one session are
asked once (concurrent duplicates wait for the first), answered prompts come from the disk
cache, at most ``judge_concurrency`` requests are in flight per judge endpoint, and every
rating is committed to the cache the moment it arrives (`CacheWriter`); a request keeps its
slot until its rating is committed, so what a killed run loses is at most what was in
flight.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from tqdm.auto import tqdm

from conceptcomb.common.collector import heap_frozen
from conceptcomb.scorers.judge_base import Judge, JudgeReply
from conceptcomb.scorers.judge_cache import JudgeCache, Row
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import build_judge
from conceptcomb.scorers.local_judge import check_local_judge
from conceptcomb.scorers.ranks import QuestionShare, claim_share

log = logging.getLogger("conceptcomb.judge")
T = TypeVar("T")


@dataclass
class JudgeUsage:
    judge: str = ""  # the judge's identity (endpoint without credentials, model, settings)
    questions: int = 0  # distinct prompts this session needed
    requests: int = 0  # requests made by us (re-asks of malformed answers included)
    http_requests: int | None = None  # on the wire, the HTTP client's own retries included
    cache_hits: int = 0
    deduplicated: int = 0  # repeats of a prompt already asked in this session
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_error: str | None = None  # why the latest failed question failed
    processes: int = 1  # the processes that shared the asking (a data-parallel run)

    def combine(self, part: JudgeUsage) -> None:
        """Add what another process asked for its share (questions and repeats aside)."""
        self.requests += part.requests
        if part.http_requests is not None:
            self.http_requests = (self.http_requests or 0) + part.http_requests
        self.cache_hits += part.cache_hits
        self.failures += part.failures
        self.input_tokens += part.input_tokens
        self.output_tokens += part.output_tokens
        self.last_error = part.last_error or self.last_error

    def add(self, reply: JudgeReply) -> None:
        self.requests += reply.requests
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        if not reply.ok:
            self.failures += 1
            self.last_error = reply.error

    @property
    def all_failed(self) -> bool:
        """Every question failed: nothing the judge should have rated was rated."""
        return self.questions > 0 and self.failures >= self.questions

    def failure_warning(self) -> str | None:
        """One loud line when questions failed (their share and the last error), else None."""
        if not self.failures:
            return None
        share = f"{self.failures} of {self.questions} judge questions failed"
        if self.all_failed:
            return (
                f"WARNING: every judge question failed ({share}, 100%): no judged metric could "
                f"be computed; last error: {self.last_error}"
            )
        return (
            f"WARNING: {share} ({self.failures / self.questions:.1%}); their items are left "
            f"out of the means and counted in the failure counts; last error: {self.last_error}"
        )

    def summary(self) -> str:
        tokens = (
            f", tokens in/out {self.input_tokens}/{self.output_tokens}"
            if self.input_tokens or self.output_tokens
            else ""
        )
        retries = (
            f" ({self.http_requests - self.requests} transport retries)"
            if self.http_requests and self.http_requests > self.requests
            else ""
        )
        processes = f" (asked by {self.processes} processes)" if self.processes > 1 else ""
        return (
            f"judge usage [{self.judge}]: {self.questions} distinct questions{processes}, "
            f"{self.requests} requests sent{retries}, {self.cache_hits} cache hits, "
            f"{self.deduplicated} duplicates asked once, {self.failures} failures{tokens}"
        )

    def as_dict(self) -> dict[str, str | int | None]:
        return {
            "judge": self.judge,
            "questions": self.questions,
            "requests": self.requests,
            "http_requests": self.http_requests,
            "cache_hits": self.cache_hits,
            "deduplicated": self.deduplicated,
            "failures": self.failures,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "last_error": self.last_error,
        }


class CacheWriter:
    """Commits each rating to the disk cache as it arrives; `write` returns once it is on disk.

    When SQLite's write lock is free (almost always: a WAL commit takes tens of microseconds)
    the rating is committed at once on the event loop (`JudgeCache.try_put_many`): no thread
    hop and no loop turn, which would be time the rating's request slot stays taken. When
    another process holds the lock, and every `INLINE_RUN` commits (so that the write-ahead
    log is copied into the database, with its fsync, off the loop), the commit goes to a
    worker thread; ratings that arrive meanwhile share the next commit there.
    """

    INLINE_RUN = 256

    def __init__(self, cache: JudgeCache, identity: str) -> None:
        self.cache = cache
        self.identity = identity
        self._queued: list[tuple[Row, asyncio.Future[None]]] = []
        self._committing = False
        self._inline = 0  # commits on the loop since the last one in the thread

    async def write(
        self, prompt: str, rating: float, reply: str, snapshot: str | None = None
    ) -> None:
        row: Row = (prompt, rating, reply, snapshot)
        if (
            not self._committing
            and self._inline < self.INLINE_RUN
            and self.cache.try_put_many(self.identity, [row])
        ):
            self._inline += 1
            return
        self._inline = 0
        done = asyncio.get_running_loop().create_future()
        self._queued.append((row, done))
        if not self._committing:
            self._commit_queued()
        await done

    def _commit_queued(self) -> None:
        batch, self._queued = self._queued, []
        self._committing = True
        rows = [row for row, _ in batch]
        work = asyncio.get_running_loop().run_in_executor(
            None, self.cache.put_many, self.identity, rows
        )
        work.add_done_callback(lambda finished: self._committed(finished, batch))

    def _committed(self, work: asyncio.Future[None], batch: list[Any]) -> None:
        self._committing = False
        error = None if work.cancelled() else work.exception()
        for _, done in batch:
            if done.done():  # its writer was cancelled
                continue
            if work.cancelled():
                done.cancel()
            elif error is not None:  # e.g. the disk is full: every writer of the batch sees it
                done.set_exception(error)
            else:
                done.set_result(None)
        if self._queued:
            self._commit_queued()


class RatingSession:
    """One judge, one cache, one event loop."""

    def __init__(
        self,
        judge: Judge,
        cache: JudgeCache | None,
        concurrency: int = 16,
        progress: tqdm | None = None,
    ) -> None:
        self.judge = judge
        self.cache = cache
        self.usage = JudgeUsage(judge=judge.identity)
        self.progress = progress
        # ``concurrency`` per endpoint (replicas of the judge each take that many); a local
        # judge takes enough to fill its batches.
        self._slots = judge.request_slots(concurrency)
        self._semaphore = asyncio.Semaphore(self._slots)
        self._writer = CacheWriter(cache, judge.identity) if cache is not None else None
        self._answers: dict[str, asyncio.Future[JudgeReply]] = {}
        self._prefetched: dict[str, JudgeReply] = {}
        self._looked_up: set[str] = set()  # prompts the last prefetch found not cached
        self._preflight: asyncio.Future[None] | None = None

    async def preflight(self) -> None:
        """The judge's preflight, once per session however many callers wait for it."""
        if self._preflight is None:
            self._preflight = asyncio.ensure_future(self.judge.preflight())
        await asyncio.shield(self._preflight)

    async def rate(self, prompt: str) -> JudgeReply:
        pending = self._answers.get(prompt)
        if pending is not None:
            self.usage.deduplicated += 1
            return await asyncio.shield(pending)
        future: asyncio.Future[JudgeReply] = asyncio.get_running_loop().create_future()
        self._answers[prompt] = future
        self.usage.questions += 1
        try:
            reply = self._prefetched.pop(prompt, None)
            if reply is not None:
                self.usage.cache_hits += 1
            else:
                reply = await self._answer(prompt)
        except BaseException as err:
            future.set_exception(err)
            # Marked retrieved: raised to this caller below, and to any caller waiting on the
            # same prompt. Unmarked, its collection logs "Future exception was never
            # retrieved", and on Python 3.11 that log's traceback, printed by a collection that
            # fell inside an `ast.parse`, fails the parse ("AST constructor recursion depth
            # mismatch", python/cpython#106905).
            future.exception()
            self._answers.pop(prompt, None)
            raise
        future.set_result(reply)
        if self.progress is not None:
            self.progress.update(1)
        return reply

    async def rate_all(self, prompts: Iterable[str]) -> dict[str, JudgeReply]:
        asked = list(prompts)
        unique = list(dict.fromkeys(asked))
        self.usage.deduplicated += len(asked) - len(unique)
        await self._prefetch(unique)
        # As many workers as requests may be in flight, taking the prompts in order: not one
        # task per prompt, whose creation alone delays the first requests by a fraction of a
        # second when a task asks thousands of questions.
        replies: dict[str, JudgeReply] = {}
        queue = iter(unique)

        async def worker() -> None:
            for prompt in queue:
                replies[prompt] = await self.rate(prompt)

        await asyncio.gather(*(worker() for _ in range(min(self._slots, len(unique)))))
        return {prompt: replies[prompt] for prompt in unique}

    async def _prefetch(self, prompts: list[str]) -> None:
        """Answer every cached prompt with one lookup, before any request goes out."""
        fresh = [prompt for prompt in prompts if prompt not in self._answers]
        if self.cache is None or len(fresh) < 2:
            return
        hits = await asyncio.to_thread(self.cache.get_many, self.judge.identity, fresh)
        named = await asyncio.to_thread(self.cache.snapshots, self.judge.identity, list(hits))
        for prompt, (rating, reply) in hits.items():
            self._prefetched[prompt] = JudgeReply(
                rating=rating, reply=reply, from_cache=True, snapshot=named.get(prompt)
            )
        self._looked_up.update(prompt for prompt in fresh if prompt not in hits)

    async def _answer(self, prompt: str) -> JudgeReply:
        """From the cache, else from the judge (then cached at once)."""
        if prompt in self._looked_up:  # the prefetch just found it missing: no second lookup
            self._looked_up.discard(prompt)
        elif self.cache is not None:
            hit = await asyncio.to_thread(self.cache.get, self.judge.identity, prompt)
            if hit is not None:
                self.usage.cache_hits += 1
                named = await asyncio.to_thread(self.cache.snapshots, self.judge.identity, [prompt])
                snapshot = named.get(prompt)
                return JudgeReply(rating=hit[0], reply=hit[1], from_cache=True, snapshot=snapshot)
        async with self._semaphore:
            reply = await self.judge.ask(prompt)
            self.usage.add(reply)
            if reply.ok and self._writer is not None:
                assert reply.rating is not None
                # Committed before the slot is freed: what is not on disk yet is in flight.
                await self._writer.write(prompt, reply.rating, reply.reply, reply.snapshot)
        if not reply.ok:  # reported once per run, with the share: `JudgeUsage.failure_warning`
            log.debug("judge failed on a prompt after retries: %s", reply.error)
        return reply


def open_cache(settings: JudgeSettings) -> JudgeCache | None:
    if (settings.judge_cache or "").lower() in {"off", "none", "0", "false"}:
        return None
    return JudgeCache(settings.judge_cache or None)


# Container allocations, net of deallocations, between two collections of the young
# generation while a rating loop runs (Python's default is 700): see `quiet_collector`.
RATING_YOUNG_THRESHOLD = 10_000


@contextmanager
def quiet_collector() -> Iterator[None]:
    """The cyclic garbage collector kept off the objects that need no collecting while a
    rating loop runs; its settings are restored after.

    With hundreds of requests in flight the young generation is full of live request state
    (aiohttp's requests, responses, tasks, futures): at Python's default threshold each
    collection walks it again, 50-150 times per 8,000 requests, and the survivors pile up
    until a full collection walks the whole heap while every request waits. A framework's
    process has a large heap (~270,000 objects once Inspect's judge has run; ~450,000 with
    torch, transformers and pandas imported): 150-250 ms per full collection. So the objects that
    predate the loop are frozen (`gc.freeze`: not walked until unfrozen) and the young
    threshold is raised to `RATING_YOUNG_THRESHOLD`; cyclic garbage made meanwhile is still
    collected. A process that froze objects itself, or turned the collector off, manages it
    and is left alone.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    threshold = gc.get_threshold()
    with heap_frozen():
        gc.set_threshold(max(threshold[0], RATING_YOUNG_THRESHOLD), *threshold[1:])
        try:
            yield
        finally:
            gc.set_threshold(*threshold)


def new_judge_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop where installed (a dependency everywhere but Windows), else asyncio's.

    At hundreds of judge requests in flight the one loop that sends them all is CPU-bound
    (aiohttp's work and the loop's own; ours is a sixth), and uvloop's costs 10-20% less CPU
    per request: 1.5-2 points of the ideal rate at 256 in flight on 2 cores
    (docs/performance.md, "Against 033d064"). The same asyncio API: nothing else changes.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _run(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=new_judge_loop) as runner:  # asyncio.run's steps
        return runner.run(coro)


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even inside a running event loop, on
    the judge's event loop (`new_judge_loop`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(coro)
    result: dict[str, Any] = {}

    def runner() -> None:
        try:
            result["value"] = _run(coro)
        except BaseException as err:  # re-raised in the caller's thread
            result["error"] = err

    thread = threading.Thread(target=runner, name="conceptcomb-judge")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


# Judges that passed their preflight in this process (lm-eval builds several tasks).
_CHECKED: set[tuple[str, str]] = set()  # (judge identity, key digest) preflighted


def preflight_judge(settings: JudgeSettings) -> None:
    """Before any generation or the first item: one small request to the configured judge,
    `JudgeError` (one line: endpoint, model, fix) when it cannot work. ``judge=local``:
    its device must exist (`ConfigError`); ``judge=off`` has nothing to check."""
    if settings.judge == "local":
        check_local_judge(settings)
        return
    if settings.judge != "openai":
        return
    settings.check_credentials()

    # Checked once per process per endpoint, model AND key: a later run with another key is
    # checked again (a new server on the same URL, model and key is not). Only a digest of
    # the key is kept.
    key = os.environ.get(settings.judge_api_key_env) or ""
    key_digest = hashlib.sha256(f"{settings.judge_api_key_env}={key}".encode()).hexdigest()

    async def go() -> str:
        judge = build_judge(settings)
        try:
            if (judge.identity, key_digest) not in _CHECKED:
                await judge.preflight()
            return judge.identity
        finally:
            await judge.aclose()

    _CHECKED.add((run_coroutine(go()), key_digest))


def rate_prompts(
    settings: JudgeSettings,
    prompts: Iterable[str],
    description: str = "judging",
    build: Callable[[JudgeSettings], Judge] = build_judge,
) -> tuple[dict[str, JudgeReply], JudgeUsage, str]:
    """Rate every prompt (sync entry point for lm-eval and the CLI) with the judge ``build``
    makes (the relevance judge by default; the yes/no verifier passes its own).

    Returns the replies by prompt, the usage, and the judge identity. Inside an lm-eval
    judge filter of a run of several processes (`conceptcomb.scorers.ranks`), the processes
    ask each distinct question once between them, and the usage is the run's total.
    """
    asked = list(prompts)
    share = claim_share()
    if share is None:
        replies, usage, identity = _rate_here(settings, asked, description, build)
    else:
        replies, usage, identity = _rate_shared(share, settings, asked, description, build)
    log.info(usage.summary())
    return replies, usage, identity


def _rate_shared(
    share: QuestionShare,
    settings: JudgeSettings,
    asked: list[str],
    description: str,
    build: Callable[[JudgeSettings], Judge],
) -> tuple[dict[str, JudgeReply], JudgeUsage, str]:
    """This process's share of the run's distinct questions asked here, every process's
    answers pooled; the answers to this process's questions, and the run's usage."""
    unique = list(dict.fromkeys(asked))
    split = share.split(unique, len(asked))
    results = share.answers(lambda: _rate_here(settings, split.mine, description, build))
    pooled = {prompt: reply for replies, _, _ in results for prompt, reply in replies.items()}
    identity = results[0][2]
    usage = JudgeUsage(judge=identity, questions=split.distinct, processes=split.processes)
    usage.deduplicated = split.asked - split.distinct
    for _, part, _ in results:
        usage.combine(part)
    return {prompt: pooled[prompt] for prompt in unique}, usage, identity


def _rate_here(
    settings: JudgeSettings,
    asked: list[str],
    description: str,
    build: Callable[[JudgeSettings], Judge],
) -> tuple[dict[str, JudgeReply], JudgeUsage, str]:
    unique = list(dict.fromkeys(asked))

    async def go() -> tuple[dict[str, JudgeReply], JudgeUsage, str]:
        judge = build(settings)
        cache = open_cache(settings)
        with tqdm(total=len(unique), desc=description, unit="rating") as bar:
            session = RatingSession(judge, cache, settings.judge_concurrency, bar)
            try:
                replies = await session.rate_all(asked)
            finally:
                session.usage.http_requests = getattr(judge, "http_requests", None)
                await judge.aclose()
                if cache is not None:
                    cache.close()
        return replies, session.usage, judge.identity

    with quiet_collector():
        return run_coroutine(go())

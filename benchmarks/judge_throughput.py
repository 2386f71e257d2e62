"""Judge throughput, deduplication and fault tolerance, measured in one run.

Starts the loopback OpenAI-compatible judge in its own process with a fixed added latency,
scores a few thousand synthetic CCPT property-induction replies through the same code path
as lm-eval's judge filter (`conceptcomb.ccpt.scoring.score_replies`), and prints:

* requests per second against the ideal concurrency / latency, as a ratio;
* how many judge questions deduplication saved;
* whether a run with injected faults (429 with Retry-After, 500, stalled responses past the
  client timeout) ends with the same metrics as the clean run, and with zero failures.

    python benchmarks/judge_throughput.py [--items 3000] [--concurrency 32] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from conceptcomb.ccpt.data import CcptItem
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.scoring import score_replies
from conceptcomb.ccpt.tasks import CcptTaskSpec
from conceptcomb.scorers.judge_settings import JudgeSettings

SPEC = CcptTaskSpec("pi_emergent")


@dataclass
class Run:
    seconds: float
    requests: int
    http_requests: int
    questions: int
    failures: int
    metrics: dict[str, float]


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


def start_server(latency: float, faults: dict[str, float]) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "conceptcomb.testing.judge_server", "--port", "0",
               "--latency", str(latency)]  # fmt: skip
    for flag, value in faults.items():
        command += [f"--{flag}", str(value)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline() if server.stdout else ""
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        server.kill()
        raise RuntimeError(f"the judge server did not start: {line!r}")
    return server, match.group(1)


def score(items, replies, concurrency: int, latency: float, faults: dict[str, float]) -> Run:
    server, base_url = start_server(latency, faults)
    try:
        settings = JudgeSettings.resolve(
            {
                "judge_base_url": base_url,
                "judge_concurrency": concurrency,
                "judge_cache": "off",  # measure the judge, not the cache
                "judge_timeout": 1.0,
                "judge_max_retries": 6,
            }
        )
        start = time.perf_counter()
        scores, usage = score_replies(SPEC, items, replies, settings)
        seconds = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait()
    assert usage is not None
    metrics = {k: v.value for k, v in aggregate(SPEC, [s.metrics for s in scores]).items()}
    return Run(seconds, usage.requests, usage.http_requests or 0, usage.questions,
               usage.failures, metrics)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("CONCEPTCOMB_CACHE_DIR", tempfile.mkdtemp(prefix="judge-bench-"))

    items, replies = synthetic_task(args.items, args.seed)
    asked = 3 * len(items)
    clean = score(items, replies, args.concurrency, args.latency, {})
    faults = {"rate-limited": 0.04, "server-error": 0.04, "stalled": 0.02, "stall-seconds": 3.0}
    faulty = score(items, replies, args.concurrency, args.latency, faults)

    ideal = args.concurrency / args.latency
    achieved = clean.requests / clean.seconds
    same = all(abs(faulty.metrics[k] - v) < 1e-9 for k, v in clean.metrics.items())
    print(f"items: {len(items)}, judge questions: {asked}, latency {args.latency * 1000:.0f} ms, "
          f"{args.concurrency} in flight")  # fmt: skip
    print(f"deduplication: {clean.questions} distinct questions asked for {asked} "
          f"({1 - clean.questions / asked:.1%} saved)")  # fmt: skip
    print(f"clean run: {clean.requests} requests in {clean.seconds:.2f} s = {achieved:.0f} req/s; "
          f"ideal {ideal:.0f} req/s; ratio {achieved / ideal:.2f}")  # fmt: skip
    print(f"faulty run (10% of first attempts: 4% 429, 4% 500, 2% stalled): "
          f"{faulty.http_requests - faulty.requests} transport retries, "
          f"{faulty.failures} failures, {faulty.seconds:.2f} s")  # fmt: skip
    print(
        f"faulty metrics equal clean metrics: {same} "
        f"(E {clean.metrics['E']:.4f} vs {faulty.metrics['E']:.4f})"
    )


if __name__ == "__main__":
    main()

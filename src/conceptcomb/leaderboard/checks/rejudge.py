"""``validate-bundle --rejudge N``: does the judge a bundle names give the ratings it stores?

A seeded random sample of N of a judged task's distinct judge questions (those with a stored
rating) is asked again, by the judge the options name or, without them, by the judge the
bundle names where it can be reached (the local judge offline; an API judge at a public
endpoint the bundle records), and the new ratings are compared with the stored ones: the
share equal, the share within one point, the mean absolute difference with its 95% t
interval, Spearman's rho (`conceptcomb.leaderboard.statistics.agreement`).

The bundle fails when the mean absolute difference is beyond `TOLERANCE` with 95%
confidence (the lower end of its interval above it): docs/judge.md gives the measurement
behind it, how often the same question asked again changes its rating.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conceptcomb.common.errors import ConfigError
from conceptcomb.leaderboard.checks.agreement import judge_label, judge_record, task_questions
from conceptcomb.leaderboard.statistics.agreement import spearman
from conceptcomb.leaderboard.statistics.stats import Interval, mean_interval
from conceptcomb.scorers.judge_base import snapshot_of
from conceptcomb.scorers.judge_identity import describe

# Points on the judge's 1-10 scale: the largest mean |re-asked - stored| a bundle may show
# (beyond it with 95% confidence, it fails). Asked again, neither loopback judge nor the local
# judge changed a rating (100 questions each, docs/judge.md, "Is this bundle's judge the one
# it names?"), so the tolerance is set by what it must tell apart: an API judge at
# temperature 0 is not bit-stable, and 0.5 lets half the questions move by one point, while
# a judge of another model differed by 2.9 to 3.5 points on average (the local judge and the
# loopback hash judge against GPT-4o's recorded ratings).
TOLERANCE = 0.5
SEED = 0


@dataclass
class Rejudged:
    """One task's sample of questions asked again."""

    task: str
    stored_judge: str  # the judge the bundle names
    judge: str = ""  # the judge asked
    same: bool = False  # the judge asked is the one the bundle names
    asked: int = 0
    failures: int = 0
    stored: list[float] = field(default_factory=list)
    new: list[float] = field(default_factory=list)
    usage: str = ""
    # The snapshots the bundle's ratings and the answers asked now came from, where named.
    stored_snapshot: str | None = None
    snapshot: str | None = None

    @property
    def equal(self) -> float:
        return float(np.mean(np.isclose(self.stored, self.new, rtol=0, atol=1e-3)))

    @property
    def within_one(self) -> float:
        return float(np.mean(np.abs(np.subtract(self.new, self.stored)) <= 1.0 + 1e-9))

    @property
    def gaps(self) -> np.ndarray:
        return np.abs(np.subtract(self.new, self.stored))

    @property
    def difference(self) -> Interval | None:
        """The mean |difference| with its t interval (None for one question)."""
        return mean_interval(self.gaps)

    @property
    def rho(self) -> float | None:
        if len(self.new) < 3 or len(set(self.new)) < 2 or len(set(self.stored)) < 2:
            return None
        value = spearman(np.array(self.stored), np.array(self.new))
        return value if math.isfinite(value) else None

    @property
    def ok(self) -> bool:
        diff = self.difference
        if diff is None or diff.lower is None:  # one question: its own difference
            beyond = bool(len(self.gaps)) and float(self.gaps.mean()) > TOLERANCE
        else:
            beyond = diff.lower > TOLERANCE
        return not self.failures and bool(self.new) and not beyond

    def line(self) -> str:
        if not self.new:
            return f"{self.task}: none of the {self.asked} questions asked again got a rating"
        diff = self.difference
        interval = (
            f"{diff.value:.2f} [{diff.lower:.2f}, {diff.upper:.2f}]"
            if diff is not None and diff.lower is not None and diff.upper is not None
            else f"{float(self.gaps.mean()):.2f}"
        )
        rho = "–" if self.rho is None else f"{self.rho:.2f}"
        verdict = (
            f"agrees with the stored ratings (tolerance: mean |difference| {TOLERANCE} point)"
            if self.ok
            else "DISAGREES with the stored ratings beyond the tolerance (mean |difference| "
            f"{TOLERANCE} point, 95% sure)"
        )
        failed = f", {self.failures} failed" if self.failures else ""
        whom = "the judge the bundle names" if self.same else "NOT the judge the bundle names"
        return (
            f"{self.task}: {len(self.new)} of the bundle's judge questions asked again "
            f"(seeded sample{failed}) of {self.judge} ({whom}: {self.stored_judge}): "
            f"same rating {100 * self.equal:.1f}%, within one point {100 * self.within_one:.1f}%"
            f", mean |difference| {interval}, Spearman {rho}: {verdict}{self._snapshots()}"
        )

    def _snapshots(self) -> str:
        """A note where the API answers as another snapshot than the one that rated the
        bundle: a difference may be the snapshot's, not the submitter's."""
        if not self.stored_snapshot or not self.snapshot or self.snapshot == self.stored_snapshot:
            return ""
        return (
            f"; note: the API now answers as {self.snapshot}, the bundle's ratings came from "
            f"{self.stored_snapshot}"
        )


def sample_questions(
    asked: list[list[tuple[str, float | None]]], n: int, seed: int = SEED
) -> list[tuple[str, float]]:
    """A seeded random sample of n of the distinct questions with a stored rating (all of
    them where there are fewer), in a stable order."""
    stored: dict[str, float] = {}
    for rows in asked:
        for prompt, rating in rows:
            if rating is not None and math.isfinite(float(rating)):
                stored.setdefault(prompt, float(rating))
    prompts = sorted(stored)
    chosen = prompts if len(prompts) <= n else random.Random(seed).sample(prompts, n)
    return [(prompt, stored[prompt]) for prompt in chosen]


def judged_records(tasks: list[Any]) -> list[dict[str, Any]]:
    """The task records of a bundle whose benchmark judges them."""
    from conceptcomb.benchmarks import get, known_tasks

    found = []
    for record in tasks:
        ours = isinstance(record, dict) and record.get("task") in known_tasks()
        if ours and get(str(record["benchmark"])).judged(str(record["task"])):
            found.append(record)
    return found


def bundle_judge_settings(judge: Any, options: Any, named: bool) -> Any:
    """The settings of the judge to ask: ``options`` (the ``--judge-*`` options) where they
    name a judge (``named``); else the judge the bundle names, where it can be reached (the
    local judge; an API judge at the public endpoint its record keeps), with the options'
    cache, device and retries (ConfigError saying what to pass where it cannot be)."""
    from dataclasses import replace

    from conceptcomb.scorers.judge_identity import cli_options, judge_options, needs_base_url

    if named:
        return options
    record = judge_record(judge)
    if record is None:
        raise ConfigError(
            "the bundle names no judge for this task: name one with the --judge-* options."
        )
    try:
        asked = judge_options(record)
    except ValueError as err:
        raise ConfigError(f"the bundle's judge cannot be asked here: {err}.") from None
    if needs_base_url(record):
        raise ConfigError(
            f"the bundle's judge, {judge_label(judge)}, was served from a host the bundle "
            f"does not record (a private one): name it with {cli_options(record)}."
        )
    return replace(options, **{"judge_model": None, "judge_base_url": None, **asked})


def _same(identity: str, stored: Any) -> bool:
    """The judge asked (its identity) is the one the bundle names, whatever snapshot the
    API reported for either."""
    from dataclasses import replace

    from conceptcomb.scorers.judge_identity import from_identity, same_judge

    record = judge_record(stored)
    if record is None:
        return False
    asked = replace(from_identity(identity), snapshot=None)
    return same_judge(asked, replace(record, snapshot=None))


def rejudge_task(
    record: dict[str, Any],
    items: list[dict[str, Any]],
    n: int,
    options: Any,
    named: bool,
    data_dir: str | None,
    seed: int = SEED,
) -> Rejudged | None:
    """Ask the judge a sample of the task's questions again (None: it has no questions)."""
    from conceptcomb.scorers.rating import rate_prompts

    asked = task_questions(record, items, data_dir)
    if asked is None:
        return None
    chosen = sample_questions(asked, n, seed)
    result = Rejudged(str(record["task"]), judge_label(record.get("judge")))
    if not chosen:
        return result
    settings = bundle_judge_settings(record.get("judge"), options, named)
    settings.check_credentials()
    prompts = [prompt for prompt, _ in chosen]
    replies, usage, identity = rate_prompts(settings, prompts, f"rejudging {result.task}")
    result.judge, result.same = describe(identity), _same(identity, record.get("judge"))
    result.asked, result.usage = len(chosen), usage.summary()
    stored = judge_record(record.get("judge"))
    result.stored_snapshot = stored.snapshot if stored is not None else None
    result.snapshot = snapshot_of(reply for reply in replies.values() if not reply.from_cache)
    for prompt, stored in chosen:
        reply = replies[prompt]
        if reply.rating is None:
            result.failures += 1
            continue
        result.stored.append(stored)
        result.new.append(float(reply.rating))
    return result

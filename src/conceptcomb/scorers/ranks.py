"""The processes of a data-parallel lm-eval run ask each judge question once between them.

Under ``accelerate launch -m lm_eval --model hf ...`` on several GPUs, each process generates
for its share of a task's docs and runs the task's filters on that share, so our judge
filter sees one rank's replies. Left alone, two ranks whose replies need the same question
would both ask it, and each would print a usage line with its part of the numbers. (A
``torchrun`` tensor-parallel run is worse: every rank judges every reply.)

While an lm-eval judge filter runs (`shared_questions`, entered by the lm-eval adapters), the
processes of the run, torch.distributed's default group that accelerate sets up, pool their
questions: each distinct question is given to one process, in turn, each asks its share
(a local judge works on every GPU at once), the answers are pooled, and each process keeps
the answers to its own questions. Two exchanges of Python objects per task
(``all_gather_object``), whatever a rank holds: one that has no question, or that failed
before it could ask, still takes part, so no process waits forever; one that failed makes
the others stop with its error. The usage is the run's total, printed by rank 0 only
(`reporting_process`).

Outside a run of several processes (one process, Inspect, the CLI) nothing changes, and
torch is never imported for this.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from conceptcomb.common.errors import JudgeError

T = TypeVar("T")


@dataclass(frozen=True)
class Ranks:
    """This process's place among the processes of a torch.distributed run."""

    rank: int
    size: int

    def all_gather(self, value: Any) -> list[Any]:
        """Every process's ``value``, in rank order (every process must call it)."""
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.size
        dist.all_gather_object(gathered, value)
        return gathered


def current_ranks() -> Ranks | None:
    """This process's place in a torch.distributed run of several processes, else None.

    Read from torch only if it is already imported: a run whose processes talk has
    imported it (accelerate initialises the group when lm-eval's hf runner starts).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return None
    size = dist.get_world_size()
    return Ranks(dist.get_rank(), size) if size > 1 else None


def reporting_process() -> bool:
    """Whether this process prints the run's usage lines (rank 0, or the only one)."""
    ranks = current_ranks()
    return ranks is None or ranks.rank == 0


@dataclass
class _Offer:
    """What one process brings to the first exchange."""

    questions: list[str] = field(default_factory=list)  # distinct, in first-asked order
    asked: int = 0  # questions before deduplication
    asks: bool = False  # it will ask a share (it has the judge's settings)
    error: str | None = None


@dataclass
class _Outcome:
    """What one process brings to the second exchange."""

    value: Any = None  # its share's answers (None: it asked nothing)
    error: str | None = None


@dataclass(frozen=True)
class Split:
    """The run's questions after the first exchange, and this process's share of them."""

    mine: list[str]
    distinct: int  # distinct questions in the whole run
    asked: int  # questions the whole run needed, repeats included
    processes: int


class QuestionShare:
    """One judge filter's exchanges among the processes (at most one `rate` per filter)."""

    def __init__(self, ranks: Ranks) -> None:
        self.ranks = ranks
        self.used = False

    def split(self, questions: list[str], asked: int) -> Split:
        """First exchange: every process's distinct questions, dealt out in turn among the
        processes that ask."""
        self.used = True
        offers = self._exchange(_Offer(questions, asked, asks=True))
        distinct = list(dict.fromkeys(q for offer in offers for q in offer.questions))
        askers = [rank for rank, offer in enumerate(offers) if offer.asks]
        mine = [q for i, q in enumerate(distinct) if askers[i % len(askers)] == self.ranks.rank]
        return Split(mine, len(distinct), sum(o.asked for o in offers), self.ranks.size)

    def answers(self, work: Callable[[], T]) -> list[T]:
        """Second exchange: run ``work`` (ask this process's share) and pool every asking
        process's result; this process's own failure is raised as it is, another's as a
        `JudgeError` naming that process."""
        try:
            mine: _Outcome = _Outcome(work())
        except Exception as err:
            self._exchange(_Outcome(error=_line(err)))
            raise
        return [outcome.value for outcome in self._exchange(mine) if outcome.value is not None]

    def join_without_questions(self) -> None:
        """Both exchanges, bringing nothing: this process had no judge question."""
        self.used = True
        self._exchange(_Offer())
        self._exchange(_Outcome())

    def fail(self, error: BaseException) -> None:
        """The first exchange, bringing the error: the others stop at once."""
        self.used = True
        self._exchange(_Offer(error=_line(error)))

    def _exchange(self, value: _Offer | _Outcome) -> list[Any]:
        gathered = self.ranks.all_gather(value)
        if value.error is not None:  # this process raises its own error
            return gathered
        for rank, other in enumerate(gathered):
            if other.error is not None:
                raise JudgeError(
                    f"process {rank} of the {self.ranks.size} in this run stopped while "
                    f"judging: {other.error}"
                )
        return gathered


def _line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())


_ACTIVE: ContextVar[QuestionShare | None] = ContextVar("conceptcomb_question_share", default=None)


@contextmanager
def shared_questions() -> Iterator[None]:
    """Around one lm-eval judge filter call: under several processes, the judge questions
    asked inside (`claim_share`) are pooled among them; a process that asked none, or that
    failed, still takes part in the exchanges."""
    ranks = current_ranks()
    if ranks is None:
        yield
        return
    share = QuestionShare(ranks)
    token = _ACTIVE.set(share)
    try:
        yield
    except BaseException as err:
        if not share.used:
            share.fail(err)
        raise
    finally:
        _ACTIVE.reset(token)
    if not share.used:
        share.join_without_questions()


def claim_share() -> QuestionShare | None:
    """The exchange of the judge filter running now, for its one batch of questions; None
    in a single process, outside a filter, or for a second batch of the same filter."""
    share = _ACTIVE.get()
    if share is None or share.used:
        return None
    return share

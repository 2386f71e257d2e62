"""Does A - B keep its sign whoever judges? When the runs compared hold two models' replies
each scored by several judges (a submission and its re-scores, `conceptcomb score
--predictions BUNDLE`), every judge-dependent metric of a pair of models is compared once per
judge (`comparison` pairs only runs of one judge); `sign_lines` says per pair of models,
task and metric whether the sign of their difference holds under every judge, naming each
judge's difference."""

from __future__ import annotations

from dataclasses import dataclass, field

from conceptcomb.leaderboard.compare.comparison import Comparison, Side
from conceptcomb.scorers import judge_identity


@dataclass
class JudgeSigns:
    """One judge-dependent metric of two models, compared under each judge."""

    task: str
    metric: str
    model_a: str
    model_b: str
    by_judge: dict[str, list[float]] = field(default_factory=dict)  # judge -> A - B values

    @property
    def holds(self) -> bool:
        signs = {(value > 0) - (value < 0) for values in self.by_judge.values() for value in values}
        return len(signs) == 1 and 0 not in signs

    def line(self) -> str:
        verdict = "holds under every judge" if self.holds else "does NOT hold under every judge"
        shown = "; ".join(
            f"{judge}: " + ", ".join(f"{value:+.2f}" for value in values)
            for judge, values in self.by_judge.items()
        )
        return (
            f"{self.task} {self.metric}: the sign of {self.model_a} - {self.model_b} {verdict} "
            f"({len(self.by_judge)} judges: {shown})"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "task": self.task,
            "metric": self.metric,
            "model_a": self.model_a,
            "model_b": self.model_b,
            "differences_by_judge": self.by_judge,
            "sign_holds": self.holds,
        }


def _model(side: Side, task: str) -> str:
    return side.task(task).model


def judge_signs(result: Comparison) -> list[JudgeSigns]:
    """The pairs of models whose judge-dependent metrics were compared under two judges or
    more (rows of one judge only: rows compared across judges are left out)."""
    letters = {side.letter: side for side in result.sides}
    found: dict[tuple[str, str, str, str], dict[str, tuple[str, list[float]]]] = {}
    for row in result.rows:
        if row.differs:
            continue  # --variants: one model against itself (its row's task names two tasks)
        a, b = letters[row.a].task(row.task), letters[row.b].task(row.task)
        if row.metric not in a.judged or len(a.judge) != 1 or len(b.judge) != 1:
            continue
        if not judge_identity.same_judge(a.judge[0], b.judge[0]):
            continue  # --allow-different-judges: not a difference under one judge
        models = (_model(letters[row.a], row.task), _model(letters[row.b], row.task))
        if models[0] == models[1]:
            continue
        first, second = sorted(models)
        value = row.result.difference if models[0] == first else -row.result.difference
        judges = found.setdefault((row.task, row.metric, first, second), {})
        record = a.judge[0]
        name = f"{record.model}" + (f" ({record.snapshot})" if record.snapshot else "")
        judges.setdefault(judge_identity.key(record), (name, []))[1].append(value)
    signs = []
    for (task, metric, first, second), judges in found.items():
        if len(judges) < 2:
            continue
        names = [name for name, _ in judges.values()]
        entry = JudgeSigns(task, metric, first, second)
        for key, (name, values) in judges.items():
            shown = name if names.count(name) == 1 else f"{name} [{key[:8]}]"
            entry.by_judge[shown] = values
        signs.append(entry)
    return signs


def sign_lines(result: Comparison) -> list[str]:
    return [signs.line() for signs in judge_signs(result)]

"""Checking a bundle's per-item evidence, offline, and asking a judge again (``--rescore``).

Offline (`check_task`), for each task whose bundle carries evidence:

* the item ids are items of the task's test set in the pinned dataset, each at most once;
  all of them: the task is *verified*; some: *partial* (a ``--limit`` run, a subset);
* each stored reply, parsed again by the task's own code, gives the stored answer; the judge
  questions are those the answer asks; the stored ratings give the stored per-item scores;
* the per-item scores aggregate to the claimed metrics (up to floating-point rounding).

A task without evidence is *unverified*, with the reason. ``--rescore`` (`rescore_task`)
asks a judge every stored question again (through the judge cache), and reports the
agreement with the stored ratings and the metrics recomputed from the new ratings beside
the claimed ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConceptcombError, DataFormatError
from conceptcomb.common.evidence import close, decode, defined

VERIFIED, PARTIAL, UNVERIFIED = "verified", "partial", "unverified"
# Worst first: a row of several tasks takes the worst of their states.
STATES = (UNVERIFIED, PARTIAL, VERIFIED)


def worst(states: list[str]) -> str:
    return min(states, key=STATES.index) if states else UNVERIFIED


@dataclass
class TaskCheck:
    task: str
    status: str
    detail: str
    problems: list[str] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)  # the decoded evidence

    def line(self) -> str:
        return f"{self.task}: {self.status}" + (f" ({self.detail})" if self.detail else "")


def _label(item_id: Any, number: int) -> str:
    """The item's key (the part after the dataset sha256), for messages."""
    if isinstance(item_id, str) and ":" in item_id:
        return item_id.split(":", 1)[1]
    return f"#{number + 1} (no id)"


def evidence_items(task: dict[str, Any], where: str) -> list[dict[str, Any]] | None:
    record = task.get("evidence")
    if not isinstance(record, dict) or "data" not in record:
        return None
    return decode(record, f"{where}.evidence")


def check_task(task: dict[str, Any], where: str, data_dir: str | None) -> TaskCheck:
    name, benchmark = str(task.get("task")), str(task.get("benchmark"))
    record = task.get("evidence")
    try:
        items = evidence_items(task, where)
    except DataFormatError as err:
        return TaskCheck(name, UNVERIFIED, "", [f"evidence: {err}"])
    if items is None:
        reason = record.get("missing") if isinstance(record, dict) else None
        return TaskCheck(name, UNVERIFIED, str(reason or "the bundle holds no per-item evidence"))
    checker = evidence_adapter(benchmark)
    if checker is None:
        return TaskCheck(name, UNVERIFIED, f"no per-item checks for {benchmark}", items=items)
    try:
        test = checker.test_set(name, task.get("options") or {}, data_dir)
    except ConceptcombError as err:  # no copy of the data here: unchecked, not invalid
        return TaskCheck(name, UNVERIFIED, f"its test set could not be read here: {err}")
    expected = {test.item_id(key): key for key in test.items}
    problems, seen = _check_items(name, checker, test.items, expected, items)
    problems += _check_counts(name, task, record, items)
    problems += _check_metrics(name, task, checker.aggregate(name, _scores(items)))
    check = TaskCheck(name, VERIFIED, f"all {len(expected)} test items", problems, items)
    if len(seen) < len(expected):
        check.status, check.detail = PARTIAL, f"{len(seen)} of the {len(expected)} test items"
    return check


def _scores(items: list[dict[str, Any]]) -> list[dict[str, float]]:
    return [defined(item.get("scores") if isinstance(item, dict) else None) for item in items]


def _check_items(
    name: str, checker: Any, test_items: dict, expected: dict, items: list[dict[str, Any]]
) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    seen: set[str] = set()
    for number, evidence in enumerate(items):
        item_id = evidence.get("id")
        label = _label(item_id, number)
        key = expected.get(item_id)
        if key is None:
            problems.append(
                f"evidence: {name} item {label}: not an item of the task's test set in the "
                "pinned dataset (its id is the dataset file's sha256 and the item's key)"
            )
            continue
        if item_id in seen:
            problems.append(f"evidence: {name} item {label}: stored twice")
            continue
        seen.add(item_id)
        found = checker.check_item(name, test_items[key], evidence)
        problems += [f"evidence: {name} item {label}: {problem}" for problem in found]
    return problems, seen


def _check_counts(
    name: str, task: dict[str, Any], record: dict[str, Any], items: list[dict[str, Any]]
) -> list[str]:
    problems = []
    if record.get("items") != len(items):
        problems.append(f"evidence: {name}: says {record.get('items')} items, holds {len(items)}")
    if task.get("items") is not None and task["items"] != len(items):
        problems.append(
            f"evidence: {name}: the run evaluated {task['items']} items, the evidence holds "
            f"{len(items)}"
        )
    return problems


def _check_metrics(
    name: str, task: dict[str, Any], aggregated: dict[str, tuple[float, float | None]]
) -> list[str]:
    claimed = task.get("metrics") if isinstance(task.get("metrics"), dict) else {}
    problems = []
    for metric in sorted(claimed.keys() | aggregated.keys()):
        entry = claimed.get(metric) if isinstance(claimed.get(metric), dict) else {}
        value, stderr = entry.get("value"), entry.get("stderr")
        ours, our_stderr = aggregated.get(metric, (None, None))
        if value is None and ours is None:
            continue
        if not close(value, ours):
            problems.append(
                f"evidence: {name} metric {metric}: the bundle claims {value}, its per-item "
                f"scores give {ours}"
            )
        elif stderr is not None and our_stderr is not None and not close(stderr, our_stderr):
            problems.append(
                f"evidence: {name} metric {metric}: the bundle claims the standard error "
                f"{stderr}, its per-item scores give {our_stderr}"
            )
    return problems


# --- asking the judge again ---------------------------------------------------------------
@dataclass
class Rescore:
    task: str
    judge: str | None  # the judge asked (None: the task has no judge)
    questions: int = 0  # stored ratings compared
    agree: int = 0
    mean_abs_difference: float = 0.0
    failures: int = 0  # questions the judge failed on now
    items_changed: int = 0  # items whose scores differ from the stored ones
    metrics: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    differs: list[str] = field(default_factory=list)  # metrics beyond the tolerance
    usage: str = ""  # the judge session's usage line (questions, cache hits, requests)

    @property
    def ok(self) -> bool:
        return not self.differs and not self.failures


def rescore_task(
    task: dict[str, Any],
    items: list[dict[str, Any]],
    settings: Any,
    tolerance: float,
    data_dir: str | None,
) -> Rescore:
    """Ask the judge every question again; recompute the items' scores and the metrics."""
    from conceptcomb.scorers.rating import rate_prompts

    name = str(task["task"])
    checker = evidence_adapter(str(task["benchmark"]))
    assert checker is not None
    known = checker.rescore_set(name, task.get("options") or {}, data_dir)
    pairs = [(evidence, known[_label(evidence.get("id"), 0)]) for evidence in items]
    asked = [checker.questions(name, item, evidence) for evidence, item in pairs]
    prompts = list(dict.fromkeys(prompt for rows in asked for prompt, _ in rows))
    result = Rescore(name, None)
    replies: dict[str, Any] = {}
    if prompts:
        settings.check_credentials()
        replies, usage, result.judge = rate_prompts(settings, prompts, f"rescoring {name}")
        result.usage = usage.summary()
        result.failures = sum(not reply.ok for reply in replies.values())
        _agreement(result, asked, replies)
    scores = []
    for evidence, item in pairs:
        new = checker.rescored(name, item, evidence, replies)
        stored = defined(evidence.get("scores"))
        result.items_changed += any(
            not close(new.get(k), stored.get(k)) for k in new.keys() | stored.keys()
        )
        scores.append(new)
    recomputed = checker.aggregate(name, scores)
    claimed = task.get("metrics") or {}
    for metric in sorted(claimed.keys() | recomputed.keys()):
        value = (claimed.get(metric) or {}).get("value")
        ours = recomputed.get(metric, (None, None))[0]
        result.metrics[metric] = (value, ours)
        if value is None and ours is None:
            continue
        if (
            value is None
            or ours is None
            or abs(value - ours) > tolerance + 1e-9 * max(1.0, abs(value))
        ):
            result.differs.append(metric)
    return result


def _agreement(
    result: Rescore, asked: list[list[tuple[str, float | None]]], replies: dict[str, Any]
) -> None:
    differences = []
    for rows in asked:
        for prompt, stored in rows:
            rating = replies[prompt].rating
            if stored is None or rating is None:
                continue
            result.questions += 1
            result.agree += float(rating) == float(stored)
            differences.append(abs(float(rating) - float(stored)))
    result.mean_abs_difference = sum(differences) / len(differences) if differences else 0.0


def rescore_lines(result: Rescore, tolerance: float) -> list[str]:
    """What ``validate-bundle --rescore`` prints for one task."""
    lines = []
    if result.judge is None:
        lines.append(f"{result.task}: no judge; per-item scores recomputed from the answers")
    else:
        share = 100.0 * result.agree / result.questions if result.questions else 0.0
        lines.append(
            f"{result.task}: judge {result.judge}: {result.agree} of {result.questions} stored "
            f"ratings reproduced ({share:.1f}%), mean |difference| "
            f"{result.mean_abs_difference:.3f}, {result.failures} judge failures"
        )
    if result.usage:
        lines.append(f"  {result.usage}")
    lines.append(f"  items whose scores changed: {result.items_changed}")
    lines.append(f"  {'metric':<24} {'claimed':>14} {'recomputed':>14} {'difference':>12}")
    for metric, (value, ours) in result.metrics.items():
        diff = "" if value is None or ours is None else f"{ours - value:+.6g}"
        lines.append(f"  {metric:<24} {_num(value):>14} {_num(ours):>14} {diff:>12}")
    if result.ok:
        lines.append(f"  reproduces the claimed metrics (tolerance {tolerance:g})")
    else:
        beyond = ", ".join(result.differs) or "none"
        lines.append(
            f"  DIFFERS from the claimed metrics beyond the tolerance {tolerance:g}: {beyond}"
            + (f"; {result.failures} questions failed" if result.failures else "")
        )
    return lines


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.6g}"

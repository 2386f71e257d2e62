"""Checking a bundle's per-item evidence, offline, and asking a judge again (``--rescore``).

Offline (`check_task`), for each task whose bundle carries evidence:

* the item ids are items of the task's test set in the pinned dataset, each at most once;
  all of them: the task is *verified*; some: *partial* (a ``--limit`` run, a subset);
* each stored reply, parsed again by the task's own code, gives the stored answer; the judge
  questions are those the answer asks; the stored ratings give the stored per-item scores;
* each item's unit (CCPT's noun phrase, CGGC's concept set, McRae's concept) is its test
  item's, and each metric's recorded 95% interval is the one its per-item scores and units
  give (`conceptcomb.leaderboard.statistics.intervals`: an edited bound or unit is named);
* the per-item scores aggregate to the claimed metrics (up to floating-point rounding); a
  benchmark with corpus-level metrics (CGGC's BLEU/CIDEr, AbsPyramid's macro-F1) recomputes
  them from the stored replies instead (`conceptcomb.common.evidence.CorpusRecheck`), and a
  metric whose tool is missing here is "not re-checked: <reason>", never passing.

A task without evidence is *unverified*, with the reason. In an INVALID bundle no task is
*verified*: a task with problems of its own is *FAILED*, the others *not counted*, each
line saying what was checked (`with_outcome`). ``--rescore`` (`rescore_task`)
asks a judge every stored question again (through the judge cache), and reports the
agreement with the stored ratings and the metrics recomputed from the new ratings beside
the claimed ones.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field, replace
from typing import Any

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.evidence import (
    ItemSet,
    appear_in_order,
    close,
    defined,
    evidence_turns,
    lm_eval_recorded_turns,
    lm_eval_sent_text,
    prompts_sha256,
    turns_of,
)
from conceptcomb.leaderboard.bundles.safe_json import EvidenceBudget, Refused, clip, decode_evidence

VERIFIED, PARTIAL, UNVERIFIED = "verified", "partial", "unverified"
# Worst first: a row of several tasks takes the worst of their states.
STATES = (UNVERIFIED, PARTIAL, VERIFIED)
# The states of a task in an INVALID bundle (never verified, whatever its own checks gave):
# FAILED, the task has problems of its own; NOT_COUNTED, it has none but the bundle has.
FAILED, NOT_COUNTED = "FAILED", "not counted"


def worst(states: list[str]) -> str:
    return min(states, key=STATES.index) if states else UNVERIFIED


@dataclass
class TaskCheck:
    task: str
    status: str
    detail: str
    problems: list[str] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)  # the decoded evidence
    # metric -> why it was not recomputed here (its tool is missing on this machine)
    not_rechecked: dict[str, str] = field(default_factory=dict)
    # Its test set could not be read here (no copy of the data): a verdict to redo, not keep.
    data_missing: bool = False

    def line(self) -> str:
        detail = self.detail
        if self.not_rechecked:
            skipped = "; ".join(
                f"{metric} not re-checked: {reason}"
                for metric, reason in sorted(self.not_rechecked.items())
            )
            detail = f"{detail}; {skipped}" if detail else skipped
        return f"{self.task}: {self.status}" + (f" ({detail})" if detail else "")


def printable(text: str) -> str:
    """The text with control characters and line breaks escaped (``\\n``): what a bundle
    says is printed on one line and cannot start a line of its own."""
    return _CONTROL.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def with_outcome(check: TaskCheck, own: list[str]) -> TaskCheck:
    """The task's line in an INVALID bundle: what was checked, and what failed (``own``:
    the problems that concern this task). Never *verified*."""
    if check.status in (VERIFIED, PARTIAL):
        checked = f"checked {check.detail}"
    elif check.status == UNVERIFIED:
        checked = f"unverified: {check.detail}" if check.detail else "unverified"
    else:  # already settled
        return check
    if own:
        count = f"{len(own)} problem" + ("s" if len(own) > 1 else "")
        detail = f"{checked}; {count} with this task, listed above"
        return replace(check, status=FAILED, detail=detail)
    detail = f"{checked}: no problem with this task, but the bundle is INVALID"
    return replace(check, status=NOT_COUNTED, detail=detail)


def _label(item_id: Any, number: int) -> str:
    """The item's key (the part after the dataset sha256), for messages."""
    if isinstance(item_id, str) and ":" in item_id:
        return printable(clip(item_id.split(":", 1)[1], 120))
    return f"#{number + 1} (no id)"


def evidence_items(
    task: dict[str, Any], where: str, budget: EvidenceBudget | None = None
) -> list[dict[str, Any]] | None:
    """The task's evidence items (None: it holds none), read within the limits of
    `conceptcomb.leaderboard.bundles.safe_json` (`Refused` naming the problem otherwise)."""
    record = task.get("evidence")
    if not isinstance(record, dict) or "data" not in record:
        return None
    return decode_evidence(record, f"{where}.evidence", budget)


def check_task(
    task: dict[str, Any],
    where: str,
    data_dir: str | None,
    budget: EvidenceBudget | None = None,
) -> TaskCheck:
    """The task's state and problems; ``budget`` is what the evidence of the bundle's tasks
    may still take (each task alone may take all of it when None)."""
    name = printable(clip(str(task.get("task")), 120))
    benchmark = str(task.get("benchmark"))
    record = task.get("evidence")
    if name != task.get("task"):  # too long, or with line breaks: no task of ours
        return TaskCheck(name, UNVERIFIED, "not checked: not the name of a task")
    if budget is not None and budget.spent:
        return TaskCheck(name, UNVERIFIED, "not checked: the evidence before it is over the limit")
    try:
        items = evidence_items(task, where, budget)
    except Refused as err:
        kind = "limit" if err.limit else "evidence"
        return TaskCheck(name, UNVERIFIED, "its evidence could not be read", [f"{kind}: {err}"])
    if items is None:
        reason = record.get("missing") if isinstance(record, dict) else None
        reason = printable(clip(str(reason or "the bundle holds no per-item evidence"), 300))
        return TaskCheck(name, UNVERIFIED, reason)
    checker = evidence_adapter(benchmark)
    if checker is None:
        return TaskCheck(name, UNVERIFIED, f"no per-item checks for {benchmark}", items=items)
    try:
        test = checker.test_set(name, task.get("options") or {}, data_dir)
    except ConceptcombError as err:  # no copy of the data here: unchecked, not invalid
        detail = f"its test set could not be read here: {err}"
        # still scanned for secrets
        return TaskCheck(name, UNVERIFIED, detail, items=items, data_missing=True)
    except Exception as err:  # what the task's record asks is not a test set we know
        detail = f"its test set could not be read here: {_failure(err)}"
        return TaskCheck(name, UNVERIFIED, detail, items=items, data_missing=True)
    if hasattr(checker, "prepare"):  # work done once for all items (batched lemmas...)
        # Only a speed-up: what is wrong with an item, the item checks below name.
        with contextlib.suppress(Exception):
            checker.prepare(name, items)
    total = len(test.items)
    if len(items) > total:
        problem = (
            f"evidence: {name}: holds {len(items):,} items, more than the {total:,} of "
            "its test set (each test item at most once): its items were not checked one by one"
        )
        return TaskCheck(name, UNVERIFIED, "its evidence holds too many items", [problem], items)
    problems, pairs = _check_items(name, checker, test, items)
    problems += _check_counts(name, task, record, items)
    problems += _check_prompts(name, task, items)
    problems += _check_options(name, checker, task.get("options"), items)
    options = task.get("options") if isinstance(task.get("options"), dict) else {}
    problems += _check_messages(name, checker, {**options, **_data_dir(data_dir)}, pairs)
    not_rechecked: dict[str, str] = {}
    try:
        if hasattr(checker, "recompute"):  # corpus-level metrics, from the stored items
            recomputed = checker.recompute(name, task.get("options") or {}, pairs)
            aggregated, not_rechecked = recomputed.metrics, dict(recomputed.not_rechecked)
        else:
            aggregated = checker.aggregate(name, _scores(items))
    except Exception as err:
        problems.append(f"evidence: {name}: its metrics cannot be recomputed ({_failure(err)})")
    else:
        problems += _check_metrics(name, task, aggregated, set(not_rechecked))
    problems += _check_units(name, checker, pairs)
    problems += _check_intervals(name, task, items, data_dir, not_rechecked)
    check = TaskCheck(name, VERIFIED, f"all {total} test items", problems, items)
    check.not_rechecked = not_rechecked
    seen = {evidence.get("id") for _, evidence in pairs}
    if len(seen) < total:
        check.status, check.detail = PARTIAL, f"{len(seen)} of the {total} test items"
    return check


def _check_units(name: str, checker: Any, pairs: list[tuple[Any, dict[str, Any]]]) -> list[str]:
    """Each item's stored unit against its test item's (`Clustering.unit`): the clustered
    intervals are recomputed from the units as stored, so an edited one would change them
    unseen. Bundles made before items carried units carry none at all: not checked."""
    if not hasattr(checker, "unit") or not any("unit" in evidence for _, evidence in pairs):
        return []
    kind = getattr(checker, "UNIT", "unit")
    problems = []
    for item, evidence in pairs:
        try:
            expected = checker.unit(name, item)
        except Exception as err:
            found = f"its unit could not be checked ({_failure(err)})"
        else:
            if evidence.get("unit") == expected:
                continue
            stored = printable(clip(repr(evidence.get("unit")), 120))
            found = f"the bundle stores the unit {stored}, its test item's {kind} is {expected!r}"
        problems.append(f"evidence: {name} item {_label(evidence.get('id'), 0)}: {found}")
    return problems


def _check_intervals(
    name: str,
    task: dict[str, Any],
    items: list[dict[str, Any]],
    data_dir: str | None,
    not_rechecked: dict[str, str],
) -> list[str]:
    """Each metric's recorded 95% interval against the one its items give
    (`conceptcomb.leaderboard.statistics.intervals`); what cannot be recomputed here goes to
    ``not_rechecked``."""
    from conceptcomb.leaderboard.statistics.intervals import interval_problems

    try:
        problems, skipped = interval_problems(name, task, items, data_dir)
    except Exception as err:
        return [f"evidence: {name}: its intervals cannot be recomputed ({_failure(err)})"]
    not_rechecked.update(skipped)
    return problems


def _data_dir(data_dir: str | None) -> dict[str, str]:
    """The data folder the checks read (``--data-dir``) over the one the run recorded."""
    return {"data_dir": data_dir} if data_dir else {}


def _failure(err: Exception) -> str:
    return printable(clip(f"{type(err).__name__}: {err}", 300))


def _scores(items: list[dict[str, Any]]) -> list[dict[str, float]]:
    return [
        defined(scores if isinstance(scores := item.get("scores"), dict) else None)
        for item in items
    ]


def _test_key(test: ItemSet, item_id: Any) -> str | None:
    """The test set's key of an item id (``<file sha256>:<key>``), None when it names no
    item of the test set: each id is looked up, so that a test set may draw only the
    items a bundle holds (CGGC)."""
    if not isinstance(item_id, str) or ":" not in item_id:
        return None
    key = item_id.split(":", 1)[1]
    return key if test.item_id(key) == item_id and key in test.items else None


def _check_items(
    name: str, checker: Any, test: ItemSet, items: list[dict[str, Any]]
) -> tuple[list[str], list[tuple[Any, dict[str, Any]]]]:
    """The problems, and (test item, evidence) of each test item found (once each)."""
    problems: list[str] = []
    seen: set[str] = set()
    pairs: list[tuple[Any, dict[str, Any]]] = []
    for number, evidence in enumerate(items):
        item_id = evidence.get("id")
        label = _label(item_id, number)
        key = _test_key(test, item_id)
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
        pairs.append((test.items[key], evidence))
        try:
            found = checker.check_item(name, test.items[key], evidence)
        except Exception as err:  # a field of the wrong type, where the checks expect another
            found = [f"could not be checked ({_failure(err)})"]
        problems += [f"evidence: {name} item {label}: {problem}" for problem in found]
    return problems, pairs


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


def _check_prompts(name: str, task: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
    """The prompts the items carry (``prompt``: what the framework sent) against the run's
    ``prompts.sent_sha256`` (bundles made before the items carried them: not checked)."""
    sent = (task.get("prompts") or {}).get("sent_sha256") if isinstance(task, dict) else None
    prompts = [item.get("prompt") for item in items]
    if not sent or all(prompt is None for prompt in prompts):
        return []
    if not all(isinstance(p, list) and len(p) >= 2 for p in prompts):
        return [f"evidence: {name}: some items carry no prompt (or not one as sent: [id, ...])"]
    found = prompts_sha256(prompts)
    if found == sent:
        return []
    return [
        f"evidence: {name}: the items' prompts hash to {found}, but the run's prompts.sent_sha256 "
        f"is {printable(clip(str(sent), 80))}: a prompt was changed after the run"
    ]


def _check_options(name: str, checker: Any, options: Any, items: list[dict[str, Any]]) -> list[str]:
    """The task options the run recorded: a mapping, which the task accepts and its items
    agree with (`EvidenceAdapter.check_options`, where the benchmark has one)."""
    if options is None:
        return []
    if not isinstance(options, dict):
        return [f"evidence: {name}: its options are not a mapping of option -> value"]
    if not hasattr(checker, "check_options"):
        return []
    try:
        found = checker.check_options(name, options, items)
    except Exception as err:
        found = [f"they could not be checked ({_failure(err)})"]
    return [f"evidence: {name} options: {problem}" for problem in found]


def _check_messages(
    name: str, checker: Any, options: Any, pairs: list[tuple[Any, dict[str, Any]]]
) -> list[str]:
    """The chat messages an item says it was sent, where the bundle derived them rather
    than the framework logging them: an lm-eval item's ``messages`` appear in order in the
    prompt lm-eval logged (which ``sent_sha256`` checks), and they, like the prompt of a
    rescored item (``[id, None, messages]``), are the task's own rendering of the pinned
    test item with the run's options (`EvidenceAdapter.chat_messages`, where the benchmark
    has one; None where the item alone cannot say)."""
    problems = []
    render = getattr(checker, "chat_messages", None)
    options = options if isinstance(options, dict) else {}
    for number, (item, evidence) in enumerate(pairs):
        prompt = evidence.get("prompt")
        derived = "messages" in evidence or (
            isinstance(prompt, list) and len(prompt) == 3 and prompt[1] is None
        )
        if not derived:
            continue
        label, turns = _label(evidence.get("id"), number), evidence_turns(evidence)
        if turns is None:
            problems.append(f"evidence: {name} item {label}: its messages are not [[role, text]]")
            continue
        if "messages" in evidence:
            text = lm_eval_sent_text(prompt[1]) if isinstance(prompt, list) and prompt[1:] else None
            recorded = lm_eval_recorded_turns(text) if text else None
            if text is None or not (recorded == turns or appear_in_order(turns, text)):
                problems.append(
                    f"evidence: {name} item {label}: its messages are not in the prompt "
                    "lm-eval logged for it"
                )
                continue
        try:
            expected = render(name, item, evidence, options) if render else None
        except Exception as err:
            problems.append(f"evidence: {name} item {label}: {_failure(err)}")
            continue
        if expected is not None and turns_of(expected) != turns:
            problems.append(
                f"evidence: {name} item {label}: its messages are not what the task sends "
                "this item with the run's options"
            )
    return problems


def _check_metrics(
    name: str,
    task: dict[str, Any],
    aggregated: dict[str, tuple[float, float | None]],
    skipped: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """Each claimed metric against the recomputed one (``skipped``: not recomputed here)."""
    claimed = task.get("metrics") if isinstance(task.get("metrics"), dict) else {}
    problems = []
    for metric in sorted((claimed.keys() | aggregated.keys()) - skipped):
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
    if hasattr(checker, "recompute"):  # corpus-level metrics (macro-F1, BLEU): from the items
        by_item = [(item, evidence) for evidence, item in pairs]
        try:
            corpus = checker.recompute(name, task.get("options") or {}, by_item).metrics
        except Exception:  # rescoring items the recompute does not take: those metrics differ
            corpus = {}
        recomputed = {**corpus, **recomputed}
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

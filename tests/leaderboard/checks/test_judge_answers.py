"""The judge's raw answers in bundles (issue 51, item 2): real runs through ``conceptcomb
score`` (CCPT's ``ccpt_pi_emergent``, CGGC's ``cggc_ood_verified``) judged by the loopback
judge server, made into bundles by ``submit-bundle``. Each judged row carries the answer the
server wrote (from the judge cache too); a bundle of before the answers (rows without them)
still validates; a rating or verdict edited without its answer is INVALID, naming the item;
an answer past `MOST_ANSWER_CHARS` is cut, saying so; the explorer's data holds each
question's answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.evidence import CcptEvidence, answer_rating
from conceptcomb.ccpt.scoring import finish_item, plan_item
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.common.evidence import (
    MOST_ANSWER_CHARS,
    RawItem,
    answer_cut,
    decode,
    encode,
    kept_answer,
)
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.checks.validate import check_bundle
from conceptcomb.leaderboard.explore.data import gather
from conceptcomb.scorers.judge_base import JudgeReply
from conceptcomb.scorers.local_judge import EXPECTED_ANSWER
from conceptcomb.testing.cggc_references import write_reference_predictions
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import score_predictions, submit_bundle

pytestmark = pytest.mark.shared_data
CCPT = "ccpt_pi_emergent"
CGGC = "cggc_ood_verified"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _items(bundle: dict[str, Any], task: str) -> list[dict[str, Any]]:
    record = next(t for t in bundle["tasks"] if t["task"] == task)
    return decode(record["evidence"], task)


def _resealed(bundle: dict[str, Any], task: str, edit: Callable[[list[dict]], None]) -> dict:
    """The bundle with ``edit`` applied to the task's items, resealed as a forger would."""
    record = next(t for t in bundle["tasks"] if t["task"] == task)
    items = decode(record["evidence"], task)
    edit(items)
    record["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def _key(item: dict[str, Any]) -> str:
    return item["id"].split(":", 1)[1]


# --- CCPT ------------------------------------------------------------------------------------
def _ccpt_predictions(out: Path) -> Path:
    """Six items: the dataset's own property, one empty reply (no answer: no question)."""
    items = load_items(spec_by_name(CCPT))[:6]
    lines = [{"doc": i.as_doc(), "response": json.dumps({"property": i.property})} for i in items]
    lines[1]["response"] = ""
    path = out / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ccpt_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same replies scored twice by one loopback judge through one judge cache: the
    second scoring answered from the cache alone."""
    root = tmp_path_factory.mktemp("ccpt-answers")
    predictions = _ccpt_predictions(root)
    cache = root / "judge.sqlite"
    found: dict[str, Any] = {}
    with LoopbackServer() as server:
        judge = ("--judge-base-url", server.base_url, "--judge-cache", str(cache))
        for name in ("asked", "cached"):
            out = root / name
            out.mkdir()
            before = server.stats.requests
            result = score_predictions(out, CCPT, predictions, f"model-{name}", *judge)
            found[name] = submit_bundle([result], out)
            found[f"{name}_requests"] = server.stats.requests - before
        found["server"] = server
    return found


@pytest.mark.parametrize("run", ["asked", "cached"])
def test_ccpt_rows_carry_the_judges_answers(ccpt_runs: dict[str, Any], run: str) -> None:
    """Each judged row is [concept, property, rating, the server's answer], whether the
    judge was asked or the cache answered (it keeps each answer's text)."""
    server = ccpt_runs["server"]
    assert ccpt_runs["asked_requests"] > 0 and ccpt_runs["cached_requests"] == 0
    bundle = _load(ccpt_runs[run])
    assert check_bundle(bundle).problems == []
    rows = [row for item in _items(bundle, CCPT) for row in item.get("judged") or []]
    assert len(rows) == 15  # 5 answers x 3 questions
    for concept, prop, rating, answer in rows:
        assert answer == json.dumps({"relevance": server.rating(concept, prop)})
        assert rating == answer_rating(answer) == server.rating(concept, prop)


def test_a_ccpt_bundle_of_before_the_answers_still_validates(ccpt_runs: dict[str, Any]) -> None:
    def without_answers(items: list[dict]) -> None:
        for item in items:
            if "judged" in item:
                item["judged"] = [row[:3] for row in item["judged"]]

    bundle = _resealed(_load(ccpt_runs["asked"]), CCPT, without_answers)
    assert all(len(row) == 3 for item in _items(bundle, CCPT) for row in item.get("judged", []))
    check = check_bundle(bundle)
    assert check.problems == [] and check.tasks[0].status == "partial"


def test_an_edited_ccpt_rating_with_its_answer_unedited_is_invalid(
    ccpt_runs: dict[str, Any],
) -> None:
    """A rating edited with the item's scores (so that they agree with the ratings): only
    the judge's stored answer tells, in one line naming the item; rows without answers
    would let it through the item's check (only the task's claimed metrics, the forger's
    next edit, would still differ)."""
    bundle = _load(ccpt_runs["asked"])
    items = _items(bundle, CCPT)
    at = next(n for n, item in enumerate(items) if item.get("judged"))
    concept, prop, rating, answer = items[at]["judged"][1]
    forged = 10.0 if rating != 10.0 else 1.0

    def edit(found: list[dict]) -> None:
        found[at]["judged"][1][2] = forged
        found[at]["scores"] = _ccpt_scores(found[at], [row[2] for row in found[at]["judged"]])

    def edit_old_rows(found: list[dict]) -> None:
        edit(found)
        found[at]["judged"] = [row[:3] for row in found[at]["judged"]]

    key = _key(items[at])
    problems = check_bundle(_resealed(_load(ccpt_runs["asked"]), CCPT, edit)).problems
    assert [p for p in problems if " item " in p] == [
        f"evidence: {CCPT} item {key}: judge question 2 ({concept}, {prop}): the bundle "
        f"stores the rating {forged}, but the judge's answer it stores ({answer!r}) gives "
        f"{rating:g}"
    ], problems
    old = check_bundle(_resealed(_load(ccpt_runs["asked"]), CCPT, edit_old_rows)).problems
    assert old and not [p for p in old if " item " in p], old


def _ccpt_scores(item: dict[str, Any], ratings: list[float]) -> dict[str, float]:
    """The per-item scores the task's own core gives the item's reply with ``ratings``."""
    spec = spec_by_name(CCPT)
    key = _key(item)
    test_item = next(i for i in load_items(spec) if i.item_id == key)
    planned = plan_item(spec, test_item, item["reply"])
    replies = {
        q.prompt: JudgeReply(rating=r)
        for q, r in zip(planned.questions.values(), ratings, strict=True)
    }
    return finish_item(spec, planned, replies).defined_metrics()


def test_a_long_answer_is_cut_and_still_valid() -> None:
    """A judge that wrote 5,000 characters before its rating: the row keeps 2,000 of them
    and says how long the answer was; a cut answer is not read again (its rating may be in
    the part cut), so the item stays valid."""
    spec = spec_by_name(CCPT)
    item = load_items(spec)[0]
    reply = json.dumps({"property": item.property})
    planned = plan_item(spec, item, reply)
    long = "Let me think. " * 360 + '{"relevance": 7}'
    answers = {q.prompt: JudgeReply(rating=7.0, reply=long) for q in planned.questions.values()}
    record = finish_item(spec, planned, answers).to_json()
    assert {q["reply"] for q in record["judged"].values()} == {long}
    adapter = CcptEvidence()
    raw = RawItem(item.as_doc(), [reply], record, record["metrics"])
    evidence = {**adapter.evidence_item(CCPT, raw), "id": f"x:{item.item_id}"}
    (answer,) = {row[3] for row in evidence["judged"]}
    assert answer == kept_answer(long) and answer_cut(answer)
    assert answer.endswith(f" … [cut: {len(long):,} characters in all]")
    assert len(answer) < MOST_ANSWER_CHARS + 40 < len(long)
    assert adapter.check_item(CCPT, item, evidence) == []


def test_the_local_judges_expected_rating_is_read_from_its_answer() -> None:
    """The offline judge's answer names its expected rating to 4 decimals: the row's full
    rating matches it; a rating moved by more than the rounding does not."""
    spec = spec_by_name(CCPT)
    item = load_items(spec)[0]
    reply = json.dumps({"property": item.property})
    planned = plan_item(spec, item, reply)
    expected = 6.123456789
    text = EXPECTED_ANSWER.format(expected=expected, mass=0.987)
    replies = {
        q.prompt: JudgeReply(rating=expected, reply=text) for q in planned.questions.values()
    }
    record = finish_item(spec, planned, replies).to_json()
    adapter = CcptEvidence()
    evidence = adapter.evidence_item(
        CCPT, RawItem(item.as_doc(), [reply], record, record["metrics"])
    )
    assert adapter.check_item(CCPT, item, evidence) == []
    evidence["judged"][0][2] = expected + 0.001
    (problem,) = adapter.check_item(CCPT, item, evidence)
    assert problem.startswith("judge question 1 (") and "gives 6.1235" in problem


# --- CGGC ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cggc_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """cggc_ood_verified's first 4 items answered by their reference sentences, verified by
    the loopback judge (it says yes where the sentence holds both concepts)."""
    root = tmp_path_factory.mktemp("cggc-answers")
    predictions = root / f"{CGGC}.jsonl"
    write_reference_predictions(CGGC, predictions, None, 4, 0)
    with LoopbackServer() as server:
        judge = ("--judge-base-url", server.base_url, "--judge-cache", "off")
        result = score_predictions(root, CGGC, predictions, "references", *judge)
    return {"bundle": submit_bundle([result], root), "server": server}


def test_cggc_edges_carry_the_verifiers_answers(cggc_run: dict[str, Any]) -> None:
    bundle = _load(cggc_run["bundle"])
    assert check_bundle(bundle).problems == []
    items = _items(bundle, CGGC)
    rows = [edge for item in items for edge in item["verification"]["edges"]]
    assert rows and all(len(edge) == 5 for edge in rows)
    for item in items:
        for head, relation, tail, verdict, answer in item["verification"]["edges"]:
            said = cggc_run["server"].verdict(item["answer"], head, relation, tail)
            assert (verdict, answer) == (said, json.dumps({"answer": "yes" if said else "no"}))


def test_a_cggc_bundle_of_before_the_answers_still_validates(cggc_run: dict[str, Any]) -> None:
    def without_answers(items: list[dict]) -> None:
        for item in items:
            edges = item["verification"]["edges"]
            item["verification"]["edges"] = [edge[:4] for edge in edges]

    bundle = _resealed(_load(cggc_run["bundle"]), CGGC, without_answers)
    assert all(len(e) == 4 for i in _items(bundle, CGGC) for e in i["verification"]["edges"])
    assert check_bundle(bundle).problems == []


def test_an_edited_cggc_verdict_with_its_answer_unedited_is_invalid(
    cggc_run: dict[str, Any],
) -> None:
    bundle = _load(cggc_run["bundle"])
    items = _items(bundle, CGGC)
    at = next(n for n, item in enumerate(items) if item["verification"]["edges"])
    head, relation, tail, verdict, answer = items[at]["verification"]["edges"][0]

    def flip(found: list[dict]) -> None:
        found[at]["verification"]["edges"][0][3] = not verdict

    problems = check_bundle(_resealed(bundle, CGGC, flip)).problems
    said = {True: "yes", False: "no"}
    line = (
        f"evidence: {CGGC} item {_key(items[at])}: verifier question 1 ({head} --{relation}--> "
        f"{tail}): the bundle stores the verdict {said[not verdict]}, but the verifier's answer "
        f"it stores ({answer!r}) gives {said[verdict]}"
    )
    assert line in problems, problems


# --- the explorer ------------------------------------------------------------------------------
def _questions(data: dict[str, Any], task: str) -> list[tuple[str, str, str]]:
    """Every (question, rating, answer) the page's data holds for the task's first run."""
    strings = data["strings"]
    view = next(v for v in data["views"] if v["name"] == task)
    return [
        (strings[q], strings[r], strings[a] if a >= 0 else "")
        for found in view["columns"][0]["questions"]
        for q, r, a in found or []
    ]


def test_the_explorers_data_holds_each_questions_answer(
    ccpt_runs: dict[str, Any], cggc_run: dict[str, Any]
) -> None:
    data = gather([ccpt_runs["asked"], cggc_run["bundle"]])
    server = ccpt_runs["server"]
    ccpt = _questions(data, CCPT)
    assert len(ccpt) == 15
    for question, rating, answer in ccpt:
        concept, prop = question.split(" — ")
        assert rating == str(server.rating(concept, prop))
        assert answer == json.dumps({"relevance": server.rating(concept, prop)})
    cggc = _questions(data, CGGC)
    assert cggc and all(answer == json.dumps({"answer": rating}) for _, rating, answer in cggc)
    assert all(" --" in question and "--> " in question for question, _, _ in cggc)

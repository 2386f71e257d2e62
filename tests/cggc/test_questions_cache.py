"""Every CGGC item's prompt block is rendered once per machine and read back from the cache
(`conceptcomb.cggc.docs.prime_questions`): the same blocks as rendering gives, rendered again
whenever the dataset, the style, the seed or the code that renders them differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.cggc import docs, prompts
from conceptcomb.cggc.data import load_dataset
from conceptcomb.cggc.docs import cached_questions_path, prime_questions, questions_key
from conceptcomb.cggc.prompts import STYLES, question, rendered_question
from tests.cggc.conftest import conceptcomb_modules_run


@pytest.fixture
def nothing_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process: no block remembered, none primed."""
    monkeypatch.setattr(prompts, "_REMEMBERED", {})
    prime_questions.cache_clear()
    yield
    prime_questions.cache_clear()


def rendering_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_rendering(*args: object) -> str:
        raise AssertionError("a block was rendered again")

    monkeypatch.setattr(prompts, "rendered_question", no_rendering)


@pytest.mark.parametrize("style", ["paper", "script"])
def test_read_back_blocks_are_the_rendered_ones(
    style: str, fresh_cache: Path, nothing_remembered: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All ~38k blocks of the shipped dataset: written by the first build, read back by the
    next, each the block rendering gives."""
    dataset, prompt_style = load_dataset(None), STYLES[style]
    for split in ("train", "test"):
        prime_questions(dataset, split, prompt_style, 0)
        path = cached_questions_path(questions_key(dataset, split, prompt_style, 0))
        assert path.is_file() and fresh_cache in path.parents
    monkeypatch.setattr(prompts, "_REMEMBERED", {})  # the next process
    prime_questions.cache_clear()
    rendered = rendered_question.__wrapped__  # no process-wide memo
    rendering_forbidden(monkeypatch)
    for split in ("train", "test"):
        prime_questions(dataset, split, prompt_style, 0)
    items = [*dataset.pool, *dataset.test]
    assert len(items) > 30_000
    assert all(question(item, prompt_style, 0) == rendered(item, prompt_style, 0) for item in items)


def test_what_decides_the_blocks_is_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = load_dataset(None)
    base = questions_key(dataset, "test", STYLES["paper"], 0)
    assert questions_key(dataset, "test", STYLES["paper"], 0) == base
    assert questions_key(dataset, "train", STYLES["paper"], 0) != base
    assert questions_key(dataset, "test", STYLES["script"], 0) != base
    assert questions_key(dataset, "test", STYLES["paper"], 1) != base
    monkeypatch.setattr(docs, "question_code_sha256", lambda: "0" * 64)
    assert questions_key(dataset, "test", STYLES["paper"], 0) != base  # a change to the code


def test_rendering_runs_only_the_code_the_key_hashes() -> None:
    """Every conceptcomb module whose code runs while a block is rendered is in
    QUESTION_CODE: a rule moved to another module still changes the key."""
    dataset = load_dataset(None)
    items = [*dataset.pool[:50], *dataset.test[:50]]

    def render() -> None:
        for style in STYLES.values():
            for item in items:
                rendered_question.__wrapped__(item, style, 3)

    ours = conceptcomb_modules_run(render)
    assert "conceptcomb.cggc.prompts" in ours
    assert ours <= set(docs.QUESTION_CODE), sorted(ours - set(docs.QUESTION_CODE))


def test_a_damaged_or_foreign_cache_is_rendered_again(
    fresh_cache: Path, nothing_remembered: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, style = load_dataset(None), STYLES["script"]
    prime_questions(dataset, "test", style, 7)
    path = cached_questions_path(questions_key(dataset, "test", style, 7))
    stored = json.loads(path.read_text())
    item = dataset.test[0]
    for damaged in (
        "{not json",
        json.dumps({**stored, "questions": stored["questions"][:-1]}),  # another dataset's
        json.dumps({**stored, "key": "0" * 64}),
    ):
        path.write_text(damaged)
        monkeypatch.setattr(prompts, "_REMEMBERED", {})
        prime_questions.cache_clear()
        rendered_question.cache_clear()
        prime_questions(dataset, "test", style, 7)  # rendered again, and written again
        assert json.loads(path.read_text()) == stored
        assert question(item, style, 7) == rendered_question.__wrapped__(item, style, 7)


def test_a_long_lived_process_forgets_older_datasets_blocks(
    nothing_remembered: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Remembered blocks are bounded (a test worker loads dataset after dataset): past the
    bound the older ones are forgotten, and asked for again they are rendered, the same."""
    dataset, style = load_dataset(None), STYLES["paper"]
    first, second = dataset.test[:60], dataset.test[60:120]
    monkeypatch.setattr(prompts, "_REMEMBERED_MAX", 100)
    prompts.remember_questions(style, 0, first, ["first"] * 60)
    assert question(first[0], style, 0) == "first"
    prompts.remember_questions(style, 0, second, ["second"] * 60)
    assert len(prompts._REMEMBERED[(style, 0)]) == 60
    assert question(second[0], style, 0) == "second"
    assert question(first[0], style, 0) == rendered_question.__wrapped__(first[0], style, 0)

"""Inspect adapter for AbsPyramid: ``inspect eval conceptcomb/abspyramid_det_noun`` and friends.

Every task takes ``-T data_dir=...`` (a folder with the hub files), ``-T split=valid`` and
``-T seed=N`` (the draw of the in-context demonstrations of ``_icl`` and ``_icl_cot``,
default 0; the same seed shows an item the same demonstrations as lm-eval's ``--metadata``).

The log-likelihood detection tasks need the probability of "Yes" against "No". Inspect has
no log-likelihood call that most providers serve, so they ask for one token with
``logprobs`` and read P(Yes) from the first token's top 20 alternatives (providers that
return logprobs: OpenAI, vLLM and other OpenAI-compatible servers, Inspect's ``hf``, ...).
With ``--apply_chat_template`` and single-token answers lm-eval scores the same token; it
uses the full log-likelihoods, we the top alternatives, so the numbers agree closely, not
exactly. A model that returns no logprobs stops the task with an error naming the
generative alternatives (``_zs``, ``_icl``).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task

from conceptcomb.abspyramid.inspect_adapter import abspyramid_task
from conceptcomb.abspyramid.tasks import (
    all_specs,
)

# One @task per task name, each a call into a builder of `inspect_adapter`.


@task
def abspyramid_det_noun(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (noun, abstraction prompt, ll)."""
    return abspyramid_task("abspyramid_det_noun", data_dir, split, seed)


@task
def abspyramid_det_noun_zs(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (noun, abstraction prompt, zs)."""
    return abspyramid_task("abspyramid_det_noun_zs", data_dir, split, seed)


@task
def abspyramid_det_noun_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (noun, abstraction prompt, cot)."""
    return abspyramid_task("abspyramid_det_noun_cot", data_dir, split, seed)


@task
def abspyramid_det_noun_icl(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (noun, abstraction prompt, icl)."""
    return abspyramid_task("abspyramid_det_noun_icl", data_dir, split, seed)


@task
def abspyramid_det_noun_icl_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (noun, abstraction prompt, icl_cot)."""
    return abspyramid_task("abspyramid_det_noun_icl_cot", data_dir, split, seed)


@task
def abspyramid_det_noun_nli(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (noun, NLI-format prompt, zs)."""
    return abspyramid_task("abspyramid_det_noun_nli", data_dir, split, seed)


@task
def abspyramid_det_noun_nli_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (noun, NLI-format prompt, cot)."""
    return abspyramid_task("abspyramid_det_noun_nli_cot", data_dir, split, seed)


@task
def abspyramid_det_verb(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (verb, abstraction prompt, ll)."""
    return abspyramid_task("abspyramid_det_verb", data_dir, split, seed)


@task
def abspyramid_det_verb_zs(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (verb, abstraction prompt, zs)."""
    return abspyramid_task("abspyramid_det_verb_zs", data_dir, split, seed)


@task
def abspyramid_det_verb_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (verb, abstraction prompt, cot)."""
    return abspyramid_task("abspyramid_det_verb_cot", data_dir, split, seed)


@task
def abspyramid_det_verb_icl(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (verb, abstraction prompt, icl)."""
    return abspyramid_task("abspyramid_det_verb_icl", data_dir, split, seed)


@task
def abspyramid_det_verb_icl_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (verb, abstraction prompt, icl_cot)."""
    return abspyramid_task("abspyramid_det_verb_icl_cot", data_dir, split, seed)


@task
def abspyramid_det_verb_nli(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (verb, NLI-format prompt, zs)."""
    return abspyramid_task("abspyramid_det_verb_nli", data_dir, split, seed)


@task
def abspyramid_det_verb_nli_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (verb, NLI-format prompt, cot)."""
    return abspyramid_task("abspyramid_det_verb_nli_cot", data_dir, split, seed)


@task
def abspyramid_det_event(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (event, abstraction prompt, ll)."""
    return abspyramid_task("abspyramid_det_event", data_dir, split, seed)


@task
def abspyramid_det_event_zs(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, abstraction prompt, zs)."""
    return abspyramid_task("abspyramid_det_event_zs", data_dir, split, seed)


@task
def abspyramid_det_event_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, abstraction prompt, cot)."""
    return abspyramid_task("abspyramid_det_event_cot", data_dir, split, seed)


@task
def abspyramid_det_event_icl(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, abstraction prompt, icl)."""
    return abspyramid_task("abspyramid_det_event_icl", data_dir, split, seed)


@task
def abspyramid_det_event_icl_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, abstraction prompt, icl_cot)."""
    return abspyramid_task("abspyramid_det_event_icl_cot", data_dir, split, seed)


@task
def abspyramid_det_event_nli(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, NLI-format prompt, zs)."""
    return abspyramid_task("abspyramid_det_event_nli", data_dir, split, seed)


@task
def abspyramid_det_event_nli_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (event, NLI-format prompt, cot)."""
    return abspyramid_task("abspyramid_det_event_nli_cot", data_dir, split, seed)


@task
def abspyramid_det_all(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (all, abstraction prompt, ll)."""
    return abspyramid_task("abspyramid_det_all", data_dir, split, seed)


@task
def abspyramid_det_all_zs(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (all, abstraction prompt, zs)."""
    return abspyramid_task("abspyramid_det_all_zs", data_dir, split, seed)


@task
def abspyramid_det_all_cot(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (all, abstraction prompt, cot)."""
    return abspyramid_task("abspyramid_det_all_cot", data_dir, split, seed)


@task
def abspyramid_det_all_icl(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (all, abstraction prompt, icl)."""
    return abspyramid_task("abspyramid_det_all_icl", data_dir, split, seed)


@task
def abspyramid_det_all_icl_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (all, abstraction prompt, icl_cot)."""
    return abspyramid_task("abspyramid_det_all_icl_cot", data_dir, split, seed)


@task
def abspyramid_det_all_nli(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction detection (all, NLI-format prompt, zs)."""
    return abspyramid_task("abspyramid_det_all_nli", data_dir, split, seed)


@task
def abspyramid_det_all_nli_cot(
    data_dir: str | None = None, split: str = "test", seed: int = 0
) -> Task:
    """AbsPyramid abstraction detection (all, NLI-format prompt, cot)."""
    return abspyramid_task("abspyramid_det_all_nli_cot", data_dir, split, seed)


@task
def abspyramid_gen_noun(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction generation (noun)."""
    return abspyramid_task("abspyramid_gen_noun", data_dir, split, seed)


@task
def abspyramid_gen_verb(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction generation (verb)."""
    return abspyramid_task("abspyramid_gen_verb", data_dir, split, seed)


@task
def abspyramid_gen_event(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction generation (event)."""
    return abspyramid_task("abspyramid_gen_event", data_dir, split, seed)


@task
def abspyramid_gen_all(data_dir: str | None = None, split: str = "test", seed: int = 0) -> Task:
    """AbsPyramid abstraction generation (all)."""
    return abspyramid_task("abspyramid_gen_all", data_dir, split, seed)


# Every task by name, from the functions above (a task missing its function fails here).
TASKS: dict[str, Callable[..., Task]] = {spec.name: globals()[spec.name] for spec in all_specs()}

"""Inspect adapter: ``inspect eval conceptcomb/mcrae_esslli44`` and ``conceptcomb/mcrae_all``.

Options: ``-T data_dir=...``, ``-T tie_rule=norms_order|all_tied``,
``-T senses=tagged|all``. Each sample is one concept; the scorer returns the concept's
metrics and Inspect's ``mean()`` averages them over concepts, as lm-eval does.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task

from conceptcomb.mcrae.inspect_adapter import mcrae_task
from conceptcomb.mcrae.tasks import all_specs

# One @task per task name, each a call into a builder of `inspect_adapter`.


@task
def mcrae_esslli44(
    data_dir: str | None = None, tie_rule: str | None = None, senses: str | None = None
) -> Task:
    """McRae property generation on the 44 ESSLLI 2008 nouns (the seed's evaluation)."""
    return mcrae_task("mcrae_esslli44", data_dir, tie_rule, senses)


@task
def mcrae_all(
    data_dir: str | None = None, tie_rule: str | None = None, senses: str | None = None
) -> Task:
    """McRae property generation on every concept of the norms."""
    return mcrae_task("mcrae_all", data_dir, tie_rule, senses)


# Every task by name, from the functions above (a task missing its function fails here).
TASKS: dict[str, Callable[..., Task]] = {spec.name: globals()[spec.name] for spec in all_specs()}

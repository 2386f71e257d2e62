"""The generated task YAML, as lm-eval 0.4.13 reads it, is what each benchmark declares.

Leaves are a few lines that ``include`` a template per kind, templates include templates,
and a leaf's key replaces the template's whole value: this reads every folder through
lm-eval's own index (includes merged, no dataset built) and compares each task's config
with the declaration's, then has lm-eval import every ``!function`` it names.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from lm_eval.tasks._yaml_loader import load_yaml

from conceptcomb.benchmarks import benchmarks
from conceptcomb.frameworks.lm_eval_yaml import TaskYaml, lm_eval_configs, plain

BENCHMARKS = tuple(benchmark.key for benchmark in benchmarks())


def _declared(key: str) -> tuple[TaskYaml, Path]:
    module = importlib.import_module(f"conceptcomb.{key}.lm_eval_yaml")
    return module.declaration(), module.YAML_DIR


@pytest.mark.parametrize("key", BENCHMARKS)
def test_lm_eval_resolves_every_task_as_declared(key: str) -> None:
    declaration, folder = _declared(key)
    found = lm_eval_configs(folder)
    groups = {group.name: group for group in declaration.groups}
    assert sorted(found) == sorted([leaf.task for leaf in declaration.leaves] + list(groups))
    for leaf in declaration.leaves:
        assert found[leaf.task] == declaration.resolved(leaf), leaf.task
    for name, group in groups.items():
        expected = {"group": name, "task": group.tasks, "metadata": plain(group.metadata)}
        assert found[name] == expected


@pytest.mark.parametrize("key", BENCHMARKS)
def test_every_function_a_task_names_imports(key: str) -> None:
    declaration, folder = _declared(key)
    for leaf in declaration.leaves:
        config = load_yaml(folder / f"{leaf.task}.yaml", resolve_func=True)
        assert callable(config["process_results"]), leaf.task
        assert callable(config["custom_dataset"]), leaf.task
        for metric in config["metric_list"]:
            assert metric["aggregation"] == "mean" or callable(metric["aggregation"]), leaf.task


def test_task_yaml_totals_at_most_1000_lines() -> None:
    """Templates per kind and short leaves (issue 15: 2,076 lines before)."""
    folders = [_declared(key)[1] for key in BENCHMARKS]
    lines = sum(
        len(path.read_text().splitlines())
        for f in folders
        for path in f.iterdir()
        if path.is_file()
    )
    assert lines <= 1000


# The variant families (issue 26): `lm_eval --tasks <tag>` runs every task of one variant.
EXPECTED_TAGS = {
    "ccpt": {
        "ccpt_cot",
        "ccpt_full",
        "ccpt_full_cot",
        "ccpt_oracle",
        "ccpt_sa_conceptnet_nofilter",
    },
    "cggc": {"cggc_script", "cggc_verified", "cggc_order", "cggc_level"},
    "abspyramid": {
        f"abspyramid_{method}"
        for method in ("ll", "zs", "cot", "icl", "icl_cot", "nli", "nli_cot", "gen")
    },
    "mcrae": set(),  # two tasks, no variants
}


@pytest.mark.parametrize("key", BENCHMARKS)
def test_each_tag_resolves_to_its_family_in_lm_eval(key: str, monkeypatch) -> None:
    """lm-eval's own index and tag expansion (the path of `lm_eval --tasks <tag>`), with the
    building of each task replaced by its name: no dataset, no model."""
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._index import Kind

    declaration, folder = _declared(key)
    declared = declaration.tags()
    assert set(declared) == EXPECTED_TAGS[key]
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    assert sorted(manager.all_tags) == sorted(declared)
    own = {leaf.task for leaf in declaration.leaves} | {group.name for group in declaration.groups}
    monkeypatch.setattr(manager._factory, "_build_task", lambda entry, overrides: entry.name)
    for tag, tasks in declared.items():
        assert tag not in own and manager.task_index[tag].kind == Kind.TAG
        assert manager.match_tasks([tag]) == [tag]  # the CLI's name check accepts it
        assert manager._load_spec(tag) == sorted(tasks), tag
    # no task outside a family: each is in a group or carries a tag (McRae: no variants)
    grouped = {task for group in declaration.groups for task in group.tasks}
    loose = [leaf.task for leaf in declaration.leaves if not leaf.tags and leaf.task not in grouped]
    assert loose == ([] if key != "mcrae" else ["mcrae_esslli44", "mcrae_all"])

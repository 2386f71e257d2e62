"""lm-eval's own task checks (the logic of its ``tests/test_tasks.py``, offline) on every task
that builds without a judge; the tasks that need judge settings say so when built without.

Each task is built by lm-eval from our YAML (the AbsPyramid tasks on the tests' files, the
others on their packaged or ../shared data) and must pass what lm-eval asks of every task:
its docs load, its splits are declared, ``doc_to_text`` gives a string (not ending in
whitespace when the target delimiter is whitespace), ``doc_to_choice`` a list of strings,
``doc_to_target`` an int or a string for multiple choice, and its requests build.
"""

from __future__ import annotations

import importlib
from itertools import islice

import pytest
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks import TaskManager

from conceptcomb.benchmarks import benchmarks
from conceptcomb.common.lm_eval_paths import tasks_path
from conceptcomb.frameworks.lm_eval_our_tasks import our_task_manager
from tests.abspyramid.conftest import data_folder

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

LIMIT = 10

# lm-eval's TaskManager indexing our task folder only, not lm-eval's ~14,000 task files (the
# same task from the same YAML: tests/frameworks/test_lm_eval_our_tasks.py).
OurTaskManager = our_task_manager(TaskManager)


def lm_eval_tasks() -> list[tuple[object, str]]:
    """(benchmark, task) for every lm-eval task (Inspect-only names, such as
    ``conceptcomb/cggc``, left out: ``cggc`` is an lm-eval group)."""
    return [
        (b, leaf.task)
        for b in benchmarks()
        for leaf in importlib.import_module(
            b.inspect_tasks.replace("inspect_tasks", "lm_eval_yaml")
        )
        .declaration()
        .leaves
    ]


NO_JUDGE = [(b.key, t) for b, t in lm_eval_tasks() if not b.judged(t)]
JUDGED = [(b.key, t) for b, t in lm_eval_tasks() if b.judged(t)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ConfigurableTask]:
    """Every task without a judge, built by lm-eval (one task manager per benchmark). Its
    first user pays it: four task managers, each indexing our task folder only (not
    lm-eval's ~14,000 task files, ~11 s each at load 7), then 53 tasks built, each loading
    its docs (32 AbsPyramid tasks on the tests' files; CGGC's 17 on the shipped dataset,
    each drawing every test item's demonstrations): 78 s of setup in
    test_lm_eval_task_checks[abspyramid_det_all_icl_cot], nearly all of it building the
    tasks (114 s with lm-eval's full index; both on 2 cores at load 4.5-5.5, 2026-12-06)."""
    abspyramid_dir = data_folder(tmp_path_factory.mktemp("data") / "abspyramid")
    found: dict[str, ConfigurableTask] = {}
    for key in sorted({key for key, _ in NO_JUDGE}):
        metadata = {"data_dir": str(abspyramid_dir)} if key == "abspyramid" else {}
        manager = OurTaskManager(include_path=str(tasks_path()), metadata=metadata)
        names = [task for k, task in NO_JUDGE if k == key]
        found.update(manager.load(names)["tasks"])
    return found


def docs(task: ConfigurableTask) -> list[dict]:
    source = task.test_docs() if task.has_test_docs() else task.validation_docs()
    return list(islice(source, LIMIT))


@pytest.mark.parametrize("name", [task for _, task in NO_JUDGE])
def test_lm_eval_task_checks(built: dict[str, ConfigurableTask], name: str) -> None:
    """lm-eval's checks on one task (the module docstring). The first of these tests pays
    the module's `built`, every task built by lm-eval: 78 s of setup for
    [abspyramid_det_all_icl_cot] (on 2 cores at load 4.5-5.5, 2026-12-06)."""
    task = built[name]
    assert task.dataset is not None  # test_download
    for split in ("training", "validation", "test"):  # test_check_*_docs
        assert getattr(task, f"has_{split}_docs")() in (True, False)
        if getattr(task, f"has_{split}_docs")():
            assert task._config[f"{split}_split"] is not None
    assert task.should_decontaminate() in (True, False)
    if task.should_decontaminate():
        assert task._config["doc_to_decontamination_query"] is not None
    sample = docs(task)
    assert sample
    delimiter = task.config.target_delimiter
    if not task.multiple_input:  # test_doc_to_text
        for text in (task.doc_to_text(doc) for doc in sample):
            assert isinstance(text, str)
            if delimiter.isspace() and text:
                assert not text[-1].isspace(), f"{name}: doc_to_text ends in whitespace"
    if "multiple_choice" in task._config.output_type:  # test_create_choices
        choices = [task.doc_to_choice(doc) for doc in sample]
        assert all(isinstance(c, list) and isinstance(c[0], str) for c in choices)
        targets = [task.doc_to_target(doc) for doc in sample]
        assert all(isinstance(t, int | str) for t in targets)  # test_doc_to_target
    task.build_all_requests(rank=0, limit=LIMIT, world_size=1)  # test_build_all_requests
    assert task.instances
    requests = [  # test_construct_requests
        task.construct_requests(doc=doc, ctx=[""] if task.multiple_input else task.doc_to_text(doc))
        for doc in sample
    ]
    assert len(requests) == len(sample)


def test_a_judged_task_without_judge_settings_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judged tasks (CCPT's generative ones, CGGC's ``_verified``) need judge settings:
    built with none (no key, no judge option) lm-eval stops with one line naming them."""
    assert JUDGED
    for variable in ("OPENAI_API_KEY", "CONCEPTCOMB_JUDGE", "CONCEPTCOMB_JUDGE_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    manager = OurTaskManager(include_path=str(tasks_path()))
    for key in sorted({key for key, _ in JUDGED}):
        name = next(task for k, task in JUDGED if k == key)
        with pytest.raises(Exception) as raised:
            manager.load([name])
        assert "judge" in str(raised.value).lower(), (name, str(raised.value)[:500])

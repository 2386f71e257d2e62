"""Ordered demonstrations on a task that is not CGGC, through the real lm_eval and inspect eval.

The example of docs/ordered-demonstrations.md (examples/easy_to_hard: sums at three levels)
is run as that page writes it, on the packaged SmolLM2, then again with other seeds and
settings: every prompt's demonstrations are easy-to-hard (reversed for hard-to-easy), one
per level, never the item itself, the same for one seed, different for another, and the
same in both frameworks.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from lm_eval.tasks import TaskManager

from conceptcomb.common.errors import ConfigError
from conceptcomb.testing.commands import inspect_eval_command, lm_eval_command
from tests.conftest import REPO, read_jsonl

EXAMPLE = REPO / "examples" / "easy_to_hard"
ARITH_INSPECT = "examples/easy_to_hard/arith_inspect.py@arith_easy2hard"  # run from the copy
PAGE = REPO / "docs" / "ordered-demonstrations.md"  # the top README links to it
LEVELS = ["easy", "medium", "hard"]
ITEMS = {
    x["question"]: x for split in ("train", "test") for x in read_jsonl(EXAMPLE / f"{split}.jsonl")
}
QUESTION = re.compile(r"What is \d+ \+ \d+\?")

pytestmark = pytest.mark.slow


def readme_section() -> str:
    """The page that shows the example (it moved out of the top README, issue 26)."""
    return PAGE.read_text(encoding="utf-8")


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def commands(block: str) -> list[str]:
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_readme_shows_the_example_as_it_is() -> None:
    section = readme_section()
    assert code_blocks(section, "yaml") == [(EXAMPLE / "arith_easy2hard.yaml").read_text()]
    assert code_blocks(section, "python") == [(EXAMPLE / "arith_inspect.py").read_text()]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like the repository root, holding the example (the README's
    commands run there), and a home of its own for the tokenizer `conceptcomb smollm2` writes."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(EXAMPLE, root / "examples" / "easy_to_hard")
    (root / "home").mkdir()
    return root


def run(command: str | list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cwd / "home")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    args = ["bash", "-c", command] if isinstance(command, str) else command
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return done


@pytest.fixture(scope="module")
def readme_run(workdir: Path) -> Path:
    """The README's two commands, as written (lm-eval and Inspect on SmolLM2). Its first
    user pays it: `conceptcomb smollm2 --args` converts the GGUF once in the fresh HOME,
    then lm_eval generates the 9 test questions of both tasks and inspect eval those of
    one, each process loading SmolLM2: 217 s of setup in
    test_one_seed_one_draw_another_seed_another (on 2 cores at load 4-7, 2026-12-06)."""
    for command in commands(code_blocks(readme_section(), "bash")[0]):
        run(command, workdir)
    return workdir / "out" / "arith"


def lm_eval_demonstrations(out: Path, task: str) -> dict[str, list[str]]:
    """item id -> its demonstrations' ids, in the order the logged prompt shows them."""
    found = {}
    for sample in read_jsonl(next(out.rglob(f"samples_{task}_*.jsonl"))):
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        shown = [ITEMS[q]["id"] for q in QUESTION.findall(prompt)]
        assert shown[-1] == sample["doc"]["id"]  # the question comes last
        found[sample["doc"]["id"]] = shown[:-1]
    return found


def inspect_demonstrations(log_dir: Path) -> dict[str, list[str]]:
    log = read_eval_log(list_eval_logs(str(log_dir))[-1])
    assert log.status == "success", log.error
    found = {}
    for sample in log.samples or []:
        questions = [m.text for m in sample.messages if m.role == "user"]
        shown = [ITEMS[q]["id"] for q in questions]
        assert shown[-1] == sample.id and sample.metadata["fewshot_ids"] == shown[:-1]
        answers = [m.text for m in sample.messages[:-1] if m.role == "assistant"]
        assert answers == [ITEMS[q]["answer"] for q in questions[:-1]]  # each with its answer
        found[str(sample.id)] = shown[:-1]
    return found


def levels(ids: list[str]) -> list[str]:
    by_id = {x["id"]: x for x in ITEMS.values()}
    return [by_id[i]["level"] for i in ids]


def test_readme_run_orders_every_prompt(readme_run: Path) -> None:
    easy = lm_eval_demonstrations(readme_run, "arith_easy2hard")
    hard = lm_eval_demonstrations(readme_run, "arith_hard2easy")
    assert len(easy) == 9 and easy.keys() == hard.keys()
    for item, shown in easy.items():
        assert levels(shown) == LEVELS  # three levels, three slots: one each, easiest first
        assert hard[item] == shown[::-1]  # the same demonstrations, hardest first
        assert all(i.startswith("train-") for i in shown)  # from fewshot_split, never the item
    assert len({tuple(shown) for shown in easy.values()}) > 1  # drawn per item
    results = json.loads(next(readme_run.rglob("results_*.json")).read_text())
    assert results["n-shot"]["arith_easy2hard"] == 3
    assert 0 <= results["results"]["arith_easy2hard"]["exact_match,first_number"] <= 1


def test_inspect_shows_each_item_what_lm_eval_shows(readme_run: Path) -> None:
    assert inspect_demonstrations(readme_run) == lm_eval_demonstrations(
        readme_run, "arith_easy2hard"
    )


def dummy_lm_eval(workdir: Path, out: str, tasks: str, **options: str) -> Path:
    run(lm_eval_command(tasks, model="dummy", include_path=workdir / "examples/easy_to_hard",
                        num_fewshot=3, log_samples=True, output_path=workdir / out,
                        **options), workdir)  # fmt: skip
    return workdir / out


def mock_inspect(workdir: Path, out: str, **task_args: str) -> Path:
    run(inspect_eval_command(ARITH_INSPECT, model="mockllm/model", task_args=task_args,
                             log_dir=out), workdir)  # fmt: skip
    return workdir / out


def test_one_seed_one_draw_another_seed_another(readme_run: Path, workdir: Path) -> None:
    """The same seed draws the same demonstrations, another seed others, in both
    frameworks. 292 s on 2 cores at load 4-7 (2026-12-06): 217 s of setup, the module's
    `readme_run` (its first user pays it), and 75 s for four more runs, each a fresh
    process: two lm_eval (model dummy) and two inspect eval (mockllm)."""
    first = lm_eval_demonstrations(readme_run, "arith_easy2hard")
    again = lm_eval_demonstrations(
        dummy_lm_eval(workdir, "again", "arith_easy2hard"), "arith_easy2hard"
    )
    assert again == first  # another run, the same (default) seed
    seven = dummy_lm_eval(workdir, "seed7", "arith_easy2hard", seed="0,1234,1234,7")
    other = lm_eval_demonstrations(seven, "arith_easy2hard")
    assert other != first and all(levels(shown) == LEVELS for shown in other.values())
    # Inspect: the same seed gives lm-eval's draw, seed 7 lm-eval's seed-7 draw
    assert inspect_demonstrations(mock_inspect(workdir, "inspect1234")) == first
    assert inspect_demonstrations(mock_inspect(workdir, "inspect7", seed="7")) == other


def test_drawn_from_the_evaluated_split_never_the_item_itself(workdir: Path) -> None:
    """fewshot_split == test_split: the pool holds the item, which is never shown."""
    (workdir / "examples/easy_to_hard/arith_within_test.yaml").write_text(
        "include: arith_easy2hard.yaml\ntask: arith_within_test\nfewshot_split: test\n"
    )
    out = dummy_lm_eval(workdir, "within", "arith_within_test")
    shown = lm_eval_demonstrations(out, "arith_within_test")
    assert len(shown) == 9
    for item, ids in shown.items():
        assert item not in ids and all(i.startswith("test-") for i in ids)
        assert levels(ids) == LEVELS


def in_process_task(workdir: Path, **metadata: object):
    manager = TaskManager(
        include_path=str(workdir / "examples/easy_to_hard"), include_defaults=False,
        metadata=metadata,
    )  # fmt: skip
    task = manager.load(["arith_easy2hard"])["tasks"]["arith_easy2hard"]
    task.set_fewshot_seed(1234)
    return task, list(task.test_docs())


def test_order_and_level_from_metadata(workdir: Path) -> None:
    task, docs = in_process_task(workdir, fewshot_order="level=medium")
    for doc in docs:
        prompt = task.fewshot_context(doc, num_fewshot=3)
        shown = [ITEMS[q]["id"] for q in QUESTION.findall(prompt)][:-1]
        assert levels(shown) == ["medium"] * 3


@pytest.mark.parametrize(
    ("metadata", "num_fewshot", "message"),
    [
        ({"fewshot_difficulty": "grade"}, 3,
         "few-shot doc 0 (split train): no difficulty field 'grade'"),
        ({"fewshot_order": "sideways"}, 3,
         "arith_easy2hard: fewshot_order='sideways': unknown order"),
        ({}, 40, "k=40 demonstrations asked for, but the pool holds 36"),
        ({"fewshot_levels": "easy<medium<hard<expert", "fewshot_order": "level=expert"}, 3,
         "fewshot_order=level=expert: no demonstration of that level"),
        ({"fewshot_levels": "easy<hard"}, 3,
         "difficulty level='medium' is not one of the declared"),
        ({"fewshot_id": "key"}, 3, "no id field 'key'"),
        ({"fewshot_oder": "random"}, 3, "unknown metadata fewshot_oder"),
    ],
)  # fmt: skip
def test_bad_configuration_is_one_line_naming_it(
    workdir: Path, metadata: dict, num_fewshot: int, message: str
) -> None:
    task, docs = in_process_task(workdir, **metadata)
    with pytest.raises(ConfigError) as error:
        task.fewshot_context(docs[0], num_fewshot=num_fewshot)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_bad_configuration_on_the_command_lines(workdir: Path) -> None:
    command = lm_eval_command("arith_easy2hard", model="dummy",
                              include_path=workdir / "examples/easy_to_hard",
                              metadata={"fewshot_order": "sideways"})  # fmt: skip
    done = run(command, workdir, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("conceptcomb: error: arith_easy2hard: fewshot_order='sideways'")
    command = inspect_eval_command(ARITH_INSPECT, model="mockllm/model", task_args={"k": 37},
                                   log_dir="bad")  # fmt: skip
    done = run(command, workdir, check=False)
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert "conceptcomb: error: k=37 demonstrations asked for, but the pool holds 36" in output


def run_solver(solver, sample_id: str, question: str):
    import asyncio

    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelName
    from inspect_ai.solver import TaskState

    messages = [ChatMessageSystem(content="Add."), ChatMessageUser(content=question)]
    state = TaskState(ModelName("mockllm/model"), sample_id, 1, question, messages)
    return asyncio.run(solver(state, None))  # type: ignore[arg-type]


def test_text_demonstrations_from_a_csv_pool(tmp_path: Path) -> None:
    """``template`` renders the demonstrations as text before the question; a CSV pool."""
    from conceptcomb.samplers import fewshot_pool, ordered_fewshot

    rows = read_jsonl(EXAMPLE / "train.jsonl")
    with (tmp_path / "pool.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    pool = fewshot_pool(tmp_path / "pool.csv", input="question", target="answer",
                        difficulty="level")  # fmt: skip
    solver = ordered_fewshot(pool, k=3, difficulty="level", levels="easy<medium<hard",
                             template="Q: {input} ({level})\nA: {target}")  # fmt: skip
    state = run_solver(solver, "test-00", "What is 8 + 7?")
    roles = [m.role for m in state.messages]
    assert roles == ["system", "user"]
    text = state.messages[1].text
    assert text.endswith("\n\nWhat is 8 + 7?") and text.count("Q: ") == 3
    shown = [ITEMS[q]["id"] for q in QUESTION.findall(text)][:-1]
    assert shown == state.metadata["fewshot_ids"] and levels(shown) == LEVELS
    assert "(easy)\nA: " in text
    with pytest.raises(ConfigError, match="template="):
        ordered_fewshot(pool, difficulty="level", levels="easy<medium<hard",
                        template="{nothing}")  # fmt: skip


def test_pool_samples_need_ids_and_difficulties(tmp_path: Path) -> None:
    from inspect_ai.dataset import Sample

    from conceptcomb.samplers import fewshot_pool, ordered_fewshot

    with pytest.raises(ConfigError, match="pool sample 0 has no id"):
        ordered_fewshot([Sample(input="q", target="a", metadata={"difficulty": 1})], k=1)
    with pytest.raises(ConfigError, match="has no difficulty field 'level'"):
        fewshot_pool([Sample(input="q", target="a", id="x", metadata={})], difficulty="level")
    with pytest.raises(ConfigError, match="order='sideways'"):
        ordered_fewshot([Sample(input="q", target="a", id="x", metadata={"difficulty": 1})],
                        k=1, order="sideways")  # fmt: skip


def test_the_sampler_says_which_lm_eval_it_needs() -> None:
    """Called other than from lm-eval's fewshot_context (another lm-eval), one clear line."""
    from conceptcomb.samplers import EasyToHard

    sampler = EasyToHard([{"id": "a", "difficulty": 1}, {"id": "b", "difficulty": 2}])
    with pytest.raises(ConfigError, match=r"use lm-eval >=0.4.13,<0.5"):
        sampler.sample(1, eval_doc={"id": "c"})
    assert sampler.sample(0) == []

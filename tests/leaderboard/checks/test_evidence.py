"""Verifiable bundles without a model: the full CCPT group (1,534 items) scored with the
authors' recorded answers and GPT-4o's recorded ratings, the templates' hash, the report
read from a folder of bundles."""

from __future__ import annotations

import ast
import contextlib
import csv
import importlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import default_specs
from conceptcomb.cli import main
from conceptcomb.common.evidence import decode, encode
from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.bundles.templates import (
    RENDERERS,
    judge_prompt_sha256,
    rendered_templates,
    templates_sha256,
)
from conceptcomb.leaderboard.checks.validate import check_bundle
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_ratings
from tests.ccpt.test_scoring import TABLE_3_GOLD

REPO = Path(__file__).resolve().parents[3]
PROMPT_MODULES = {
    "ccpt": [
        "conceptcomb.ccpt.prompts",
        "conceptcomb.ccpt.methods.spreading_prompts",
        "conceptcomb.scorers.relevance",
    ],
    "mcrae": ["conceptcomb.mcrae.prompts"],
    "cggc": ["conceptcomb.cggc.prompts", "conceptcomb.scorers.verification"],
    "abspyramid": ["conceptcomb.abspyramid.prompts"],
}


def run_cli(*args: str) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    return code, printed.getvalue()


# --- templates -----------------------------------------------------------------------------
# Module strings that are not prompt text.
NOT_TEMPLATES = {"IDENTITY_SUFFIX"}


def _strings(node: ast.AST):
    """String literals in an expression; dictionary keys (names of variants) left out."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    children = node.values if isinstance(node, ast.Dict) else ast.iter_child_nodes(node)
    for child in children:
        yield from _strings(child)


def _string_constants(module_name: str) -> list[tuple[str, str]]:
    """Every string literal assigned at module level, whatever the variable's name."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            name = getattr(target, "id", "?")
            if name not in NOT_TEMPLATES:
                found += [(name, value) for value in _strings(node.value)]
    return found


def _fragments(text: str) -> list[str]:
    """The text between placeholders ({name}, <<name>>), with format escapes undone."""
    text = text.replace("{{", "{").replace("}}", "}")
    return [part for part in re.split(r"\{[a-z_0-9]*\}|<<\w+>>", text) if part.strip()]


@pytest.mark.parametrize("benchmark", sorted(RENDERERS))
def test_every_prompt_constant_is_in_the_rendered_templates(benchmark: str) -> None:
    """Not by naming convention: every string of the prompt modules, whatever its name,
    reaches some rendered template of the benchmark (so a change moves the hash)."""
    rendered = "\n".join(rendered_templates(benchmark).values())
    rendered += "\n" + json.dumps(rendered_templates(benchmark))  # JSON-rendered turns
    for module in PROMPT_MODULES[benchmark]:
        for name, value in _string_constants(module):
            for fragment in _fragments(value):
                assert fragment in rendered, f"{module}.{name}: {fragment[:60]!r} not hashed"


@pytest.mark.parametrize(
    ("module", "name", "benchmark", "judge"),
    [
        ("conceptcomb.scorers.relevance", "RELEVANCE_PROMPT", "ccpt", True),
        ("conceptcomb.ccpt.methods.spreading_prompts", "ACTIVATION_PROMPT", "ccpt", False),
        ("conceptcomb.ccpt.methods.spreading_prompts", "FILTER_PROMPT", "ccpt", False),
        ("conceptcomb.ccpt.prompts", "_EXAMPLES_LEAD", "ccpt", False),
        ("conceptcomb.ccpt.prompts", "SYSTEM_PROMPT", "ccpt", False),
        ("conceptcomb.mcrae.prompts", "PROMPT", "mcrae", False),
        ("conceptcomb.scorers.verification", "VERIFICATION_PROMPT", "cggc", True),
    ],
)
def test_changing_any_template_changes_the_hash(
    module: str, name: str, benchmark: str, judge: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, judge_before = templates_sha256(benchmark), judge_prompt_sha256(benchmark)
    imported = importlib.import_module(module)
    monkeypatch.setattr(imported, name, getattr(imported, name) + " ")
    assert templates_sha256(benchmark) != before
    assert (judge_prompt_sha256(benchmark) != judge_before) is judge


# --- the full CCPT group (`group_bundle`: the session's, tests/leaderboard/conftest.py) -------


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.shared_data
def test_full_group_bundle_is_small_and_verified(group_bundle: Path) -> None:
    assert group_bundle.stat().st_size < 2 * 1024 * 1024
    bundle = load(group_bundle)
    assert bundle["model"]["label"] == "ccpt-recorded-answers"
    tasks = {task["task"]: task for task in bundle["tasks"]}
    assert set(tasks) == {spec.name for spec in default_specs()}
    assert sum(task["evidence"]["items"] for task in tasks.values()) == 1534
    check = check_bundle(bundle)
    assert check.problems == []
    assert {task.task: task.status for task in check.tasks} == dict.fromkeys(tasks, "verified")
    code, printed = run_cli("validate-bundle", str(group_bundle))
    assert code == 0
    assert "ccpt_tp: verified (all 1000 test items)" in printed
    judge = tasks["ccpt_pi_emergent"]["judge"]
    assert (judge["kind"], judge["model"]) == ("api-chat", "gpt-4o")
    assert (judge["temperature"], judge["max_tokens"], judge["format_retries"]) == (0, 1024, 3)
    assert judge["endpoint"] is None  # the loopback server's address is nowhere
    assert "127.0.0.1" not in group_bundle.read_text(encoding="utf-8")
    assert judge["prompt_sha256"] == judge_prompt_sha256("ccpt")
    # The dataset's own answers: all types right, and Table 3's row of the gold answers.
    assert tasks["ccpt_tp"]["metrics"]["accuracy"]["value"] == 100.0
    for kind, (_, published) in TABLE_3_GOLD.items():
        metrics = tasks[f"ccpt_{kind}"]["metrics"]
        assert {name: round(metrics[name]["value"], 1) for name in published} == published


def _edited(bundle: dict, task: str, edit) -> dict:
    record = next(t for t in bundle["tasks"] if t["task"] == task)
    items = decode(record["evidence"], "test")
    edit(items)
    record["evidence"] = encode(items)
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


@pytest.mark.shared_data
def test_items_outside_the_test_set_or_twice_are_refused(group_bundle: Path) -> None:
    def foreign_and_twice(items: list) -> None:
        key = items[0]["id"].split(":", 1)[1]
        items[0]["id"] = f"{'0' * 64}:{key}"  # another release of the file
        items[2]["id"] = items[1]["id"]

    problems = check_bundle(_edited(load(group_bundle), "ccpt_tp", foreign_and_twice)).problems
    assert any("ccpt_tp item tp_test:0: not an item of the task's test set" in p for p in problems)
    assert any("ccpt_tp item tp_test:1: stored twice" in p for p in problems)


@pytest.mark.shared_data
def test_a_dropped_item_breaks_the_claimed_metrics(group_bundle: Path) -> None:
    problems = check_bundle(
        _edited(load(group_bundle), "ccpt_pi_canceled", lambda i: i.pop())
    ).problems
    assert (
        "evidence: ccpt_pi_canceled: the run evaluated 167 items, the evidence holds 166"
        in problems
    )
    assert any(
        p.startswith("evidence: ccpt_pi_canceled metric C: the bundle claims") for p in problems
    )


@pytest.mark.shared_data
def test_rescore_with_the_papers_judge_reproduces_the_full_group(
    group_bundle: Path, tmp_path: Path
) -> None:
    items = [item for spec in default_specs() if spec.generative for item in load_items(spec)]
    with LoopbackServer(ratings=recorded_ratings(items)) as server:
        code, printed = run_cli(
            "validate-bundle", str(group_bundle), "--rescore", "--judge-base-url",
            server.base_url, "--judge-model", "gpt-4o", "--judge-cache", str(tmp_path / "c.sqlite"),
        )  # fmt: skip
        asked = server.stats.requests
    assert code == 0, printed
    assert printed.count("reproduces the claimed metrics (tolerance 0)") == 4
    assert "600 of 600 stored ratings reproduced (100.0%)" in printed  # 200 items x 3
    assert asked > 0


@pytest.mark.shared_data
def test_report_reads_a_folder_of_bundles(group_bundle: Path, tmp_path: Path) -> None:
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / group_bundle.name).write_text(group_bundle.read_text(encoding="utf-8"))
    broken = load(group_bundle)
    broken["tasks"][0]["metrics"]["E"]["value"] = 99.0
    broken["model"]["label"] = "cheater"
    (folder / "cheater.bundle.json").write_text(json.dumps(broken))
    code, printed = run_cli("report", str(folder), "--out", str(tmp_path / "out"), "--no-plots")
    assert code == 0
    assert "note: cheater.bundle.json: INVALID bundle, left out" in printed
    with (tmp_path / "out" / "ccpt_generative.csv").open(newline="") as handle:
        ours = [row for row in csv.DictReader(handle) if row["origin"] == "ours"]
    assert [(row["model"], row["setting"], row["verification"]) for row in ours] == [
        ("ccpt-recorded-answers", "Base", "verified")
    ]
    markdown = (tmp_path / "out" / "ccpt.md").read_text()
    assert "| verification |" in markdown and "| verified |" in markdown


@pytest.mark.shared_data
def test_bundle_benchmark_script_runs() -> None:
    script = REPO / "benchmarks" / "bundle_size.py"
    done = subprocess.run(
        [sys.executable, str(script), "--benchmark", "ccpt"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "== ccpt: 1534 items" in done.stdout
    assert re.search(r"size / 2 MB budget: ratio 0\.\d{3}", done.stdout)
    assert re.search(
        r"validate-bundle in process: \d+\.\d\d s; ratio to 5 s \d+\.\d{3}", done.stdout
    )
    assert done.stdout.count(": verified (all ") == 4


# --- secrets and the multi-oracle, through `conceptcomb score` ------------------------------
FAKE_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"


def score_and_bundle(tmp_path: Path, task: str, lines: list[dict], *judge: str) -> Path:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, printed = run_cli(
        "score", task, "--predictions", str(predictions), "--model-name", "m",
        "--output", str(tmp_path / "r.json"), "--samples-output", str(tmp_path / "s.jsonl"), *judge,
    )  # fmt: skip
    assert code == 0, printed
    code, printed = run_cli("submit-bundle", str(tmp_path / "r.json"), "--out", str(tmp_path))
    assert code == 0 and "(valid)" in printed, printed
    (path,) = tmp_path.glob("*.bundle.json")
    return path


@pytest.mark.shared_data
def test_a_key_in_a_reply_is_redacted_in_the_evidence(tmp_path: Path) -> None:
    items = load_items(default_specs()[-1])[:3]  # ccpt_tp: no judge needed
    lines = [{"doc": item.as_doc(), "response": f'{{"property_type": "{item.label}"}}'}
             for item in items]  # fmt: skip
    lines[1]["response"] += f" (my key is {FAKE_KEY})"
    path = score_and_bundle(tmp_path, "ccpt_tp", lines)
    (task,) = load(path)["tasks"]
    evidence = decode(task["evidence"], "tp")
    assert FAKE_KEY not in json.dumps(evidence) and "<redacted>" in evidence[1]["reply"]
    assert check_bundle(load(path)).problems == []
    evidence[1]["reply"] = lines[1]["response"]  # someone puts it back and reseals
    task["evidence"] = encode(evidence)
    bundle = load(path)
    bundle["tasks"][0]["evidence"] = task["evidence"]
    bundle["content_sha256"] = content_sha256(bundle)
    assert check_bundle(bundle).problems == [
        "secret: bundle.tasks[0].evidence.items[1].reply holds what looks like an "
        "OpenAI/Anthropic-style API key (sk-...)"
    ]


@pytest.mark.shared_data
def test_multi_oracle_items_are_checked_reply_by_reply(tmp_path: Path) -> None:
    spec = next(s for s in default_specs() if s.kind == "pi_emergent")
    items = load_items(spec)[:6]
    lines = [
        {
            "doc": item.as_doc(),
            "responses": [
                json.dumps({"property": item.property}),
                "I cannot say.",
                f'Maybe "{item.modifier}"',
            ],
        }
        for item in items
    ]
    with LoopbackServer() as server:
        path = score_and_bundle(tmp_path, "ccpt_pi_emergent_oracle", lines,
                                "--judge-base-url", server.base_url)  # fmt: skip
    bundle = load(path)
    check = check_bundle(bundle)
    assert check.problems == [] and check.tasks[0].line() == (
        "ccpt_pi_emergent_oracle: partial (6 of the 200 test items)"
    )
    evidence = decode(bundle["tasks"][0]["evidence"], "oracle")
    assert len(evidence[0]["replies"]) == len(evidence[0]["samples"]) == 3
    assert "E_oracle" in evidence[0]["scores"]

    def change_a_rating(items: list) -> None:
        question = items[2]["samples"][0]["judged"][0]
        question[2] = 1.0 if question[2] != 1.0 else 10.0

    problems = check_bundle(_edited(bundle, "ccpt_pi_emergent_oracle", change_a_rating)).problems
    key = evidence[2]["id"].split(":", 1)[1]
    assert problems and all(
        p.startswith(f"evidence: ccpt_pi_emergent_oracle item {key}: reply 1: ") for p in problems
    ), problems

"""Checking Every Eval Ever files as EEE checks them, and the round trip through
``validate-bundle``: shared by the export tests of every benchmark."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.cli import main
from conceptcomb.leaderboard.exports.eee import EXPORT_SHA_KEY, TASK_KEY, export_sha256
from conceptcomb.leaderboard.exports.read_eee import read_exports

GLOB = "data/*/*/*/*.json*"  # what EEE's own docs pass to its validator


def run_cli(*args: str) -> tuple[int, str]:
    """``conceptcomb ...`` in process: (exit code, what it printed, errors included)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        code = main(list(args))
    return code, printed.getvalue()


@cache
def eee_schemas(eee_python: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate and instance schemas shipped in the every-eval-ever wheel."""
    code = (
        "import json; from every_eval_ever.schema import schema_json; "
        "print(json.dumps([schema_json('eval.schema.json'), "
        "schema_json('instance_level_eval.schema.json')]))"
    )
    done = subprocess.run([eee_python, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    aggregate, instance = json.loads(done.stdout)
    assert aggregate["version"] == instance["version"] == "0.3.0"
    return aggregate, instance


def eee_files(root: Path) -> tuple[list[Path], list[Path]]:
    aggregates = sorted(root.glob("data/*/*/*/*.json"))
    return aggregates, sorted(root.glob("data/*/*/*/*_samples.jsonl"))


def schema_problems(root: Path, eee_python: str) -> list[str]:
    """Every aggregate and every instance row against EEE's JSON schemas (in process)."""
    from jsonschema import Draft7Validator

    aggregate_schema, instance_schema = eee_schemas(eee_python)
    aggregate, instance = Draft7Validator(aggregate_schema), Draft7Validator(instance_schema)
    problems = []
    aggregates, samples = eee_files(root)
    for path in aggregates:
        problems += [
            f"{path}: {e.message}" for e in aggregate.iter_errors(json.loads(path.read_text()))
        ]
    for path in samples:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            errors = instance.iter_errors(json.loads(line))
            problems += [f"{path}:{number}: {e.message}" for e in errors]
    return problems


def eee_validate(root: Path, eee_python: str) -> list[dict[str, Any]]:
    """``every_eval_ever validate 'data/*/*/*/*.json*'`` in the export folder: its report
    (exit 0: every file valid and no warning)."""
    command = [eee_python, "-m", "every_eval_ever", "validate", "--format", "json", GLOB]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=root)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def assert_eee_valid(root: Path, eee_python: str) -> list[dict[str, Any]]:
    """Both checks EEE makes, on every file of the export."""
    assert schema_problems(root, eee_python) == []
    report = eee_validate(root, eee_python)
    aggregates, samples = eee_files(root)
    assert len(report) == len(aggregates) + len(samples) > 0
    assert all(entry["valid"] and not entry["warnings"] for entry in report), report
    return report


def task_lines(printed: str) -> list[str]:
    """The per-task lines ``validate-bundle`` prints."""
    return sorted(
        line.strip()
        for line in printed.splitlines()
        if line.startswith("  ") and ": " in line and not line.startswith("  - ")
    )


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )


def samples_for(root: Path, task: str) -> tuple[Path, Path]:
    """(aggregate, instance file) of a task in an export folder."""
    for path in eee_files(root)[0]:
        details = json.loads(path.read_text())["source_metadata"]["additional_details"]
        if json.loads(details[TASK_KEY])["task"] == task:
            return path, path.with_name(f"{path.stem}_samples.jsonl")
    raise AssertionError(f"no EEE file of {task} in {root}")


def reseal(root: Path) -> None:
    """What a forger who knows the format does after editing rows: put each task's items'
    hash, the instance files' checksums and the files' hash right again."""
    from conceptcomb.common.evidence import encode
    from conceptcomb.leaderboard.exports.read_eee import items_of

    aggregates = eee_files(root)[0]
    for aggregate in aggregates:
        samples = aggregate.with_name(f"{aggregate.stem}_samples.jsonl")
        data = json.loads(aggregate.read_text())
        details = data["source_metadata"]["additional_details"]
        record = json.loads(details[TASK_KEY])
        record["evidence"]["sha256"] = encode(items_of(samples))["sha256"]
        details[TASK_KEY] = json.dumps(record, ensure_ascii=False, sort_keys=True)
        checksum = hashlib.sha256(samples.read_bytes()).hexdigest()
        data["detailed_evaluation_results"]["checksum"] = checksum
        aggregate.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    (export,), loose = read_exports(aggregates)
    assert not loose and export.bundle is not None
    for aggregate in aggregates:
        data = json.loads(aggregate.read_text())
        data["source_metadata"]["additional_details"][EXPORT_SHA_KEY] = export_sha256(export.bundle)
        aggregate.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the packaged GGUF's model on the Hub


def round_trip(
    bundles: dict[str, Path], out: Path, eee_python: str, data_dir: str | None = None
) -> dict[str, Path]:
    """Each framework's bundle exported (the packaged SmolLM2 named by its Hub id), every
    file valid for EEE, and ``validate-bundle`` on the files printing the bundle's own lines."""
    extra = ["--data-dir", data_dir] if data_dir else []
    folders = {}
    for framework, bundle in bundles.items():
        folder = out / framework
        code, printed = run_cli("export", "--to", "eee", str(bundle), "--out", str(folder),
                                "--model-id", SMOLLM2, *extra)  # fmt: skip
        assert code == 0, printed
        assert_eee_valid(folder, eee_python)
        code, from_bundle = run_cli("validate-bundle", str(bundle), *extra)
        assert code == 0, from_bundle
        code, from_files = run_cli("validate-bundle", str(folder), *extra)
        assert code == 0, from_files
        assert task_lines(from_files) == task_lines(from_bundle)
        assert from_files.count(": partial (") == len(task_lines(from_bundle)) > 0
        folders[framework] = folder
    return folders


def partial_results(folder: Path, task: str, items: int) -> list[dict[str, Any]]:
    """The task's evaluation results, checked to be marked partial with their item ids."""
    aggregate, samples = samples_for(folder, task)
    results = json.loads(aggregate.read_text())["evaluation_results"]
    for result in results:
        assert result["score_details"]["details"]["partial"] == "true"
        ids = json.loads(result["source_data"]["additional_details"]["sample_ids"])
        assert len(ids) == items == len({row["sample_id"] for row in rows_of(samples)})
    return results


def edited_reply_is_caught(folder: Path, task: str, tmp_path: Path, *extra: str) -> str:
    """A reply changed in one row (the output the task scored: ``output.raw``, or the last
    message of a multi-turn row, whose demonstrations are earlier turns): INVALID, exit 1."""
    copy = tmp_path / "edited"
    shutil.copytree(folder, copy)
    _, samples = samples_for(copy, task)
    rows = rows_of(samples)
    row = next(r for r in rows if (r["output"] and r["output"]["raw"]) or r.get("messages"))
    if row["interaction_type"] == "multi_turn":
        assert row["output"] is None and row["messages"][-1]["role"] == "assistant"
        row["messages"][-1]["content"] += " and something else"
    else:
        row["output"]["raw"][0] += " and something else"
    write_rows(samples, rows)
    code, printed = run_cli("validate-bundle", str(copy), *extra)
    assert code == 1 and ": INVALID" in printed and f"{task}: FAILED" in printed, printed
    return printed


def parse_eval_result_entries(data: Any) -> list[Any]:
    """huggingface_hub's own parser of a ``.eval_results`` file; the test skips where the
    installed huggingface-hub has none (1.0 has not, 1.4 has: the `local` extra's lowest,
    transformers 4.45, caps huggingface-hub below 1). Our export does not import it."""
    import huggingface_hub

    parse = getattr(huggingface_hub, "parse_eval_result_entries", None)
    if parse is None:
        pytest.skip(f"huggingface-hub {huggingface_hub.__version__}: no parse_eval_result_entries")
    return parse(data)


def hub_entries(bundle: Path, out: Path, *dataset_ids: str) -> list[Any]:
    """``export --to hf`` of a bundle, read back with huggingface_hub's parser."""
    import yaml

    options = [part for given in dataset_ids for part in ("--dataset-id", given)]
    code, printed = run_cli("export", "--to", "hf", str(bundle), "--out", str(out),
                            "--model-id", SMOLLM2, *options)  # fmt: skip
    assert code == 0, printed
    return [
        entry
        for path in sorted((out / ".eval_results").glob("*.yaml"))
        for entry in parse_eval_result_entries(yaml.safe_load(path.read_text()))
    ]

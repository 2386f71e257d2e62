"""Every Eval Ever files written by ``conceptcomb export --to eee``, read back into the bundle
they came from, within limits (they come from anyone, like bundles).

`find_inputs` sorts what ``validate-bundle`` is given (bundles, EEE files, folders of either)
and `read_exports` groups the EEE files by the bundle they carry and puts each bundle together
again: the header and task records from the aggregates, each task's evidence items from its
instance rows (`conceptcomb.leaderboard.exports.eee.evidence_of_row`). `export_problems` then checks
what the bundle check cannot see: that every task of the bundle is there, that the files hash
to the bundle they record (``conceptcomb_export_sha256``: the bundle's content with its packed
evidence left out), and that every field of every file is what exporting that bundle gives,
so a score, rating or reply changed in one row is named even where the bundle's own fields
were left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptcomb.common.errors import ConceptcombError
from conceptcomb.leaderboard.bundles.safe_json import (
    MAX_DEPTH,
    Refused,
    clip,
    count_values,
    parse,
    read_bundle_json,
    size_text,
    utf8,
)
from conceptcomb.leaderboard.exports.eee import (
    BUNDLE_KEY,
    EXPORT_FORMAT,
    EXPORT_SHA_KEY,
    FORMAT_KEY,
    OPTIONS_KEY,
    TASK_KEY,
    ExportOptions,
    evidence_of_row,
    export_bundle,
    export_sha256,
)

MAX_SAMPLES_BYTES = 2 * 1024**3  # one instance file (rows repeat each item per metric)
MAX_ROW_BYTES = 16 * 1024**2  # one row (a prompt, replies and the item's evidence)
MAX_ROW_VALUES = 200_000
MAX_ROWS = 4_000_000
MAX_DIFFERENCES = 20  # rows that differ from the export, listed per file


@dataclass
class Inputs:
    bundles: list[Path] = field(default_factory=list)
    aggregates: list[Path] = field(default_factory=list)
    problems: list[tuple[Path, str]] = field(default_factory=list)  # folders with neither


@dataclass
class EeeExport:
    """The EEE files of one bundle, and that bundle put together again."""

    label: str
    files: list[Path]
    bundle: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)  # the files' own (not the bundle's)
    recorded_sha: str = ""  # conceptcomb_export_sha256, as the files record it
    options: str = "{}"  # the export's options (JSON), as the files record them


def _is_aggregate(path: Path) -> bool:
    if path.suffix != ".json" or path.name.endswith(".bundle.json"):
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"evaluation_results"' in head or b'"schema_version"' in head


def find_inputs(paths: list[Path]) -> Inputs:
    """Bundles and EEE aggregates among the paths (folders searched); a samples file stands
    for its aggregate beside it."""
    found = Inputs()
    for path in paths:
        if path.is_dir():
            found.bundles += sorted(path.rglob("*.bundle.json"))
            found.aggregates += [p for p in sorted(path.rglob("*.json")) if _is_aggregate(p)]
            if not any(p.is_relative_to(path) for p in (*found.bundles, *found.aggregates)):
                found.problems.append(
                    (
                        path,
                        "no *.bundle.json and no Every Eval Ever files (data/.../<uuid>.json) "
                        "inside",
                    )
                )
        elif path.name.endswith("_samples.jsonl"):
            found.aggregates.append(
                path.with_name(path.name.removesuffix("_samples.jsonl") + ".json")
            )
        elif _is_aggregate(path):
            found.aggregates.append(path)
        else:
            found.bundles.append(path)  # check_file says what is wrong with it
    found.aggregates = list(dict.fromkeys(found.aggregates))
    return found


# --- reading -------------------------------------------------------------------------------------
def _aggregate(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = read_bundle_json(path)
    except OSError as err:
        return None, f"{path}: cannot be read ({err.strerror or err})"
    except Refused as err:
        return None, f"{path}: not an EEE file within the limits ({err})"
    source = data.get("source_metadata") if isinstance(data, dict) else None
    details = source.get("additional_details") if isinstance(source, dict) else None
    if not isinstance(details, dict) or not isinstance(details.get(BUNDLE_KEY), str):
        return None, (
            f"{path}: not written by `conceptcomb export --to eee` (no {BUNDLE_KEY} in "
            "source_metadata.additional_details): validate-bundle checks conceptcomb's exports"
        )
    if details.get(FORMAT_KEY) != EXPORT_FORMAT:
        return None, (
            f"{path}: export format {clip(str(details.get(FORMAT_KEY)), 40)!r}, this conceptcomb "
            f"reads {EXPORT_FORMAT}: validate it with the conceptcomb version that exported it"
        )
    return data, None


def samples_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}_samples.jsonl")


def read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of an instance file, each row read within the limits (Refused)."""
    size = path.stat().st_size
    if size > MAX_SAMPLES_BYTES:
        raise Refused(f"{size_text(size)}, more than the {size_text(MAX_SAMPLES_BYTES)} allowed")
    rows = 0
    with path.open("rb") as handle:
        for number, line in enumerate(iter(lambda: handle.readline(MAX_ROW_BYTES + 1), b""), 1):
            if len(line) > MAX_ROW_BYTES:
                raise Refused(f"line {number}: longer than {size_text(MAX_ROW_BYTES)}")
            if not line.strip():
                continue
            rows += 1
            if rows > MAX_ROWS:
                raise Refused(f"more than {MAX_ROWS:,} rows")
            try:
                count_values(line, MAX_DEPTH, MAX_ROW_VALUES)
                row = parse(utf8(line), f"line {number}")
            except Refused as err:
                raise Refused(f"line {number}: {err}", limit=err.limit) from None
            if not isinstance(row, dict):
                raise Refused(f"line {number}: not a JSON object", limit=False)
            yield number, row


def items_of(path: Path) -> list[dict[str, Any]]:
    """The evidence items of a task, in order: one per run of rows of the same sample."""
    items: list[dict[str, Any]] = []
    last = None
    for _, row in read_rows(path):
        if row.get("sample_id") != last or last is None:
            items.append(evidence_of_row(row))
            last = row.get("sample_id")
    return items


def read_exports(paths: list[Path]) -> tuple[list[EeeExport], list[str]]:
    """The EEE aggregates given, grouped by the bundle they carry, each bundle put together
    again; and the problems of files that carry none."""
    groups: dict[tuple[str, str], EeeExport] = {}
    loose: list[str] = []
    tasks_of: dict[tuple[str, str], list[tuple[Path, dict[str, Any]]]] = {}
    for path in paths:
        data, problem = _aggregate(path)
        if data is None:
            loose.append(problem or f"{path}: unreadable")
            continue
        details = data["source_metadata"]["additional_details"]
        key = (str(details.get(EXPORT_SHA_KEY)), str(details.get(BUNDLE_KEY))[:4096])
        tasks_of.setdefault(key, []).append((path, data))
    for key, members in tasks_of.items():
        groups[key] = _assemble(members)
    return list(groups.values()), loose


def _label(head: dict[str, Any], members: list[tuple[Path, dict[str, Any]]]) -> str:
    model = head.get("model") if isinstance(head.get("model"), dict) else {}
    framework = head.get("framework") if isinstance(head.get("framework"), dict) else {}
    framework = framework.get("name")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{model.get('label')}_{framework}").strip("-")
    return f"{members[0][0].parent} (EEE export of {stem}.bundle.json)"


def _assemble(members: list[tuple[Path, dict[str, Any]]]) -> EeeExport:
    from conceptcomb.leaderboard.exports.eee import bundle_of

    files = [path for path, _ in members]
    problems: list[str] = []
    try:
        head = json.loads(members[0][1]["source_metadata"]["additional_details"][BUNDLE_KEY])
        assert isinstance(head, dict) and isinstance(head.get("task_names"), list)
        assert all(isinstance(name, str) for name in head["task_names"])
    except (ValueError, AssertionError, TypeError):
        return EeeExport(
            str(members[0][0]),
            files,
            None,
            [f"{files[0]}: {BUNDLE_KEY} is not the bundle's header"],
        )
    export = EeeExport(_label(head, members), files)
    details = members[0][1]["source_metadata"]["additional_details"]
    export.recorded_sha = str(details.get(EXPORT_SHA_KEY))
    export.options = str(details.get(OPTIONS_KEY) or "{}")
    items: dict[str, list[dict[str, Any]]] = {}
    aggregates: dict[str, dict[str, Any]] = {}
    for path, data in members:
        try:
            task = json.loads(data["source_metadata"]["additional_details"][TASK_KEY])["task"]
            assert isinstance(task, str)
        except (KeyError, TypeError, ValueError, AssertionError):
            problems.append(f"{path}: {TASK_KEY} is not a task record of the bundle")
            continue
        if task in aggregates:
            problems.append(f"{path}: a second file of task {task} (one export per task)")
            continue
        aggregates[task] = data
        rows = samples_path(path)
        export.files.append(rows)
        try:
            items[task] = items_of(rows)
        except OSError as err:
            problems.append(
                f"{rows}: cannot be read ({err.strerror or err}): the instance rows "
                "of the aggregate beside it"
            )
        except Exception as err:  # a file from anyone: whatever is wrong, one line
            problems.append(f"{rows}: its rows cannot be read ({_failure(err)})")
    missing = [name for name in head["task_names"] if name not in aggregates]
    if missing:
        problems.append(
            f"{export.label}: the bundle holds {len(head['task_names'])} tasks, the files given "
            f"{len(aggregates)}; missing: {', '.join(map(str, missing[:10]))} (give the whole "
            "export folder: validate-bundle checks the bundle as one)"
        )
    if not problems:
        try:
            export.bundle = bundle_of(list(aggregates.values()), items)
        except Exception as err:  # the records' fields of unexpected types
            problems.append(f"{export.label}: the bundle cannot be put together ({_failure(err)})")
    export.problems = problems
    return export


def _failure(err: Exception) -> str:
    text = str(err) if isinstance(err, Refused) else f"{type(err).__name__}: {err}"
    return clip(text, 300)


# --- checking what only the files say ------------------------------------------------------------
def export_problems(export: EeeExport) -> list[str]:
    """The files' hash against the bundle they carry, and each file against the export of
    that bundle (every derived field: scores, answers, metrics, model, judge...)."""
    bundle = export.bundle
    assert bundle is not None
    problems = []
    actual = export_sha256(bundle)
    if actual != export.recorded_sha:
        problems.append(
            f"checksum: the bundle the EEE files carry hashes to {actual}, but they record "
            f"{clip(export.recorded_sha, 80)}: a file was edited after `conceptcomb export` "
            "wrote it"
        )
    try:
        options = ExportOptions(**json.loads(export.options))
        # The items as the rows hold them, hashed or not (the bundle's check says which).
        expected = export_bundle(bundle, options, export.label, unsealed=True)
    except ConceptcombError as err:
        return [*problems, f"{export.label}: cannot be exported again to compare ({err})"]
    except (ValueError, TypeError) as err:
        return [*problems, f"{export.label}: {OPTIONS_KEY} is unreadable ({clip(str(err))})"]
    given = {path.name: path for path in export.files}
    for task in expected:
        problems += _compare_aggregate(given.get(task.aggregate.path.name), task)
        problems += _compare_rows(given.get(task.samples.path.name), task)
    return problems


def _difference(given: Any, expected: Any, path: str = "") -> str | None:
    """Where two JSON values first differ (None: equal)."""
    if isinstance(expected, dict) and isinstance(given, dict):
        for key in list(expected) + [k for k in given if k not in expected]:
            if key not in given or key not in expected:
                return f"{path}.{key}".lstrip(".") + (
                    " is missing" if key not in given else " is not exported"
                )
            found = _difference(given[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(given, list):
        if len(given) != len(expected):
            return f"{path.lstrip('.')} holds {len(given)} values, the bundle gives {len(expected)}"
        for index, (a, b) in enumerate(zip(given, expected, strict=True)):
            found = _difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(given, str) and isinstance(expected, str) and given != expected:
        inner = _json_texts(given, expected)  # metadata values are JSON texts: say where
        if inner is not None:
            return _difference(inner[0], inner[1], path)
    if given != expected or type(given) is not type(expected):
        found, wanted = clip(json.dumps(given), 80), clip(json.dumps(expected), 80)
        where = path.lstrip(".")
        return f"{where} is {found}, but exporting the bundle the files carry gives {wanted}"
    return None


def _json_texts(given: str, expected: str) -> tuple[Any, Any] | None:
    if not (given[:1] in "[{" and expected[:1] in "[{") or not given or not expected:
        return None
    try:
        return json.loads(given), json.loads(expected)
    except ValueError:
        return None


def _compare_aggregate(path: Path | None, task: Any) -> list[str]:
    if path is None:
        return [f"{task.aggregate.path}: not among the files given (its name is not the bundle's)"]
    try:
        given = read_bundle_json(path)
    except (OSError, Refused) as err:
        return [f"{path}: cannot be read again ({clip(str(err))})"]
    found = _difference(given, json.loads(task.aggregate.text))
    return [f"{path}: {found}"] if found else []


def _compare_rows(path: Path | None, task: Any) -> list[str]:
    if path is None:
        return [f"{task.samples.path}: not among the files given"]
    expected = task.samples.text.splitlines()
    problems = []
    count = 0
    try:
        for count, (number, row) in enumerate(read_rows(path), 1):
            if count > len(expected):
                problems.append(f"{path}: line {number}: a row the bundle does not give")
                break
            found = _difference(row, json.loads(expected[count - 1]))
            if found:
                problems.append(f"{path}: line {number} ({row.get('sample_id')!s:.120}): {found}")
                if len(problems) >= MAX_DIFFERENCES:
                    problems.append(f"{path}: more rows differ, not listed")
                    break
    except (OSError, Refused) as err:
        return [f"{path}: cannot be read again ({clip(str(err))})"]
    if count < len(expected) and len(problems) < MAX_DIFFERENCES:
        problems.append(f"{path}: {count} rows, the bundle gives {len(expected)}")
    return problems

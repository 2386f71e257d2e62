"""Each benchmark's card (``eval.yaml``) against the code: a test fails when they disagree.

The card is the one place of a benchmark's title, paper, version, licence, tasks (sample
counts, headline metrics, Inspect and lm-eval names) and pins. What the code reads from it
(titles, papers, versions, McRae's terms, CCPT's headline metrics) is checked to come from
it; what the code defines itself (task names and metrics, the frameworks' registrations,
the test sets, the data pins) is checked to be what the card says.
"""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from pathlib import Path

import pytest

from conceptcomb.benchmarks import benchmarks, get
from conceptcomb.common.contract import PERCENT, PROPORTION
from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.evalcard import GROUPS, card_path, load_card, parse_card
from tests.conftest import REPO, SHARED_DATA

KEYS = [benchmark.key for benchmark in benchmarks()]
SEEDS = SHARED_DATA.parent / "seeds"


@cache
def inspect_tasks() -> set[str]:
    from inspect_ai._util.registry import registry_find, registry_info

    import conceptcomb._inspect_registry  # noqa: F401  (registers the tasks)

    return {registry_info(task).name for task in registry_find(lambda i: i.type == "task")}


def lm_eval_leaves(key: str) -> set[str]:
    declaration = importlib.import_module(f"conceptcomb.{key}.lm_eval_yaml").declaration()
    return {leaf.task for leaf in declaration.leaves}


@pytest.mark.parametrize("key", KEYS)
def test_every_benchmark_folder_has_its_card_in_the_package(key: str) -> None:
    path = card_path(f"conceptcomb.{key}")
    source = REPO / "src" / "conceptcomb" / key / "eval.yaml"
    # The installed package's copy (an editable install's is the source file itself).
    assert path.parts[-3:] == ("conceptcomb", key, "eval.yaml") and path.is_file()
    assert path.read_bytes() == source.read_bytes()
    assert get(key).card.path == path


@pytest.mark.parametrize("key", KEYS)
def test_the_card_lists_every_task_with_its_names_and_a_headline_metric(key: str) -> None:
    benchmark = get(key)
    card, tasks = benchmark.card, benchmark.tasks()
    assert list(card.tasks) == list(tasks), "the card's tasks are not the code's, in order"
    leaves = lm_eval_leaves(key)
    for name, metrics in tasks.items():
        entry = card.tasks[name]
        assert entry.headline_metric in [m.name for m in metrics], name
        assert entry.inspect_task == f"conceptcomb/{name}" and entry.inspect_task in (
            inspect_tasks()
        ), name
        assert entry.lm_eval_task == (name if name in leaves else None), name
    assert {t.lm_eval_task for t in card.tasks.values()} - {None} == leaves


@pytest.mark.parametrize("key", KEYS)
def test_the_card_has_inspect_evals_group_and_contributors(key: str) -> None:
    """inspect_evals' EvalMetadata requires both: a catalogue group and who implemented it."""
    import yaml

    raw = yaml.safe_load(card_path(f"conceptcomb.{key}").read_text(encoding="utf-8"))
    card = get(key).card
    assert raw["group"] == card.group in GROUPS
    assert raw["contributors"] == list(card.contributors) != []


@pytest.mark.parametrize("key", KEYS)
def test_what_the_code_reads_comes_from_the_card(key: str) -> None:
    benchmark, card = get(key), get(key).card
    assert (benchmark.title, benchmark.paper) == (card.title, card.paper)
    tasks = importlib.import_module(f"conceptcomb.{key}.tasks")
    assert not hasattr(tasks, "TASK_VERSION"), "a copy of the version beside the card's"
    assert tasks.task_version() == card.version
    source = (REPO / "src" / "conceptcomb" / key / "benchmark.py").read_text()
    assert card.title not in source and card.paper not in source


def test_ccpt_headline_and_mcrae_terms_are_read_from_the_cards() -> None:
    from conceptcomb.ccpt.tasks import headline_metric
    from conceptcomb.mcrae.data import TERMS_OF_USE

    assert TERMS_OF_USE == load_card("conceptcomb.mcrae").data_terms != ""
    ccpt = load_card("conceptcomb.ccpt")
    assert {name: headline_metric(name) for name in ccpt.tasks} == {
        name: task.headline_metric for name, task in ccpt.tasks.items()
    }


@pytest.mark.parametrize("key", KEYS)
def test_every_metric_declares_its_range_and_headlines_are_on_a_0_100_scale(key: str) -> None:
    card = get(key).card
    for name, metrics in get(key).tasks().items():
        for metric in metrics:
            assert metric.value_scale is not None, (name, metric.name)
        headline = next(m for m in metrics if m.name == card.tasks[name].headline_metric)
        # the Hub's eval results are 0-100 (a proportion is exported x100)
        assert headline.value_scale in (PERCENT, PROPORTION), name


# --- test-set sizes ---------------------------------------------------------------------------
def _sizes(key: str, names: list[str]) -> dict[str, int]:
    checker = get(key).evidence()
    return {name: len(checker.test_set(name, {}, None).items) for name in names}


@pytest.mark.parametrize("key", ["ccpt", "mcrae"])
@pytest.mark.shared_data
def test_sample_counts_are_the_test_sets_sizes(key: str) -> None:
    card = get(key).card
    expected = {name: task.dataset_samples for name, task in card.tasks.items()}
    assert _sizes(key, list(card.tasks)) == expected


@pytest.mark.slow  # the demonstrations of every item decide which items a task keeps: ~1 min
def test_cggc_sample_counts_are_the_shipped_datasets() -> None:
    """The card's sample counts are the items each CGGC task keeps. It draws the
    demonstrations of every test item for the card's 20 other tasks on the shipped
    dataset, then builds Inspect's `cggc` dataset: 69 s on 2 cores at load 4-7
    (2026-12-06)."""
    from conceptcomb.cggc.docs import task_pairs
    from conceptcomb.cggc.inspect_tasks import TASKS
    from conceptcomb.cggc.tasks import TaskOptions, spec_by_name

    card = get("cggc").card
    names = [name for name in card.tasks if name != "cggc"]
    expected = {name: card.tasks[name].dataset_samples for name in names}
    # Every item drawn (a bundle's check takes these counts from the card instead).
    drawn = {name: len(task_pairs(spec_by_name(name), TaskOptions(), False)) for name in names}
    assert drawn == expected
    # `cggc` is an Inspect task alone (lm-eval's group): its default options' items
    assert len(TASKS["cggc"]().dataset) == card.tasks["cggc"].dataset_samples


@pytest.mark.shared_data  # the paper's text is in ../shared/seeds, beside ../shared/data
def test_abspyramid_sample_counts_are_the_papers_tables_1_and_3() -> None:
    """No copy of the hub files here: the test splits' sizes the paper prints."""
    text = (SEEDS / "abspyramid_paper.txt").read_text(encoding="utf-8")
    header = "REL. # Total # Train # Valid # Test "
    detection, generation = (
        {
            row[0].lower(): int(row[4].replace(",", ""))
            for row in (line.split() for line in text[text.index(start) :].splitlines()[2:6])
        }
        for start in (header + "% Pos", header + "Avg-Ref")
    )
    for name, task in get("abspyramid").card.tasks.items():
        relation = name.split("_")[2]
        table = detection if "_det_" in name else generation
        assert task.dataset_samples == table[relation], name


# --- pins --------------------------------------------------------------------------------------
def _code_pins(key: str) -> dict[str, tuple[str, str, dict[str, str | None]]]:
    """Data key -> (source, revision, file -> sha256) as the code pins them."""
    pins = {}
    for name, dataset in get(key).datasets().items():
        if hasattr(dataset, "repo_id"):  # a hub dataset: only the files pinned so far
            pins[name] = (dataset.repo_id, dataset.revision, dict(dataset.sha256))
        else:
            files = {f.name: f.sha256 for f in dataset.files}
            pins[name] = (dataset.repository, dataset.revision, files)
    if key == "cggc":
        from conceptcomb.cggc.data import PACKAGED_DIR, PACKAGED_SHA256

        lines = (PACKAGED_DIR / "SHA256SUMS").read_text().split("\n")
        files = {name: sha for sha, name in (line.split() for line in lines if line)}
        pins["cggc"] = ("conceptcomb/cggc/packaged_data", PACKAGED_SHA256, files)
    return pins


@pytest.mark.parametrize("key", KEYS)
def test_the_cards_pins_are_the_codes(key: str) -> None:
    card = get(key).card
    found = {data.key: (data.source, data.revision, data.files) for data in card.data}
    assert found == _code_pins(key)


# --- the READMEs -----------------------------------------------------------------------------
def test_the_readme_index_and_versions_are_the_cards() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for key in KEYS:
        card = get(key).card
        short = card.title.split()[0].rstrip(":")
        row = next(line for line in readme.splitlines() if line.startswith(f"| **{short}**"))
        assert card.title.split(": ", 1)[1] in row and card.paper in row, key
        assert card.paper_url is None or card.paper_url in row, key
    versions = re.search(
        r"each benchmark README's \*\*Changelog\*\* lists the changes \(([^)]*)\)", readme
    )
    assert versions, "README: Task versions no longer lists the versions"
    assert " ".join(versions.group(1).split()) == ", ".join(
        f"{get(key).card.title.split()[0].rstrip(':')} {get(key).card.version}" for key in KEYS
    )


@pytest.mark.parametrize("key", KEYS)
def test_each_changelogs_latest_version_is_the_cards(key: str) -> None:
    text = (REPO / "src" / "conceptcomb" / key / "README.md").read_text(encoding="utf-8")
    changelog = text[text.index("## Changelog") :]
    latest = re.search(r"^- \*\*(\d+(?:\.\d+)+)\*\*", changelog, flags=re.M)
    assert latest and latest.group(1) == get(key).card.version
    assert "`version` in `eval.yaml`" in changelog


# --- a malformed card ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.pop("version"), "version: expected"),
        (lambda c: c["tasks"][0].update(dataset_samples="many"), "tasks[0].dataset_samples"),
        (lambda c: c["tasks"].append(dict(c["tasks"][0])), "listed twice: ccpt_pi_emergent"),
        (lambda c: c["paper"].pop("citation"), "paper.citation: expected"),
        (lambda c: c.pop("group"), "group: expected str"),
        (lambda c: c.update(group="Concepts"), "group: 'Concepts' is not one of"),
        (lambda c: c.pop("contributors"), "contributors: expected list"),
        (lambda c: c.update(contributors=[]), "contributors: expected a list of names"),
    ],
)
def test_a_malformed_card_is_named_with_its_field(edit, message: str, tmp_path: Path) -> None:
    import yaml

    card = yaml.safe_load(card_path("conceptcomb.ccpt").read_text())
    edit(card)
    path = tmp_path / "eval.yaml"
    path.write_text(json.dumps(card))
    with pytest.raises(DataFormatError, match=re.escape(message)) as raised:
        parse_card(path.read_text(), path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("key", KEYS)
def test_the_readme_task_tables_counts_are_the_cards(key: str) -> None:
    """A task table row naming a task and its items (a count of 40 or more) names the card's
    sample count."""
    card = get(key).card
    text = (REPO / "src" / "conceptcomb" / key / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Tasks") :]
    section = section[: section.index("\n## ", 4)] if "\n## " in section[4:] else section
    checked = 0
    for row in (line for line in section.splitlines() if line.startswith("| `")):
        first = row.split("|")[1]
        names = [n for n in re.findall(r"`([a-z0-9_]+)`", first) if n in card.tasks]
        counts = {int(n.replace(",", "")) for n in re.findall(r"\b\d[\d,]*\b", row)}
        counts = {n for n in counts if n >= 40 and n != 2008}
        for name in names if counts else []:
            assert card.tasks[name].dataset_samples in counts, (name, row)
            checked += 1
    assert checked or key == "abspyramid"  # its table names families (`_det_<rel>`)

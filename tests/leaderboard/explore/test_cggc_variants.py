"""``conceptcomb explore --variants`` on CGGC's two demonstration orders (cggc_ood_easy2hard
and cggc_ood_hard2easy) of one model, driven in headless Chromium: the view pairs the two
variants, its header is ``compare --variants --json``'s row, and "only where they differ",
sort by A - B and the structure-type filter show the rows computed here from the scored
samples. The replies are the items' own reference sentences (easy-to-hard) and their first
half (hard-to-easy, every other item), scored by ``conceptcomb score``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.testing.cggc_references import write_reference_predictions
from conceptcomb.testing.recorded import score_predictions, submit_bundle
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.explore.browser import (
    choose,
    choose_field,
    header_row,
    header_text,
    open_page,
    page_data,
    shown_ids,
)

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
ORDERS = ("cggc_ood_easy2hard", "cggc_ood_hard2easy")
ITEMS = 10


def _halved(path: Path) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for n, line in enumerate(lines):
        if n % 2:
            words = line["response"].split()
            line["response"] = " ".join(words[: len(words) // 2])
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.conftest import require_shared_data

    require_shared_data()
    root = tmp_path_factory.mktemp("explore-cggc")
    found = {}
    for task in ORDERS:
        predictions = root / f"{task}.jsonl"
        write_reference_predictions(task, predictions, limit=ITEMS)
        if task.endswith("hard2easy"):
            _halved(predictions)
        folder = root / task
        folder.mkdir()
        found[task] = Path(score_predictions(folder, task, predictions, "model"))
    found["bundle"] = submit_bundle([str(found[task]) for task in ORDERS], root)
    return found


def _per_item(results: Path, task: str) -> dict[str, dict]:
    """Item key -> its scored sample (`score --samples-output`)."""
    samples = results.parent / f"{task}.samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    return {row["doc"]["item_id"]: row for row in rows}


def test_variants_view(driver, scored: dict[str, Path], tmp_path: Path) -> None:
    code, printed = run_cli("explore", str(scored["bundle"]), "--variants", "--out",
                            str(tmp_path))  # fmt: skip
    assert code == 0, printed
    page = tmp_path / "explore.html"
    code, printed = run_cli("compare", str(scored["bundle"]), "--variants", "--json")
    assert code == 0, printed
    compared = json.loads(printed)
    data = page_data(page)
    (view,) = data["views"]
    assert view["name"] == " vs ".join(ORDERS) and len(view["columns"]) == 2
    for entry in view["comparisons"]:
        assert entry["row"] == compared["comparisons"][entry["index"]]
    a, b = (_per_item(scored[task], task) for task in ORDERS)
    key = {item["id"]: item["id"].split(":", 1)[1] for item in view["items"]}
    assert sorted(key.values()) == sorted(a)
    open_page(driver, page)
    choose(driver, "metric", "coverage")
    index, flipped = header_row(driver)
    row = compared["comparisons"][index]
    assert not flipped and row["metric"] == "coverage" and row["differs"][0].startswith("task:")
    assert header_text(row) in driver.find_element("id", "cmp-row").text
    choose(driver, "differ", "metric")
    choose(driver, "sort", "desc")
    diff = {
        shown: a[k]["metrics"]["coverage"] - b[k]["metrics"]["coverage"] for shown, k in key.items()
    }
    position = {item["id"]: item["n"] for item in view["items"]}
    expected = sorted((k for k in diff if diff[k] != 0), key=lambda k: (-diff[k], position[k]))
    assert expected and shown_ids(driver) == expected
    structure = {shown: a[k]["doc"]["structure_type"] for shown, k in key.items()}
    wanted = structure[expected[0]]
    choose_field(driver, "structure type", wanted)
    assert shown_ids(driver) == [k for k in expected if structure[k] == wanted]


ROWS = """
return Array.from(document.querySelectorAll('.matrix .row'), (row) => [
  parseFloat(row.style.top), row.dataset.id, row.querySelector('.cluster').textContent]);
"""


def _rows(driver) -> list[tuple[str, str]]:
    """(item id, its cluster label) of every row the matrix draws, top to bottom (the
    test's few items are all drawn: no scrolling)."""
    shown = int(driver.find_element("id", "count").get_attribute("data-shown"))
    rows = sorted(driver.execute_script(ROWS))
    assert len(rows) == shown
    return [(item, label) for _, item, label in rows]


def test_clusters_where_the_method_clusters(
    driver, scored: dict[str, Path], tmp_path: Path
) -> None:
    """CGGC's comparisons resample concept sets (`TaskItems.units`): under a sort by A - B
    each row says its concept set's mean A - B and number of items, and "by concept set:
    mean A - B" orders the sets by it; both as computed here from the scored samples."""
    code, printed = run_cli("explore", str(scored["bundle"]), "--variants", "--out",
                            str(tmp_path))  # fmt: skip
    assert code == 0, printed
    page = tmp_path / "explore.html"
    data = page_data(page)
    (view,) = data["views"]
    a, b = (_per_item(scored[task], task) for task in ORDERS)
    key = {item["id"]: item["id"].split(":", 1)[1] for item in view["items"]}
    position = {item["id"]: item["n"] for item in view["items"]}
    unit = {shown: str(a[k]["doc"]["concept_set_idx"]) for shown, k in key.items()}
    assert view["unit"] == "concept set" and all(
        item["unit"] == unit[item["id"]] for item in view["items"]
    )
    diff = {
        shown: a[k]["metrics"]["coverage"] - b[k]["metrics"]["coverage"] for shown, k in key.items()
    }
    members: dict[str, list[str]] = {}
    for shown in key:
        members.setdefault(unit[shown], []).append(shown)
    mean = {u: sum(diff[k] for k in ids) / len(ids) for u, ids in members.items()}
    assert len(members) < len(key), "the test's items share no concept set"
    open_page(driver, page)
    choose(driver, "metric", "coverage")
    index, _ = header_row(driver)
    code, printed = run_cli("compare", str(scored["bundle"]), "--variants", "--json")
    assert code == 0, printed
    row = json.loads(printed)["comparisons"][index]
    assert row["unit"] == "concept set" and row["clusters"] == len(members)
    assert [label for _, label in _rows(driver)] == [""] * len(key)  # by item: no clusters
    choose(driver, "sort", "desc")
    label = {k: f"mean {mean[unit[k]]:+.2f} ({len(members[unit[k]])})" for k in key}
    shown = _rows(driver)
    assert [item for item, _ in shown] == sorted(key, key=lambda k: (-diff[k], position[k]))
    assert all(text == label[item] for item, text in shown)
    choose(driver, "sort", "unit")
    by_set = sorted(key, key=lambda k: (-mean[unit[k]], unit[k], -diff[k], position[k]))
    assert [item for item, _ in _rows(driver)] == by_set
    assert all(text == label[item] for item, text in _rows(driver))
    assert "by concept set: mean A - B" in driver.find_element("id", "sort").text

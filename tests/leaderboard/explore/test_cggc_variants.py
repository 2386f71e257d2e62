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

"""``conceptcomb explore`` on two CCPT runs (and a third scored by another judge), driven in
headless Chromium: choose A and B, show only where they differ, sort by A - B, filter by
the property's type, search; the rows shown are those computed here from the bundles, and
the header's comparison is ``compare --json``'s row. Runs of different judges are never A
and B of a judged metric; the same replies scored by two judges show ``judge agree``'s
figures. The test's screenshot is docs/images/explorer.png (docs/exploring.md), written there
with CONCEPTCOMB_UPDATE_DOCS_IMAGES=1."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.leaderboard.bundles.safe_json import decode_evidence, read_bundle_json
from tests.conftest import REPO
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.explore.browser import (
    choose,
    choose_field,
    explore,
    header_row,
    header_text,
    open_item,
    open_page,
    page_data,
    search,
    shown_ids,
)
from tests.leaderboard.explore.ccpt_runs import JUDGED, TYPES, ccpt_bundle

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
SCREENSHOT = REPO / "docs" / "images" / "explorer.png"
UPDATE_IMAGES = "CONCEPTCOMB_UPDATE_DOCS_IMAGES"


def wrong_every_third(n: int, answer: str) -> str:
    """Model B: every third item's reply is not an answer; the type task's every fourth
    item says "others"."""
    if n % 3 == 0:
        return "no idea"
    if "property_type" in answer and n % 4 == 1:
        return json.dumps({"property_type": "others"})
    return answer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.conftest import require_shared_data

    require_shared_data()
    root = tmp_path_factory.mktemp("explore-ccpt")
    return {
        "a": ccpt_bundle(root / "a", "model-a", lambda n, answer: answer),
        "b": ccpt_bundle(root / "b", "model-b", wrong_every_third),
        "c": ccpt_bundle(
            root / "c",
            "model-c",
            lambda n, answer: answer,
            judge="generous-judge",
            shift=3,
            types=False,
        ),
    }


@pytest.fixture(scope="module")
def page(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return explore(tmp_path_factory.mktemp("page"), runs["a"], runs["b"], runs["c"])


def _evidence(bundle: Path, task: str) -> dict[str, dict[str, Any]]:
    """Item id (as the page shows it: the file's key) -> its evidence in the bundle."""
    data = read_bundle_json(bundle)
    (record,) = [r for r in data["tasks"] if r["task"] == task]
    return {i["id"].split(":", 1)[1]: i for i in decode_evidence(record["evidence"], task)}


def _compared(runs: dict[str, Path]) -> dict[str, Any]:
    code, printed = run_cli("compare", str(runs["a"]), str(runs["b"]), str(runs["c"]), "--json")
    assert code == 0, printed
    return json.loads(printed)


def test_choose_differ_sort_filter_search(driver, page: Path, runs: dict[str, Path]) -> None:
    a, b = _evidence(runs["a"], TYPES), _evidence(runs["b"], TYPES)
    types = {i.item_id: i.label for i in load_items(spec_by_name(TYPES))}
    order = sorted(a, key=lambda key: (len(key), key))
    data = page_data(page)
    view = next(n for n, v in enumerate(data["views"]) if v["name"] == TYPES)
    assert sorted(item["id"] for item in data["views"][view]["items"]) == sorted(a)
    open_page(driver, page)
    choose(driver, "view", str(view))
    # B as A and A as B: compare's row is A - B, shown negated.
    choose(driver, "run-a", "1")
    choose(driver, "run-b", "0")
    choose(driver, "metric", "accuracy")
    assert len(shown_ids(driver)) == len(a)
    choose(driver, "differ", "metric")
    diff = {k: b[k]["scores"]["accuracy"] - a[k]["scores"]["accuracy"] for k in a}
    differing = [k for k in sorted(a, key=order.index) if diff[k] != 0]
    assert differing and set(shown_ids(driver)) == set(differing)
    choose(driver, "sort", "asc")
    expected = sorted(differing, key=lambda k: (diff[k], _position(data, view, k)))
    assert shown_ids(driver) == expected
    choose_field(driver, "property type", "others")
    assert shown_ids(driver) == [k for k in expected if types[k] == "others"]
    choose_field(driver, "property type", "")
    choose(driver, "differ", "reply")
    replies = [k for k in expected if a[k]["reply"] != b[k]["reply"]]
    assert set(shown_ids(driver)) == set(replies)
    search(driver, "NO IDEA")  # case-insensitive, in the replies
    assert set(shown_ids(driver)) == {k for k in replies if "no idea" in b[k]["reply"]}
    compared = _compared(runs)
    index, flipped = header_row(driver)
    row = compared["comparisons"][index]
    assert flipped and (row["task"], row["metric"], row["run_a"], row["run_b"]) == (
        TYPES, "accuracy", "A", "B")  # fmt: skip
    shown = driver.find_element("id", "cmp-row").text
    negated = {**row, "a": row["b"], "b": row["a"], "difference": -row["difference"],
               "lower": -row["upper"], "upper": -row["lower"]}  # fmt: skip
    assert header_text(negated) in shown


def _position(data: dict[str, Any], view: int, key: str) -> int:
    return next(n for n, item in enumerate(data["views"][view]["items"]) if item["id"] == key)


def test_header_equals_compare_json(driver, page: Path, runs: dict[str, Path]) -> None:
    compared = _compared(runs)
    data = page_data(page)
    for entry in (c for v in data["views"] for c in v["comparisons"]):
        assert entry["row"] == compared["comparisons"][entry["index"]]
    open_page(driver, page)
    view = next(n for n, v in enumerate(data["views"]) if v["name"] == JUDGED)
    choose(driver, "view", str(view))
    choose(driver, "metric", "E")
    index, flipped = header_row(driver)
    row = compared["comparisons"][index]
    assert not flipped and (row["task"], row["metric"], row["run_a"], row["run_b"]) == (
        JUDGED, "E", "A", "B")  # fmt: skip
    assert header_text(row) in driver.find_element("id", "cmp-row").text
    a, b = _evidence(runs["a"], JUDGED), _evidence(runs["b"], JUDGED)
    choose(driver, "differ", "metric")
    choose(driver, "sort", "abs")
    data_view = data["views"][view]
    diff = {k: a[k]["scores"]["E"] - b[k]["scores"]["E"] for k in a}
    expected = sorted((k for k in a if diff[k] != 0),
                      key=lambda k: (-abs(diff[k]), _position(data, view, k)))  # fmt: skip
    assert shown_ids(driver) == expected
    details = open_item(driver, expected[0])
    assert a[expected[0]]["reply"] in details and b[expected[0]]["reply"] in details
    assert data_view["judge_groups"] == [0, 0, 2]
    png = page.parent / "explorer.png"
    driver.save_screenshot(str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get(UPDATE_IMAGES):  # docs/exploring.md's screenshot, made here
        shutil.copy(png, SCREENSHOT)


def test_different_judges_are_never_a_and_b(driver, page: Path, runs: dict[str, Path]) -> None:
    compared = _compared(runs)
    assert not [r for r in compared["comparisons"]
                if r["metric"] == "E" and "C" in (r["run_a"], r["run_b"])]  # fmt: skip
    data = page_data(page)
    view = next(n for n, v in enumerate(data["views"]) if v["name"] == JUDGED)
    open_page(driver, page)
    choose(driver, "view", str(view))
    choose(driver, "run-b", "2")
    choose(driver, "metric", "E")
    said = driver.find_element("id", "cmp-none").text
    assert "different judges" in said and "generous-judge" in said
    choose(driver, "differ", "metric")  # no per-item A - B across judges: nothing differs
    assert shown_ids(driver) == []
    agree = driver.find_element("id", "agree").text
    assert "judge agree A C" in agree and "Krippendorff's alpha (ordinal)" in agree
    code, printed = run_cli("judge", "agree", str(runs["a"]), str(runs["c"]))
    assert code == 0 and printed.splitlines()[2] in agree


def _answers(table: Any) -> list[list[str]]:
    """The rows of a questions table as the page shows them (each cell's text)."""
    return [[cell.text for cell in row.find_elements("css selector", "td")]
            for row in table.find_elements("css selector", "tr")[1:]]  # fmt: skip


def test_each_rating_shows_the_judges_answer_and_two_judges_side_by_side(
    driver, page: Path, runs: dict[str, Path]
) -> None:
    """An item's details show each question's rating and the loopback judge's answer as it
    wrote it; A and C (the same replies, C's judge 3 points more generous) put both judges'
    answers side by side, question by question; A and B (one judge) do not."""
    a, c = _evidence(runs["a"], JUDGED), _evidence(runs["c"], JUDGED)
    key = next(k for k in a if a[k].get("judged"))
    assert a[key]["reply"] == c[key]["reply"]
    data = page_data(page)
    view = next(n for n, v in enumerate(data["views"]) if v["name"] == JUDGED)
    open_page(driver, page)
    choose(driver, "view", str(view))
    choose(driver, "run-b", "2")
    open_item(driver, key)
    rows = _answers(driver.find_element("id", "side-by-side"))
    expected = [
        [f"{q[0]} — {q[1]}", f"{q[2]:g}", q[3], f"{r[2]:g}", r[3]]
        for q, r in zip(a[key]["judged"], c[key]["judged"], strict=True)
    ]
    assert rows == expected and len(rows) == 3
    for q, r in zip(a[key]["judged"], c[key]["judged"], strict=True):
        assert q[3] == json.dumps({"relevance": int(q[2])})  # the server's own answer
        assert r[3] == json.dumps({"relevance": int(r[2])}) and r[2] == min(10, q[2] + 3)
    tables = [_answers(t) for t in driver.find_elements("css selector", ".run table.questions")]
    assert tables[0] == [row[:3] for row in expected]  # A's run, its own table
    assert tables[-1] == [[row[0], row[3], row[4]] for row in expected]  # C's
    choose(driver, "run-b", "1")  # A and B: one judge, no side-by-side table
    open_item(driver, key)
    assert not driver.find_elements("id", "side-by-side")


def test_report_writes_the_explorer_and_links_it(
    driver, runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code, printed = run_cli("report", str(runs["a"]), str(runs["b"]), "--out", str(out),
                            "--no-plots")  # fmt: skip
    assert code == 0, printed
    assert "explore.html" in printed.splitlines()[-1]
    html = (out / "ccpt.html").read_text(encoding="utf-8")
    assert 'href="explore.html#task=ccpt_pi_emergent"' in html
    driver.get((out / "ccpt.html").as_uri())
    driver.find_element("css selector", 'a[href="explore.html#task=ccpt_tp"]').click()
    assert driver.execute_script("return document.body.getAttribute('data-ready')") == "true"
    from selenium.webdriver.support.ui import Select

    assert Select(driver.find_element("id", "view")).first_selected_option.text == TYPES


def _selected(driver, element_id: str) -> str:
    from selenium.webdriver.support.ui import Select

    return Select(driver.find_element("id", element_id)).first_selected_option.text


def _same_run(selected: str, letter: str, ranked: str) -> bool:
    """The explorer's run ``letter`` is the ranking's run: the ranking labels a model's runs
    of each judge apart ("model (framework) [judge key ...]"), the explorer one per file."""
    shown = selected.removeprefix(f"{letter}: ")
    return shown != selected and (ranked == shown or ranked.startswith(shown + " ["))


def test_report_links_each_ranking_row_and_pair(
    driver, runs: dict[str, Path], tmp_path: Path
) -> None:
    """Each ranking row's run links to it in the explorer (as A), each paired comparison to
    its two runs (A and B), on the ranking's metric; followed in Chromium, the explorer
    opens on them; a link followed within the explorer (``hashchange``) too."""
    from html import unescape
    from urllib.parse import parse_qs

    from conceptcomb.leaderboard.explore.data import column_of
    from conceptcomb.leaderboard.report.ranking import rank

    paths = [runs["a"], runs["b"], runs["c"]]
    out = tmp_path / "report"
    code, printed = run_cli("report", *map(str, paths), "--out", str(out), "--no-plots")
    assert code == 0, printed
    rankings = rank(paths)
    explorer = page_data(out / "explore.html")
    assert column_of(explorer, TYPES, [str(runs["b"])]) == "B"
    assert column_of(explorer, JUDGED, [str(runs["c"])]) == "C"
    assert column_of(explorer, TYPES, [str(runs["c"])]) is None  # c has no ccpt_tp
    report = (out / "ccpt.html").as_uri()
    driver.get(report)
    run_links = [(a.text, unescape(a.get_attribute("href").split("#", 1)[1]))
                 for a in driver.find_elements("css selector", "a.explore-run")]  # fmt: skip
    pair_links = [(a.text, unescape(a.get_attribute("href").split("#", 1)[1]))
                  for a in driver.find_elements("css selector", "a.explore-pair")]  # fmt: skip
    assert len(run_links) == sum(len(r.rows) for r in rankings) == 5
    assert len(pair_links) == sum(len(r.comparisons) for r in rankings) == 2
    metrics = {r.task: r.metric for r in rankings}
    for n, (label, fragment) in enumerate(run_links):
        wanted = {key: value[0] for key, value in parse_qs(fragment).items()}
        assert (
            set(wanted) == {"task", "a", "metric"} and wanted["metric"] == metrics[wanted["task"]]
        )
        driver.get(report)
        driver.find_elements("css selector", "a.explore-run")[n].click()
        assert driver.execute_script("return document.body.getAttribute('data-ready')") == "true"
        assert _selected(driver, "view") == wanted["task"]
        assert _same_run(_selected(driver, "run-a"), wanted["a"], label)
        assert _selected(driver, "metric") == wanted["metric"]
    for n, (label, fragment) in enumerate(pair_links):
        wanted = {key: value[0] for key, value in parse_qs(fragment).items()}
        driver.get(report)
        driver.find_elements("css selector", "a.explore-pair")[n].click()
        assert driver.execute_script("return document.body.getAttribute('data-ready')") == "true"
        first, second = label.split(" − ")
        assert _same_run(_selected(driver, "run-a"), wanted["a"], first)
        assert _same_run(_selected(driver, "run-b"), wanted["b"], second)
        index, flipped = header_row(driver)  # compare's row for the pair heads the view
        row = _compared(runs)["comparisons"][index]
        assert (row["task"], row["metric"]) == (wanted["task"], wanted["metric"])
        pair = (row["run_b"], row["run_a"]) if flipped else (row["run_a"], row["run_b"])
        assert pair == (wanted["a"], wanted["b"])
    # Within the page: a new hash opens its view and runs without loading the page again.
    driver.execute_script("window.notReloaded = true;")
    fragment = next(f for _, f in run_links if f"task={TYPES}" in f and "a=B" in f)
    driver.execute_script("window.location.hash = arguments[0];", fragment)
    assert _selected(driver, "view") == TYPES
    assert _selected(driver, "run-a").startswith("B: ") and _selected(driver, "run-b").startswith(
        "A: "
    )
    assert driver.execute_script("return window.notReloaded === true;")

"""The explorer's page in real headless Chromium through selenium, and the page's data read
back in Python.

Needs Debian's ``chromium`` and ``chromium-driver`` (.ci/run installs them) and selenium (the
``test`` extra). Without them these tests skip with the reason, except under CI=true, where
they fail: CI must run them. CONCEPTCOMB_BROWSER and CONCEPTCOMB_CHROMEDRIVER name other
binaries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.report.test_screenshot import find_browser

DRIVERS = ("chromedriver", "chromium-driver")
ROW_HEIGHT = 46  # px, explorer.js's ROW_HEIGHT


def find_driver() -> str:
    named = os.environ.get("CONCEPTCOMB_CHROMEDRIVER")
    for path in [named] if named else [shutil.which(name) for name in DRIVERS]:
        if path and Path(path).is_file():
            return path
    missing(
        "no chromedriver for the explorer's browser tests: install it (Debian/Ubuntu: "
        "apt-get install -y chromium-driver) or set CONCEPTCOMB_CHROMEDRIVER"
    )
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the session, with its console and network logged; its
    temporary files in a folder of pytest's (Chromium leaves its org.chromium.Chromium.*
    folder behind when chromedriver ends it)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium is not installed: pip install -e '.[test]' (it is in the test extra)")
    browser, chromedriver = find_browser(), find_driver()
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                     "--disable-background-networking", "--disable-component-update",
                     "--no-first-run", "--disable-sync"):  # fmt: skip
        options.add_argument(argument)
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    env = {**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("chromium-tmp"))}
    chrome = webdriver.Chrome(service=Service(chromedriver, env=env), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def explore(out: Path, *runs: Path | str) -> Path:
    """``conceptcomb explore RUN... --out DIR``, which must succeed: the page."""
    code, printed = run_cli("explore", *map(str, runs), "--out", str(out))
    assert code == 0, printed
    return out / "explore.html"


def page_data(page: Path) -> dict[str, Any]:
    """The JSON the page holds, as the page's script reads it."""
    found = re.search(
        r'<script type="application/json" id="explorer-data">(.*?)</script>',
        page.read_text(encoding="utf-8"),
        re.S,
    )
    assert found is not None
    return json.loads(found.group(1))


def open_page(chrome: Any, page: Path) -> None:
    chrome.get(page.as_uri())
    assert chrome.execute_script("return document.body.getAttribute('data-ready')") == "true"


def choose(chrome: Any, element_id: str, value: str) -> None:
    """Select ``value`` in the page's <select id=element_id>, as a user does."""
    from selenium.webdriver.support.ui import Select

    Select(chrome.find_element("id", element_id)).select_by_value(value)


def choose_field(chrome: Any, field: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    element = chrome.find_element("css selector", f'select.field-filter[data-field="{field}"]')
    Select(element).select_by_value(value)


def search(chrome: Any, text: str) -> None:
    box = chrome.find_element("id", "search")
    box.clear()
    if text:
        box.send_keys(text)


SCROLL_TO = """
const [top, done] = arguments;
const matrix = document.querySelector('.matrix');
matrix.scrollTop = top;
requestAnimationFrame(() => requestAnimationFrame(() => done(Array.from(
  matrix.querySelectorAll('.row'), (row) => [parseFloat(row.style.top), row.dataset.id]))));
"""


def shown_ids(chrome: Any) -> list[str]:
    """The items the matrix shows, top to bottom: the list renders the visible rows only,
    so it is scrolled through as a reader does."""
    shown = int(chrome.find_element("id", "count").get_attribute("data-shown"))
    height, step = chrome.execute_script(
        "const m = document.querySelector('.matrix'); return [m.scrollHeight, m.clientHeight];"
    )
    found: dict[float, str] = {}
    for top in range(0, int(height) + 1, max(1, int(step) // 2)):
        for position, item in chrome.execute_async_script(SCROLL_TO, top):
            found[position] = item
    chrome.execute_async_script(SCROLL_TO, 0)
    ids = [found[position] for position in sorted(found)]
    assert len(ids) == shown, f"{shown} items counted, {len(ids)} rendered"
    return ids


def open_item(chrome: Any, item_id: str) -> str:
    """Click the item's row (scrolled to it) and return the details pane's text."""
    position = shown_ids(chrome).index(item_id)
    chrome.execute_async_script(SCROLL_TO, position * ROW_HEIGHT)
    chrome.find_element("css selector", f'.matrix .row[data-id="{item_id}"]').click()
    return chrome.find_element("id", "details").text


def header_row(chrome: Any) -> tuple[int, bool]:
    """The index in ``compare --json``'s comparisons of the row the header shows, and
    whether it is shown negated (A and B in compare's other order)."""
    line = chrome.find_element("id", "cmp-row")
    return int(line.get_attribute("data-index")), line.get_attribute("data-flipped") == "true"


def signed(value: float) -> str:
    return f"{value:+.2f}"


def header_text(row: dict[str, Any]) -> str:
    """What the header prints of a ``compare --json`` row: its numbers as compare's table
    prints them."""
    p = "<0.001" if row["p"] < 0.001 else f"{row['p']:.3f}"
    holm = "<0.001" if row["p_holm"] < 0.001 else f"{row['p_holm']:.3f}"
    return (
        f"A {row['a']:.2f}, B {row['b']:.2f}, A - B {signed(row['difference'])} "
        f"[{signed(row['lower'])}, {signed(row['upper'])}], p {p}, p Holm {holm}, "
        f"n {row['n']}, MDD {row['mdd']:.2f}"
    )


def no_network(chrome: Any, page: Path) -> list[str]:
    """Every request the page made beyond its own file (performance log)."""
    requests = []
    for entry in chrome.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if url != page.as_uri():
                requests.append(url)
    return requests

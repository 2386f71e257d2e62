"""A hostile submission in the explorer (issue 51, item 5): replies and a model name holding
``<script>``, ``</script>``, ``<img onerror>``, a ``javascript:`` link, a right-to-left
override, a beacon to a local server, 1 MB of text, judge answers holding script, an image
and a link, and invalid UTF-8 (lone surrogates, as Python reads undecodable bytes) are shown
as text; nothing of theirs runs: no alert, no request (the beacon's server and the browser's
network log), no element they would add, no attribute they would set. The page carries its
Content-Security-Policy."""

from __future__ import annotations

import base64
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from tests.leaderboard.explore.browser import (
    explore,
    no_network,
    open_item,
    open_page,
    page_data,
    shown_ids,
)
from tests.leaderboard.explore.ccpt_runs import ccpt_bundle

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]
PWN = "document.body.dataset.pwned"
MODEL = '<script>alert("model")</script><img src=x onerror=alert(2)>\u202emodel'


def payloads(beacon: str) -> list[str]:
    return [
        f'</script><script>{PWN}="script";alert(1)</script>',
        f"<img src=x onerror=\"{PWN}='img';alert(1)\">",
        f"<a href=\"javascript:{PWN}='link'\">click me</a>",
        "\u202eright-to-left override: esrever",
        f'<img src="{beacon}/img"><link rel=stylesheet href="{beacon}/css">',
        "<style>body { display: none }</style>" + "A" * 1_000_000,
    ]


INVALID = "invalid UTF-8: \udcff\udcfe end"  # what Python reads of bytes ff fe


def with_invalid_utf8(bundle: Path, out: Path, number: int) -> Path:
    """A copy of the bundle with item ``number``'s reply holding lone surrogates, as JSON
    escapes (``submit-bundle`` cannot write them; a hand-made bundle can), its checksums
    made again as a forger would."""
    import gzip
    import hashlib
    import json

    from conceptcomb.leaderboard.bundles.bundle import content_sha256
    from conceptcomb.leaderboard.bundles.safe_json import decode_evidence

    data = json.loads(bundle.read_text(encoding="utf-8"))
    evidence = data["tasks"][0]["evidence"]
    items = decode_evidence(evidence, "hostile")
    items[number]["reply"] = INVALID
    body = json.dumps(items, sort_keys=True, separators=(",", ":")).encode()
    evidence["sha256"] = hashlib.sha256(body).hexdigest()
    evidence["data"] = base64.b64encode(gzip.compress(body, mtime=0)).decode("ascii")
    data["content_sha256"] = content_sha256(data)
    out.mkdir()
    copy = out / bundle.name
    copy.write_text(json.dumps(data), encoding="utf-8")
    return copy


def with_hostile_answers(bundle: Path, answers: list[str]) -> None:
    """The bundle with every judge answer of its first judged item replaced by ``answers``
    in turn (a judge's answer is as untrusted as a reply), resealed as a forger would."""
    import json

    from conceptcomb.common.evidence import decode, encode
    from conceptcomb.leaderboard.bundles.bundle import content_sha256

    data = json.loads(bundle.read_text(encoding="utf-8"))
    task = data["tasks"][0]
    items = decode(task["evidence"], "hostile")
    judged = next(item["judged"] for item in items if item.get("judged"))
    for n, row in enumerate(judged):
        row[3] = answers[n % len(answers)]
    task["evidence"] = encode(items)
    data["content_sha256"] = content_sha256(data)
    bundle.write_text(json.dumps(data), encoding="utf-8")


class Beacon(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Beacon.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def beacon() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Beacon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def page(beacon: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import require_shared_data

    require_shared_data()
    root = tmp_path_factory.mktemp("hostile")
    texts = payloads(beacon)
    hostile = ccpt_bundle(root / "hostile", MODEL,
                          lambda n, answer: texts[n % len(texts)], types=False)  # fmt: skip
    with_hostile_answers(hostile, texts[:3])
    broken = with_invalid_utf8(hostile, root / "broken", 6)
    plain = ccpt_bundle(root / "plain", "plain-model", lambda n, answer: answer, types=False)
    return explore(root / "page", hostile, plain, broken)


def test_nothing_of_the_bundle_runs_and_its_text_shows(
    driver,
    page: Path,
    beacon: str,
) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    html = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert html.count("<script") == 2 and "</script><script>" not in html.split("<body>")[1][:-40]
    driver.get_log("performance")  # what came before this page
    open_page(driver, page)
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (an alert, if any, is read here)
    assert driver.execute_script(f"return {PWN} || null") is None
    counts = driver.execute_script(
        "return ['script', 'style', 'img', 'a', 'link', 'iframe'].map("
        "(t) => document.getElementsByTagName(t).length)"
    )
    assert counts == [2, 1, 0, 0, 0, 0]  # the page's own script, data block and style only
    assert Beacon.hits == [] and no_network(driver, page) == []
    # The texts are shown, as text: every reply in the matrix, the model in the header.
    data = page_data(page)
    assert shown_ids(driver) == [item["id"] for item in data["views"][0]["items"]]
    text = driver.find_element("tag name", "body").text
    for payload in payloads(beacon)[:5]:
        assert payload.split("\n")[0][:60] in text
    label = data["runs"][0]["label"]  # as `score --model-name` kept it
    assert label.startswith('<script>alert("model")') and "onerror=alert(2)>" in label
    assert label in driver.find_element("id", "comparison").text
    view = data["views"][0]
    replies = view["columns"][0]["replies"]
    big = next(item["id"] for item in view["items"]
               if data["strings"][replies[item["n"]]].startswith("<style>"))  # fmt: skip
    open_item(driver, big)
    details = driver.execute_script("return document.getElementById('details').textContent")
    size = len(payloads(beacon)[5])
    assert "A" * 1000 in details and f"[cut: {size:,} characters in all]" in details
    # The judge's answers of one item hold script, an image and a link: shown as text.
    strings, questions = data["strings"], view["columns"][0]["questions"]
    forged = next(
        item["id"] for item in view["items"]
        if questions[item["n"]] and strings[questions[item["n"]][0][2]] == payloads(beacon)[0]
    )  # fmt: skip
    open_item(driver, forged)
    answers = [a.text for a in driver.find_elements("css selector", ".run pre.answer")]
    assert answers[:3] == payloads(beacon)[:3]
    assert driver.execute_script(
        "return ['script', 'img', 'a'].map((t) => document.getElementsByTagName(t).length)"
    ) == [2, 0, 0]
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    assert driver.execute_script(f"return {PWN} || null") is None
    # Invalid UTF-8: compare's reader leaves that run out, and the page says why.
    assert len(data["views"][0]["columns"]) == 2
    driver.find_element("css selector", "#notes summary").click()
    notes = driver.find_element("id", "notes").text
    assert "tasks[0].evidence.items[6].reply: a string with a lone surrogate" in notes
    assert driver.execute_script(f"return {PWN} || null") is None and Beacon.hits == []

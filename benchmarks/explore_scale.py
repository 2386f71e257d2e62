"""The item explorer at scale (issue 51, item 6): write time, page size, first render and a
filter or sort in headless Chromium.

* CGGC: 10 runs of the full ``cggc_ood`` (15,985 items each);
* CCPT: 20 runs of the ``ccpt`` group's four tasks (1,534 items each).

The runs are synthesized from real data: one real bundle per benchmark (a few items scored by
``conceptcomb score``; CCPT's judged tasks by a loopback judge replaying the authors'
recorded ratings) gives each task's record, and every test item of the pinned dataset its
evidence: its stable id, unit and the prompt as the task sends it (built from the data),
a reply (the item's own answer, or another item's for some items in some runs) and per-item
values (seeded). Only the mean metrics are claimed: corpus metrics' bootstrap is
`compare`'s cost (benchmarks/compare_speed.py), not the page's. Each page is written by
``conceptcomb explore`` as a fresh command (its wall time), then opened in headless Chromium
(selenium): the first view's render, then a filter (a benchmark field) and a sort by A - B,
each timed in the page. Budgets: written in <= 60 s, first view <= 2 s, a filter or a sort
<= 200 ms, the page <= BUDGET_MB.

    python benchmarks/explore_scale.py [--benchmark cggc|ccpt|all] [--out DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Budgets (docs/performance.md): what the page may cost at these scales on 2 cores.
BUDGET_MB = {"cggc": 40.0, "ccpt": 25.0}
WRITE_S, FIRST_VIEW_MS, ANSWER_MS = 60.0, 2000.0, 200.0


def _mean_metrics(benchmark: str, task: str) -> list[str]:
    from conceptcomb.benchmarks import get

    return [i.name for i in get(benchmark).tasks()[task] if i.aggregation == "mean"]


def _values(rng: np.random.Generator, base: np.ndarray, run: int) -> np.ndarray:
    """A run's per-item values: a shared difficulty, the run's skill, noise; 0-100."""
    return np.clip(base + 4.0 * run + rng.normal(0, 15, len(base)), 0, 100).round(2)


# --- CGGC --------------------------------------------------------------------------------
def cggc_items(data_dir: str | None) -> list[dict[str, Any]]:
    """Every cggc_ood test item: id, unit, prompt (as sent), reference (the reply of run 0)."""
    from conceptcomb.benchmarks import evidence_adapter
    from conceptcomb.cggc.docs import chat_messages, item_doc, task_pairs
    from conceptcomb.cggc.tasks import TaskOptions, spec_by_name

    task, spec = "cggc_ood", spec_by_name("cggc_ood")
    options = TaskOptions(data_dir=data_dir)
    adapter = evidence_adapter("cggc")
    assert adapter is not None
    test_set = adapter.test_set(task, {}, data_dir)
    found = []
    for item, demos in task_pairs(spec, options):
        doc = item_doc(item, demos, spec, options)
        key = adapter.item_key(task, doc, data_dir)
        messages = [[role, text] for role, text in chat_messages(task, doc)]
        found.append({
            "id": test_set.item_id(key), "unit": str(item.concept_set_idx),
            "prompt": [key, None, messages], "reply": item.target,
        })  # fmt: skip
    return found


def cggc_template(out: Path, data_dir: str | None) -> dict[str, Any]:
    from conceptcomb.testing.cggc_references import cggc_bundle

    return json.loads(cggc_bundle(out, data_dir, limit=3).read_text(encoding="utf-8"))


# --- CCPT --------------------------------------------------------------------------------
def ccpt_items(task: str) -> list[dict[str, Any]]:
    from conceptcomb.benchmarks import evidence_adapter
    from conceptcomb.ccpt.data import load_items
    from conceptcomb.ccpt.docs import chat_messages
    from conceptcomb.ccpt.tasks import spec_by_name
    from conceptcomb.testing.recorded import gold_reply

    spec = spec_by_name(task)
    adapter = evidence_adapter("ccpt")
    assert adapter is not None
    test_set = adapter.test_set(task, {}, None)
    found = []
    for item in load_items(spec):
        messages = chat_messages(task, item.as_doc()) or []
        found.append({
            "id": test_set.item_id(item.item_id), "unit": item.combination.strip().lower(),
            "prompt": [item.item_id, None, [[r, t] for r, t in messages]],
            "reply": gold_reply(spec, item),
        })  # fmt: skip
    return found


def ccpt_template(out: Path) -> dict[str, Any]:
    from tests.leaderboard.explore.ccpt_runs import ccpt_bundle

    return json.loads(ccpt_bundle(out, "template", lambda n, a: a).read_text(encoding="utf-8"))


# --- synthesized runs ------------------------------------------------------------------------
def synthesize(
    template: dict[str, Any],
    tasks: dict[str, list[dict[str, Any]]],
    benchmark: str,
    run: int,
) -> dict[str, Any]:
    """Run ``run``'s bundle: each task's record from the template's (a judged one for a
    judged task), every item with this run's reply and values."""
    from conceptcomb.benchmarks import get
    from conceptcomb.common.evidence import encode
    from conceptcomb.leaderboard.bundles.bundle import content_sha256

    bundle = copy.deepcopy(template)
    bundle["model"].update(label=f"model-{run:02d}", name=f"model-{run:02d}")
    records = {r["task"]: r for r in template["tasks"]}
    judged = next((r for r in template["tasks"] if r.get("judge")), None)
    plain = next((r for r in template["tasks"] if not r.get("judge")), judged)
    bundle["tasks"] = []
    for task, items in tasks.items():
        source = records.get(task) or (judged if get(benchmark).judged(task) else plain)
        record = copy.deepcopy(source)
        record.update(task=task, items=len(items), items_total=len(items), complete=True)
        record["metrics"] = {}
        rng = np.random.default_rng(1000 * run + len(task))
        base = np.random.default_rng(len(task)).uniform(10, 70, len(items))
        metrics = {m: _values(rng, base, run) for m in _mean_metrics(benchmark, task)}
        swap = rng.random(len(items)) < 0.05 * run  # later runs answer more items wrongly
        evidence = []
        for n, item in enumerate(items):
            reply = items[(n + 7) % len(items)]["reply"] if swap[n] else item["reply"]
            scores = {m: float(v[n]) for m, v in metrics.items()}
            evidence.append({**item, "reply": reply, "scores": scores})
        record["evidence"] = encode(evidence)
        bundle["tasks"].append(record)
    bundle["content_sha256"] = content_sha256(bundle)
    return bundle


def write_runs(out: Path, bundles: list[dict[str, Any]]) -> list[Path]:
    paths = []
    for run, bundle in enumerate(bundles):
        path = out / f"model-{run:02d}.bundle.json"
        path.write_text(json.dumps(bundle), encoding="utf-8")
        paths.append(path)
    return paths


# --- measuring -----------------------------------------------------------------------------
def write_page(paths: list[Path], out: Path) -> tuple[float, Path]:
    command = [sys.executable, "-m", "conceptcomb.cli", "explore", *map(str, paths), "--out",
               str(out), "--n-resamples", "1000"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return took, out / "explore.html"


TIMED_CHANGE = """
const [id, value] = arguments;
const node = document.getElementById(id);
const started = performance.now();
node.value = value;
node.dispatchEvent(new Event(node.tagName === 'INPUT' ? 'input' : 'change'));
return performance.now() - started;
"""


def in_browser(page: Path, field: str) -> dict[str, float]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    chrome = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        chrome.set_page_load_timeout(120)
        chrome.get(page.as_uri())
        ready = float(chrome.execute_script("return document.body.getAttribute('data-ready-ms')"))
        first = float(chrome.execute_script(
            "return document.body.getAttribute('data-first-render-ms')"))  # fmt: skip
        index = chrome.execute_script(
            "return Array.from(document.querySelectorAll('select.field-filter'))"
            ".find((s) => s.dataset.field === arguments[0]).id", field)  # fmt: skip
        value = chrome.execute_script(
            "return document.getElementById(arguments[0]).options[1].value", index)  # fmt: skip
        found = {"ready_ms": ready, "first_render_ms": first}
        found["filter_ms"] = chrome.execute_script(TIMED_CHANGE, index, value)
        found["differ_ms"] = chrome.execute_script(TIMED_CHANGE, "differ", "metric")
        found["sort_ms"] = chrome.execute_script(TIMED_CHANGE, "sort", "desc")
        found["search_ms"] = chrome.execute_script(TIMED_CHANGE, "search", "the")
        found["switch_b_ms"] = chrome.execute_script(TIMED_CHANGE, "run-b", "2")
        return found
    finally:
        chrome.quit()


def measure(name: str, paths: list[Path], out: Path, field: str) -> dict[str, Any]:
    took, page = write_page(paths, out / f"page-{name}")
    size = page.stat().st_size / 1e6
    found = {"benchmark": name, "runs": len(paths), "write_s": round(took, 1),
             "page_mb": round(size, 1), "budget_mb": BUDGET_MB[name]}  # fmt: skip
    found.update({k: round(v, 1) for k, v in in_browser(page, field).items()})
    ok = (took <= WRITE_S and size <= BUDGET_MB[name] and found["ready_ms"] <= FIRST_VIEW_MS
          and max(found[k] for k in ("filter_ms", "differ_ms", "sort_ms", "search_ms",
                                     "switch_b_ms")) <= ANSWER_MS)  # fmt: skip
    found["within_budgets"] = ok
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", choices=("cggc", "ccpt", "all"), default="all")
    parser.add_argument("--out", type=Path, help="folder for the runs and pages (default: temp)")
    parser.add_argument("--runs", type=int, help="runs per benchmark (default: 10 CGGC, 20 CCPT)")
    parser.add_argument(
        "--data-dir",
        help="CGGC's dataset folder (default: the one shipped); CCPT's files are read from "
        "CONCEPTCOMB_DATA_DIR or the cache (`conceptcomb data fetch ccpt`)",
    )
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="explore-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    results = []
    if args.benchmark in ("cggc", "all"):
        folder = out / "cggc-runs"
        paths = sorted(folder.glob("*.bundle.json"))[: args.runs or 10]
        if len(paths) < (args.runs or 10):  # made once: --out of an earlier run reuses them
            template = cggc_template(out / "cggc-template", args.data_dir)
            items = {"cggc_ood": cggc_items(args.data_dir)}
            runs = [synthesize(template, items, "cggc", r) for r in range(args.runs or 10)]
            folder.mkdir(exist_ok=True)
            paths = write_runs(folder, runs)
        results.append(measure("cggc", paths, out, "structure type"))
        print(json.dumps(results[-1]), flush=True)
    if args.benchmark in ("ccpt", "all"):
        from conceptcomb.ccpt.tasks import default_specs

        template = ccpt_template(out / "ccpt-template")
        items = {spec.name: ccpt_items(spec.name) for spec in default_specs()}
        runs = [synthesize(template, items, "ccpt", r) for r in range(args.runs or 20)]
        folder = out / "ccpt-runs"
        folder.mkdir(exist_ok=True)
        results.append(measure("ccpt", write_runs(folder, runs), out, "property type"))
        print(json.dumps(results[-1]), flush=True)
    return 0 if all(r["within_budgets"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""``conceptcomb compare --variants`` (issue 46): within each model, two variants of one task
on the same items, each row naming what differs; values equal to statsmodels on the same
per-item arrays. Real runs offline against loopback servers (lm-eval's
``local-chat-completions``, Inspect's ``openai-api``), whose replies depend on what the
model is shown (its demonstrations, its temperature, its system message):

* an lm-eval folder holding cggc_ood_easy2hard and cggc_ood_hard2easy; two Inspect logs of
  ``conceptcomb/cggc -T order=...``; two bundles of CCPT's Base and CoT (the authors'
  recorded GPT-4o replies);
* a user's lm-eval task run with two temperatures, and an Inspect task with two system
  messages (examples/capitals/);
* two runs of one task with different demonstration seeds: without --variants not paired,
  one line naming the seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.model_server import ModelServer
from conceptcomb.testing.recorded import submit_bundle
from tests.ccpt.test_npc_modifier import results_dir  # noqa: F401
from tests.conftest import REPO
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.report.test_variants import _scored, concepts_reply
from tests.leaderboard.run_support import run_ok_in_one_process

pytestmark = pytest.mark.slow
LIMIT = 12
CAPITALS = REPO / "examples" / "capitals"


def reply(chat: dict[str, Any]) -> str:
    """CGGC: some of the concepts (`concepts_reply`); a capitals question: the right city in
    a sentence unless the temperature or the system message says otherwise."""
    users = [m["content"] for m in chat["messages"] if m["role"] == "user"]
    if "capital of" not in users[-1]:
        return concepts_reply(chat)
    country = users[-1].split("capital of ")[-1].rstrip("?")
    capitals = {json.loads(x)["question"]: json.loads(x)["capital"]
                for x in (CAPITALS / "capitals.jsonl").read_text().splitlines()}  # fmt: skip
    right = capitals[users[-1]]
    system = " ".join(m["content"] for m in chat["messages"] if m["role"] == "system")
    wrong = (chat.get("temperature") or 0) > 0.5 or "geographer" in system
    city = "Paris" if wrong and len(country) % 3 else right
    return f"The capital of {country} is {city}."


def _lm_eval(server: ModelServer, out: Path, tasks: str, **options: Any) -> list[str]:
    return lm_eval_command(
        tasks, model="local-chat-completions",
        model_args=f"model=loopback,base_url={server.base_url}/chat/completions,"
        "num_concurrent=4,max_retries=1",
        program=OUR_LM_EVAL, apply_chat_template=True, log_samples=True, output_path=out, **options,
    )  # fmt: skip


def _inspect(task: object, server: ModelServer, logs: Path) -> Path:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    served = get_model("openai-api/loopback/loopback", base_url=server.base_url, api_key="x")
    (log,) = inspect_eval(task, model=served, log_dir=str(logs), display="none", limit=LIMIT)
    assert log.status == "success"
    return logs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every run the tests compare, made once against one loopback model server. Its first
    user pays it: five lm-eval runs (both CGGC orders in one, cggc_ood with two seeds,
    capitals_qa at two temperatures), each its own `OUR_LM_EVAL` command line, one after
    another in one process (`run_ok_in_one_process`: lm-eval's imports, the CGGC data and
    METEOR's JVM paid once), and four Inspect evals in this process, 12 items per CGGC run;
    each CGGC task built draws every test item's demonstrations. 161 s of setup, 87 s of
    CPU for the module (376 s and 197 s of CPU with five plain `lm_eval` processes; both
    alone with -n 0 on 2 cores at load 8-12, 2026-12-06)."""
    import importlib.util

    from conceptcomb.cggc.inspect_tasks import TASKS

    root = tmp_path_factory.mktemp("variants")
    spec = importlib.util.spec_from_file_location("capitals_task", CAPITALS / "capitals.py")
    assert spec is not None and spec.loader is not None
    capitals = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(capitals)
    found = {name: root / name for name in ("orders", "seed0", "seed1", "t0", "t1")}
    with ModelServer({}, reply_for=reply) as server:
        orders = "cggc_ood_easy2hard,cggc_ood_hard2easy"
        lm_eval_runs = [_lm_eval(server, found["orders"], orders, limit=LIMIT)]
        for seed in (0, 1):
            lm_eval_runs.append(_lm_eval(
                server, found[f"seed{seed}"], "cggc_ood", metadata={"seed": seed}, limit=LIMIT
            ))  # fmt: skip
        for t in (0, 1):
            lm_eval_runs.append(_lm_eval(
                server, found[f"t{t}"], "capitals_qa", include_path=CAPITALS,
                gen_kwargs=f"temperature={t}",
            ))  # fmt: skip
        run_ok_in_one_process(lm_eval_runs)
        for order in ("easy_to_hard", "hard_to_easy"):
            task = TASKS["cggc"](setting="ood", order=order)
            found[order] = _inspect(task, server, root / order)
        for name, system in (("brief", "You are brief."), ("geo", "You are a geographer.")):
            task = capitals.capitals(data=str(CAPITALS / "capitals.jsonl"), system=system)
            found[name] = _inspect(task, server, root / name)
    return found


def _variants(*args: object) -> dict:
    code, printed = run_cli("compare", *(str(a) for a in args), "--variants", "--json")
    assert code == 0, printed
    return json.loads(printed)


def _clustered(d: np.ndarray, units: list[Any]) -> Any:
    groups = np.unique([str(u) for u in units], return_inverse=True)[1]
    return OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)


def _lm_eval_items(folder: Path, task: str, metric: str) -> dict[str, tuple[float, Any]]:
    (samples,) = list(folder.rglob(f"samples_{task}_2*.jsonl"))
    rows = [json.loads(line) for line in samples.read_text().splitlines() if line.strip()]
    return {str(r["doc"]["item_id"]): (float(r[metric]), r["doc"]["concept_set_idx"]) for r in rows}


def _check_clustered(row: dict, a: dict, b: dict) -> None:
    ids = sorted(a.keys() & b.keys())
    d = np.array([a[i][0] - b[i][0] for i in ids])
    fit = _clustered(d, [a[i][1] for i in ids])
    assert row["n"] == len(ids) and row["method"] == "t, clustered"
    assert row["difference"] == pytest.approx(np.mean(d))
    assert (row["lower"], row["upper"]) == tuple(pytest.approx(v) for v in fit.conf_int()[0])
    assert row["p"] == pytest.approx(fit.pvalues[0])


def test_one_lm_eval_folder_holding_both_orders(runs: dict[str, Path]) -> None:
    """One lm-eval folder with both orders: each task a run of its own, paired. Over 60 s
    only as the first user of `runs` (its docstring: nine framework runs, 161 s at load
    8-12, 2026-12-06); 3 s of its own."""
    found = _variants(runs["orders"])
    rows = {r["metric"]: r for r in found["comparisons"]}
    row = rows["coverage"]
    assert row["task"] == "cggc_ood_easy2hard vs cggc_ood_hard2easy"
    # the order the task names fix, named as Inspect's -T order names it (issue 54)
    assert row["differs"] == [
        "task: cggc_ood_easy2hard vs cggc_ood_hard2easy", "order: easy_to_hard vs hard_to_easy"
    ]  # fmt: skip
    a, b = (_lm_eval_items(runs["orders"], t, "coverage") for t in row["task"].split(" vs "))
    _check_clustered(row, a, b)
    assert rows["cider"]["method"] == "paired bootstrap, percentile"
    # one folder holds both variants: each is a run of its own, A and B, listed under Runs:
    assert (row["run_a"], row["run_b"]) == ("A", "B")
    assert [(r["run"], r["tasks"]) for r in found["runs"]] == [
        ("A", ["cggc_ood_easy2hard"]), ("B", ["cggc_ood_hard2easy"])
    ]  # fmt: skip
    code, printed = run_cli("compare", str(runs["orders"]), "--variants")
    assert code == 0 and "what differs (A vs B)" in printed
    assert "A - A" not in printed  # both variants are one run's: no letter tells them apart
    listed = printed.split("\ntask ")[0].splitlines()
    assert listed[0] == "Runs:" and len(listed) == 3, printed
    assert listed[1].startswith("  A = ") and "cggc_ood_easy2hard" in listed[1]
    assert listed[2].startswith("  B = ") and "cggc_ood_hard2easy" in listed[2]
    assert f"note: cggc_ood_easy2hard vs cggc_ood_hard2easy: only {LIMIT} items paired" in printed


def test_two_inspect_logs_of_the_order_option(runs: dict[str, Path]) -> None:
    """Over 60 s only as the first user of `runs` (its docstring); a second alone."""
    from inspect_ai.log import read_eval_log

    found = _variants(runs["easy_to_hard"], runs["hard_to_easy"])
    row = next(r for r in found["comparisons"] if r["metric"] == "rougeL")
    assert (row["run_a"], row["run_b"]) == ("A", "B")
    assert "order: easy_to_hard vs hard_to_easy" in row["differs"]
    assert "task: cggc_ood_easy2hard vs cggc_ood_hard2easy" in row["differs"]
    per_run = []
    for folder in (runs["easy_to_hard"], runs["hard_to_easy"]):
        (path,) = list(folder.glob("*.eval"))
        log = read_eval_log(str(path))
        per_run.append({
            s.metadata["item_id"]: (s.scores["cggc"].value["rougeL"], s.metadata["concept_set_idx"])
            for s in log.samples or []
        })  # fmt: skip
    _check_clustered(row, *per_run)


@pytest.mark.shared_data
def test_two_ccpt_bundles_base_and_cot(results_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    results = results_dir  # the CCPT authors' results (skips without them)
    base = _scored(results, tmp_path, "ccpt_npc_emergent", "gpt-4o_naive_0",
                   "npc_emergent_gpt-4o_naive.csv")  # fmt: skip
    cot = _scored(results, tmp_path, "ccpt_npc_emergent_cot", "gpt-4o_cot_0",
                  "npc_emergent_gpt-4o_cot.csv")  # fmt: skip
    bundles = [submit_bundle([str(p)], tmp_path / p.stem.split(".")[0]) for p in (base, cot)]
    found = _variants(*bundles)
    row = next(r for r in found["comparisons"] if r["metric"] == "E")
    assert row["differs"][0] == "task: ccpt_npc_emergent vs ccpt_npc_emergent_cot"
    items = {i.item_id: i for i in load_items(spec_by_name("ccpt_npc_emergent"))}
    per_run = []
    for path in (base, cot):
        samples = path.parent / f"{path.name.split('.')[0]}.samples.jsonl"
        lines = [json.loads(x) for x in samples.read_text().splitlines()]
        per_run.append({s["item_id"]: (s["metrics"]["E"], items[s["item_id"]].combination.lower())
                        for s in lines})  # fmt: skip
    _check_clustered(row, *per_run)
    assert row["n"] == 167 and row["unit"] == "noun phrase"


def test_a_users_lm_eval_task_with_two_temperatures(runs: dict[str, Path]) -> None:
    """Over 60 s only as the first user of `runs` (its docstring); 7 s alone."""
    found = _variants(runs["t0"], runs["t1"])
    row = next(r for r in found["comparisons"] if r["metric"] == "exact_match")
    assert "temperature: 0 vs 1" in row["differs"] and row["task"] == "capitals_qa"
    a, b = (
        np.array([json.loads(x)["exact_match"] for x in next(runs[k].rglob("samples_*.jsonl"))
                  .read_text().splitlines()])
        for k in ("t0", "t1")
    )  # fmt: skip
    table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
             [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]  # fmt: skip
    assert row["method"].startswith("exact McNemar") and row["n"] == 30
    assert row["difference"] == pytest.approx(np.mean(a) - np.mean(b)) and row["difference"] > 0
    assert row["p"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    # without --variants: not paired, one line naming the difference and the flag
    code, printed = run_cli("compare", str(runs["t0"]), str(runs["t1"]))
    assert code == 1
    (line,) = [x for x in printed.splitlines() if "temperature: 0 vs 1" in x and "note:" in x]
    assert "not paired" in line and "--variants" in line
    assert "A: capitals_qa; B: capitals_qa" not in printed  # no contradiction
    code, printed = run_cli(
        "compare", str(runs["t0"]), str(runs["t1"]), "--allow-different-prompts"
    )
    assert "different prompts" not in printed  # the prompts are equal


def test_an_inspect_task_with_two_system_messages(runs: dict[str, Path]) -> None:
    """Over 60 s only as the first user of `runs` (its docstring); a second alone."""
    found = _variants(runs["brief"], runs["geo"])
    row = next(r for r in found["comparisons"] if r["metric"] == "match")
    assert "system: You are brief. vs You are a geographer." in row["differs"]
    assert row["n"] == LIMIT and row["difference"] > 0


def test_different_seeds_are_not_paired_without_variants(runs: dict[str, Path]) -> None:
    """Over 60 s only as the first user of `runs` (its docstring); a second alone."""
    code, printed = run_cli("compare", str(runs["seed0"]), str(runs["seed1"]))
    assert code == 1
    (line,) = [x for x in printed.splitlines() if x.startswith("note: cggc_ood:")]
    assert "seed: 0 vs 1" in line and "not paired" in line and "--variants" in line
    found = _variants(runs["seed0"], runs["seed1"])
    assert {tuple(r["differs"]) for r in found["comparisons"]} == {("seed: 0 vs 1",)}

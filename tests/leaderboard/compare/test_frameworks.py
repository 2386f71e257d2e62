"""``conceptcomb compare`` on the frameworks' own outputs, offline, against loopback model
servers (the frameworks' API runners: lm-eval's ``local-chat-completions``, Inspect's
``openai-api``):

* one of our tasks run by lm-eval and by Inspect with the same replies pairs item by item;
* a task that is not ours, as a user writes one: an lm-eval YAML task over a local JSON
  file (exact match, and lm-eval's corpus ``bleu``) and an Inspect ``@task`` over the same
  file (``match()``, two epochs), each run for two "models" whose right answers are known.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sacrebleu
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar

from conceptcomb.ccpt.data import CcptItem, load_items
from conceptcomb.ccpt.judge_tools.plan import dataset_answer
from conceptcomb.ccpt.lm_eval_hooks import build_docs
from conceptcomb.ccpt.tasks import spec_by_name
from conceptcomb.testing.commands import OUR_LM_EVAL, lm_eval_command
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.model_server import ModelServer
from tests.leaderboard.eee_support import run_cli
from tests.leaderboard.run_support import run_ok

pytestmark = pytest.mark.slow
OURS, LIMIT = "ccpt_pi_emergent", 12
CITIES = "Paris Rome Madrid Lisbon Berlin Vienna Prague Warsaw Oslo Dublin Athens Sofia".split()
REGIONS = ["north", "south", "east", "west", "centre"]
N = 30
# Which items each model gets right (the rest it answers with another city).
RIGHT = {"model-a": [n % 5 != 0 for n in range(N)], "model-b": [n % 2 == 0 for n in range(N)]}


def _lm_eval(server: ModelServer, model: str, tasks: str, out: Path, **options: Any) -> None:
    run_ok(lm_eval_command(
        tasks, model="local-chat-completions",
        model_args=f"model={model},base_url={server.base_url}/chat/completions,"
        "num_concurrent=4,max_retries=1",
        program=OUR_LM_EVAL, apply_chat_template=True, log_samples=True, output_path=out, **options,
    ))  # fmt: skip


def _inspect(task: object, server: ModelServer, model: str, logs: Path, **options: object) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    served = get_model(f"openai-api/loopback/{model}", base_url=server.base_url, api_key="x")
    (log,) = inspect_eval(task, model=served, log_dir=str(logs), display="none", **options)
    assert log.status == "success"


def _compare(*args: object) -> dict:
    code, printed = run_cli("compare", *(str(a) for a in args), "--json")
    assert code == 0, printed
    return json.loads(printed)


def _rows(found: dict, task: str) -> dict[str, dict]:
    return {row["metric"]: row for row in found["comparisons"] if row["task"] == task}


# --- our task in both frameworks ----------------------------------------------------------
@pytest.mark.shared_data
def test_an_lm_eval_run_and_an_inspect_run_pair_item_by_item(tmp_path: Path) -> None:
    from conceptcomb.ccpt.inspect_tasks import ccpt_pi_emergent

    spec = spec_by_name(OURS)
    docs = build_docs(spec, load_items(spec))
    replies = {doc["prompt"]: dataset_answer(spec, CcptItem.from_doc(doc)) for doc in docs}
    with ModelServer(replies) as model, LoopbackServer() as judge:
        metadata = {"judge_base_url": judge.base_url, "judge_model": "gpt-4o",
                    "judge_cache": str(tmp_path / "judge.sqlite")}  # fmt: skip
        _lm_eval(model, "gold", OURS, tmp_path / "lm-eval", limit=LIMIT, metadata=metadata)
        _inspect(ccpt_pi_emergent(**metadata), model, "gold", tmp_path / "inspect", limit=LIMIT)
        _inspect(ccpt_pi_emergent(**metadata), model, "gold", tmp_path / "epochs", limit=LIMIT,
                 epochs=2)  # fmt: skip
        assert model.unknown == 0
    found = _compare(tmp_path / "lm-eval", tmp_path / "inspect")
    labels = [run["label"] for run in found["runs"]]
    assert labels == ["gold (lm-eval)", "openai-api/loopback/gold (inspect)"]
    (unpaired,) = found["unpaired"]
    assert unpaired["paired"] == LIMIT and unpaired["only_a"] == unpaired["only_b"] == []
    rows = _rows(found, OURS)
    assert {"E", "R_HMP", "R_NP"} <= set(rows)
    for row in rows.values():  # the same replies, the same judge: every item scores the same
        assert (row["difference"], row["lower"], row["upper"], row["p"]) == (0, 0, 0, 1)
        assert row["n"] == LIMIT
    # Inspect's epochs, averaged per item first (its bundle keeps no evidence: one reply each)
    found = _compare(tmp_path / "lm-eval", tmp_path / "epochs")
    assert found["unpaired"][0]["paired"] == LIMIT
    assert all(row["difference"] == 0 and row["p"] == 1 for row in found["comparisons"])
    assert {row["metric"] for row in found["comparisons"]} == set(rows)
    # Both frameworks' bundles record each metric's interval, the same from the same items.
    intervals = []
    for name in ("lm-eval", "inspect"):
        code, printed = run_cli("submit-bundle", str(tmp_path / name), "--out", str(tmp_path / "b"))
        assert code == 0 and "(valid)" in printed, printed
        (bundle,) = (tmp_path / "b").glob(f"*_{name}.bundle.json")
        (task,) = json.loads(bundle.read_text())["tasks"]
        intervals.append({m: e["interval"] for m, e in task["metrics"].items() if "interval" in e})
    assert set(intervals[0]) == set(intervals[1]) >= {"E", "R_HMP", "R_NP"}
    for metric, interval in intervals[0].items():
        assert interval["n"] == LIMIT and interval["method"] == "t"
        assert interval["lower"] == pytest.approx(intervals[1][metric]["lower"])


# --- a task that is not ours ----------------------------------------------------------------
def _capital(n: int) -> str:
    """The answer, a sentence (so that BLEU has n-grams to match)."""
    return f"The capital is {CITIES[n % len(CITIES)]}."


def _question(n: int) -> str:
    return f"What is the capital of country number {n}? Answer in one sentence."


def _reply(model: str, n: int) -> str:
    return _capital(n) if RIGHT[model][n] else _capital(n + 1)


YAML = """task: capitals_qa
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{capital}}}}"
generation_kwargs:
  until: ["\\n\\n"]
  max_gen_toks: 16
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
  - metric: bleu
    aggregation: bleu
    higher_is_better: true
metadata:
  version: 1.0
"""

INSPECT_TASK = """from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def capitals(data: str) -> Task:
    fields = FieldSpec(input="question", target="capital", id="id", metadata=["region"])
    return Task(dataset=json_dataset(data, fields), solver=[generate()], scorer=match())
"""


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both "models" run by lm-eval (model-b on the first 25 items only) and Inspect."""
    import importlib.util

    root = tmp_path_factory.mktemp("foreign")
    data = root / "capitals.jsonl"
    rows = [
        {
            "id": f"c{n}",
            "question": _question(n),
            "capital": _capital(n),
            "region": REGIONS[n % len(REGIONS)],
        }
        for n in range(N)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (root / "tasks").mkdir()
    (root / "tasks" / "capitals_qa.yaml").write_text(YAML.format(data=data))
    (root / "capitals_task.py").write_text(INSPECT_TASK)
    module_spec = importlib.util.spec_from_file_location("capitals_task", root / "capitals_task.py")
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    for model in RIGHT:
        replies = {_question(n): _reply(model, n) for n in range(N)}
        with ModelServer(replies) as server:
            limit = 25 if model == "model-b" else None
            _lm_eval(server, model, "capitals_qa", root / "lm-eval" / model,
                     include_path=root / "tasks", limit=limit)  # fmt: skip
            _inspect(module.capitals(str(data)), server, model, root / "inspect" / model, epochs=2)
            assert server.unknown == 0
    return root


def test_an_lm_eval_task_of_ones_own_is_compared_item_by_item(foreign: Path) -> None:
    found = _compare(foreign / "lm-eval" / "model-a", foreign / "lm-eval" / "model-b")
    (unpaired,) = found["unpaired"]
    assert unpaired["paired"] == 25
    assert unpaired["only_a"] == [f"doc {n}" for n in range(25, N)] and unpaired["only_b"] == []
    rows = _rows(found, "capitals_qa")
    a, b = (np.array(RIGHT[m][:25], dtype=float) for m in RIGHT)
    exact = rows["exact_match"]
    assert exact["difference"] == pytest.approx(np.mean(a) - np.mean(b))
    table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
             [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]  # fmt: skip
    assert exact["method"].startswith("exact McNemar")
    assert exact["p"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    bleu = rows["bleu"]  # lm-eval's registered aggregation, on each resample
    refs = [_capital(n) for n in range(25)]
    expected = {m: sacrebleu.corpus_bleu([_reply(m, n) for n in range(25)], [refs]).score
                for m in RIGHT}  # fmt: skip
    assert bleu["method"] == "paired bootstrap, percentile" and bleu["resamples"] == 1000
    assert bleu["difference"] == pytest.approx(expected["model-a"] - expected["model-b"])
    assert bleu["lower"] < bleu["difference"] < bleu["upper"]


def test_an_inspect_task_of_ones_own_is_compared_epochs_averaged(foreign: Path) -> None:
    args = (foreign / "inspect" / "model-a", foreign / "inspect" / "model-b")
    found = _compare(*args, "--cluster", "region")
    (unpaired,) = found["unpaired"]
    assert unpaired["paired"] == N
    row = _rows(found, "capitals")["match"]
    a, b = (np.array(RIGHT[m], dtype=float) for m in RIGHT)
    d = a - b
    groups = np.array([n % len(REGIONS) for n in range(N)])
    fit = OLS(d, np.ones(N)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert row["method"] == "t, clustered" and row["unit"] == "region" and row["clusters"] == 5
    assert row["difference"] == pytest.approx(np.mean(d))
    assert row["stderr"] == pytest.approx(fit.bse[0])
    assert row["p"] == pytest.approx(fit.pvalues[0])
    plain = _rows(_compare(*args), "capitals")["match"]  # without units: McNemar
    assert plain["method"].startswith("exact McNemar") and plain["n"] == N


# --- --items K: the items behind a row (issue 51) -------------------------------------------
def _differing(ids: list[str]) -> list[str]:
    """The paired items whose right/wrong differs between the models, as compare orders
    them: |A - B| (all 1 here), then the id."""
    return sorted(ids)


def test_items_lists_the_largest_differences_of_lm_eval_runs(foreign: Path) -> None:
    found = _compare(foreign / "lm-eval" / "model-a", foreign / "lm-eval" / "model-b",
                     "--items", "3")  # fmt: skip
    rows = _rows(found, "capitals_qa")
    largest = rows["exact_match"]["largest_differences"]
    differ = [n for n in range(25) if RIGHT["model-a"][n] != RIGHT["model-b"][n]]
    assert largest["differing"] == len(differ) > 3
    expected = _differing([f"doc {n}" for n in differ])[:3]
    assert [item["item"] for item in largest["items"]] == expected
    for item in largest["items"]:
        n = int(item["item"].split()[1])
        assert (item["a"], item["b"]) == (float(RIGHT["model-a"][n]), float(RIGHT["model-b"][n]))
        assert item["difference"] == item["a"] - item["b"]
        assert (item["reply_a"], item["reply_b"]) == (_reply("model-a", n), _reply("model-b", n))
    assert rows["bleu"]["largest_differences"] == {"why": "a corpus metric: no value per item"}
    # the table: under the row, each item's id, values and both replies on a line each
    code, printed = run_cli("compare", str(foreign / "lm-eval" / "model-a"),
                            str(foreign / "lm-eval" / "model-b"), "--items", "2")  # fmt: skip
    assert code == 0, printed
    lines = printed.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("capitals_qa  exact_match"))
    n = int(expected[0].split()[1])
    value_a, value_b = (f"{float(RIGHT[m][n]):.2f}" for m in RIGHT)
    sign = "+" if RIGHT["model-a"][n] else ""
    assert lines[at + 1 : at + 5] == [
        f"    largest |A - B| of exact_match: 2 of the {len(differ)} items that differ",
        f"      {expected[0]}  A {value_a}  B {value_b}  (A - B {sign}{float(RIGHT['model-a'][n]) - float(RIGHT['model-b'][n]):.2f})",  # noqa: E501
        f"        A: {_reply('model-a', n)}",
        f"        B: {_reply('model-b', n)}",
    ]
    assert "    bleu: a corpus metric: no value per item" in lines


def test_items_lists_the_largest_differences_of_inspect_logs(foreign: Path) -> None:
    found = _compare(foreign / "inspect" / "model-a", foreign / "inspect" / "model-b",
                     "--items", "4")  # fmt: skip
    largest = _rows(found, "capitals")["match"]["largest_differences"]
    differ = [n for n in range(N) if RIGHT["model-a"][n] != RIGHT["model-b"][n]]
    assert largest["differing"] == len(differ)
    expected = _differing([f"sample c{n}" for n in differ])[:4]
    assert [item["item"] for item in largest["items"]] == expected
    for item in largest["items"]:
        n = int(item["item"].removeprefix("sample c"))
        assert abs(item["difference"]) == 1.0  # both epochs alike, averaged
        assert (item["reply_a"], item["reply_b"]) == (_reply("model-a", n), _reply("model-b", n))


def test_an_impossible_target_difference_is_one_line(foreign: Path) -> None:
    """docs/comparing.md's shape: `--cluster region --target-difference 10` on Inspect's 0-1
    `match` crashed in statsmodels (issue 54); now one line naming the scale and the option."""
    args = [str(foreign / "inspect" / m) for m in RIGHT]
    code, printed = run_cli("compare", *args, "--cluster", "region", "--target-difference", "10")
    assert code == 2 and printed.count("\n") == 1, printed
    assert printed.startswith("conceptcomb: error: --target-difference 10: ")
    assert "0-1 (its items' values)" in printed and "Warning" not in printed
    # a target on the scale plans, for the rows it fits
    code, printed = run_cli("compare", *args, "--cluster", "region", "--target-difference", "0.3")
    assert code == 0 and "Items needed to find a true difference of 0.3" in printed, printed
    # a large effect on the scale (0.99 of 0-1): statsmodels' solver no longer fails or warns
    code, printed = run_cli("compare", *args, "--target-difference", "0.99")
    assert code == 0 and re.search(r"\n  capitals match: \d+ items \[paired t", printed), printed
    assert "Warning" not in printed
    # --cluster naming a field no item holds: one line, before the comparison
    code, printed = run_cli("compare", *args, "--cluster", "province")
    assert code == 2 and printed.count("\n") == 1, printed
    assert printed.startswith("conceptcomb: error: --cluster province: no item of capitals")

"""Noun phrase completion judges the modifier the CCPT authors' ratings were recorded for.

The authors' ``results/npc_emergent_*.csv`` (their repository at the pinned commit) keep
every model reply (``<model>_<method>_<seed>_generated_``, multi-oracle: the N replies),
the modifier they judged (``..._modifier``) and GPT-4o's ratings. The tests read them from
``../shared/data/ccpt/results`` or ``$CONCEPTCOMB_CCPT_RESULTS``, e.g. a folder made with
``git --git-dir=CCPT.git archive dbd6c08 results | tar -x`` (then point at ``results/``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import statistics
from collections import Counter
from pathlib import Path

import pytest

from conceptcomb.ccpt.answers import parse_answer
from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.inspect_tasks import TASKS
from conceptcomb.ccpt.lm_eval_hooks import JudgeFilter, load_dataset
from conceptcomb.ccpt.metrics import aggregate
from conceptcomb.ccpt.modifiers import ENV_VAR
from conceptcomb.ccpt.scoring import score_replies
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec
from conceptcomb.cli import main
from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.testing.judge_server import LoopbackServer
from conceptcomb.testing.recorded import recorded_replies, replay_table
from tests.ccpt.conftest import NPC_TASK, LmEvalRun
from tests.ccpt.test_inspect import means, run_task
from tests.ccpt.test_lm_eval import task_manager
from tests.conftest import SHARED_DATA, read_jsonl

pytestmark = pytest.mark.shared_data

SPEC = CcptTaskSpec(NPC_EMERGENT)
RESULTS_ENV = "CONCEPTCOMB_CCPT_RESULTS"
GPT4O_BASE = "npc_emergent_gpt-4o_naive.csv"
GPT4O_BASE_SHA256 = "36329b2fe48a776ae8982905270e4201dd104e47060b5634bd9cf725c6370843"
# Table 3, GPT-4o, Base, noun phrase completion: mean of three seeds.
TABLE_3_GPT4O_BASE = {"R_HMP": 53.1, "R_NP": 69.8, "E": 20.4}

# Replies whose judged modifier differs from the recorded one, (reply's modifier, recorded)
# -> count. All but one are replies where the authors' rule finds no content word besides
# the head ("why question", "zero effect", "an eye for an eye" with modifier "for an"): their
# script then sent an EMPTY concept to the judge; we judge the modifier as written instead.
# "null effect": our en_core_web_sm 3.8 tags "null" as an adjective, their model did not.
EXCEPTIONS = {
    ("why", ""): 10,
    ("for an", ""): 6,
    ("zero", ""): 6,
    ("no", ""): 5,
    ("another", ""): 3,
    ("some", ""): 2,
    ("for an eye", ""): 1,
    ("under", ""): 1,
    ("my", ""): 1,
    ("may", ""): 1,
    ("karma", ""): 1,
    ("null", ""): 1,
    ("for", ""): 1,
    ("not", ""): 1,
}
# Replies the files keep beside ratings recorded for another reply (the recorded noun phrase
# is not the reply's): for two of their three seeds, Table 6's per-iteration files keep the
# judged columns of another run (where its replies differ); in Qwen's multi-oracle file the
# authors took the i-th dictionary of the N replies together, and two replies held two.
OTHER_REPLY = {
    "npc_emergent_gpt-4o_sa-conceptnet-2.csv": 334,
    "npc_emergent_gpt-4o_sa-conceptnet-3.csv": 358,
    "npc_emergent_gpt-4o_sa-conceptnet-4.csv": 352,
    "npc_emergent_Qwen2.5-72B-Instruct_multi.csv": 8,
}


@pytest.fixture(scope="module")
def results_dir() -> Path:
    for folder in (os.environ.get(RESULTS_ENV), SHARED_DATA / "ccpt" / "results"):
        if folder and (Path(folder) / GPT4O_BASE).is_file():
            return Path(folder)
    pytest.skip(
        f"the CCPT authors' results/npc_emergent_*.csv are not in {SHARED_DATA}/ccpt/results: "
        f"put them there or set {RESULTS_ENV} (see this module's docstring)"
    )


def test_judged_modifier_is_the_one_the_authors_rated(results_dir: Path) -> None:
    """Acceptance: >= 98% of the recorded replies; the rest listed in EXCEPTIONS."""
    compared = agree = surface_agree = 0
    mismatches: Counter[tuple[str, str]] = Counter()
    other_reply: Counter[str] = Counter()
    files = sorted(results_dir.glob("npc_emergent_*.csv"))
    assert len(files) == 31
    for path in files:
        for recorded in recorded_replies(path):
            parsed = parse_answer(NPC_EMERGENT, recorded.reply, recorded.root)
            assert parsed is not None and parsed.modifier is not None, recorded
            if parsed.fields["combination"] != recorded.combination:
                other_reply[path.name] += 1
                continue
            compared += 1
            if parsed.fields["modifier"] == recorded.modifier:
                agree += 1
            else:
                mismatches[(parsed.modifier.read, recorded.modifier)] += 1
            surface = parse_answer(NPC_EMERGENT, recorded.reply, recorded.root, "surface")
            surface_agree += surface is not None and surface.fields["modifier"] == recorded.modifier
    assert compared == 23998
    assert agree / compared >= 0.98
    assert dict(mismatches) == EXCEPTIONS
    assert agree == compared - sum(EXCEPTIONS.values())  # 99.8%
    assert dict(other_reply) == OTHER_REPLY
    # The surface form is what they judged for only about three replies in four.
    assert 0.70 < surface_agree / compared < 0.80


def _gpt4o_base_seed(results_dir: Path, seed: int) -> tuple[list[str], dict, set, list]:
    """(replies, the recorded ratings as a replay table, pairs recorded twice, rows)."""
    recorded = list(recorded_replies(results_dir / GPT4O_BASE, f"gpt-4o_naive_{seed}"))
    table, twice = replay_table(recorded)
    return [r.reply for r in recorded], table, twice, recorded


def _strict_settings(server: LoopbackServer) -> JudgeSettings:
    options = {"judge_base_url": server.base_url, "judge_cache": "off", "judge_format_retries": 0}
    return JudgeSettings.resolve(options)


def test_recorded_gpt4o_replies_reproduce_table_3(results_dir: Path) -> None:
    """Acceptance: GPT-4o's Base row of Table 3 (NPC) from its recorded replies, judged by a
    server that answers only the pairs the authors' ratings carry."""
    digest = hashlib.sha256((results_dir / GPT4O_BASE).read_bytes()).hexdigest()
    assert digest == GPT4O_BASE_SHA256, "not the results file of CCPT commit dbd6c08"
    items = load_items(SPEC)
    per_seed: dict[str, list[float]] = {name: [] for name in TABLE_3_GPT4O_BASE}
    all_twice = set()
    for seed in range(3):
        replies, table, twice, recorded = _gpt4o_base_seed(results_dir, seed)
        all_twice |= twice
        with LoopbackServer(ratings=table, strict=True) as server:
            scores, usage = score_replies(SPEC, items, replies, _strict_settings(server))
            assert server.stats.unknown == set(), "questions the authors' ratings do not answer"
        assert usage is not None and usage.failures == 0
        result = aggregate(SPEC, [score.metrics for score in scores])
        assert result["format_failures"].value == 0 and result["E"].n == len(items)
        for name in per_seed:
            per_seed[name].append(result[name].value)
        # R_NP rates the noun phrases only: exactly the authors' per-seed mean.
        authors_np = statistics.fmean(r.ratings[0] - 1 for r in recorded) / 9 * 100
        assert math.isclose(result["R_NP"].value, authors_np, abs_tol=1e-9)
    # GPT-4o rated these pairs twice (as a head and as a modifier) with different values;
    # a replay gives one answer per pair, which moves R_HMP and E by at most 0.3.
    assert all_twice == {("fly", "improbable"), ("plastic", "useless")}
    for name, published in TABLE_3_GPT4O_BASE.items():
        assert abs(statistics.fmean(per_seed[name]) - published) <= 0.3, (name, per_seed[name])


def test_surface_modifiers_ask_questions_the_authors_never_asked(results_dir: Path) -> None:
    """With npc_modifier=surface the recorded ratings answer 38 fewer questions (seed 0)."""
    replies, table, _, _ = _gpt4o_base_seed(results_dir, 0)
    with LoopbackServer(ratings=table, strict=True) as server:
        scores, usage = score_replies(
            SPEC, load_items(SPEC), replies, _strict_settings(server), "surface"
        )
    unknown = server.stats.unknown
    assert {("floating", "unstable"), ("winged", "fantastical"), ("staged", "fake")} <= unknown
    assert usage is not None and usage.failures == len(unknown) == 38
    assert sum(bool(score.errors) for score in scores) == 40


def test_inspect_scores_and_records_the_recorded_replies(results_dir: Path, tmp_path: Path) -> None:
    """Inspect gives the same numbers and records the modifier as read and as judged."""
    replies, table, _, _ = _gpt4o_base_seed(results_dir, 1)
    items = load_items(SPEC)
    with LoopbackServer(ratings=table, strict=True) as server:
        settings = _strict_settings(server)
        direct, _ = score_replies(SPEC, items, replies, settings)
        log = run_task(SPEC.name, replies, tmp_path, judge_base_url=server.base_url,
                       judge_cache="off")  # fmt: skip
        assert server.stats.unknown == set()
    expected = aggregate(SPEC, [score.metrics for score in direct])
    for name, value in means(log).items():
        assert math.isclose(value, expected[name].value, abs_tol=1e-9), name
    assert log.eval.metadata["npc_modifier"] == "lemma"
    records = [sample.scores["ccpt"].metadata["modifier"] for sample in log.samples]
    assert {record["rule"] for record in records} == {"lemma"}
    changed = {(r["read"], r["judged"]) for r in records if r["read"] != r["judged"]}
    assert {("floating", "float"), ("staged", "stage"), ("blindfolded", "blindfold")} <= changed
    assert len([r for r in records if r["read"] != r["judged"]]) == 37


# --- the option through every path -----------------------------------------------------
REPLIES = [  # for the first three items, heads lettuce, moth, effect
    '{"combination": "floating lettuce", "modifier": "floating"}',
    '{"combination": "a winged moth", "modifier": "winged"}',
    '{"combination": "an effect of a toothpick"}',
]


def _modifier_records(records: list[dict]) -> list[tuple[str, str, str]]:
    return [
        (r["modifier"]["read"], r["modifier"]["judged"], r["modifier"]["rule"]) for r in records
    ]


LEMMA_RECORDS = [("floating", "float", "lemma"), ("winged", "wing", "lemma"),
                 ("", "toothpick", "lemma")]  # fmt: skip
SURFACE_RECORDS = [("floating", "floating", "surface"), ("winged", "winged", "surface"),
                   ("", "toothpick", "surface")]  # fmt: skip


def test_lm_eval_metadata_sets_the_rule(judge_server, fresh_cache: Path) -> None:
    """--metadata reaches the docs; the judge filter scores with the docs' rule."""
    for metadata, expected in (({}, LEMMA_RECORDS), ({"npc_modifier": "surface"}, SURFACE_RECORDS)):
        loaded = task_manager(judge_base_url=judge_server.base_url, **metadata).load([SPEC.name])
        docs = list(loaded["tasks"][SPEC.name].test_docs())[:3]
        assert {doc["npc_modifier"] for doc in docs} == {expected[0][2]}
        records = JudgeFilter().apply([[reply] for reply in REPLIES], docs)
        assert _modifier_records(records) == expected
        assert records[0]["judged"]["modifier"]["concept"] == expected[0][1]


def test_an_unknown_rule_is_refused_before_generation(capsys) -> None:
    with pytest.raises(ConfigError, match="npc_modifier='stem' is not a rule we know"):
        load_dataset(SPEC.name, judge="off", npc_modifier="stem")
    with pytest.raises(ConfigError, match="npc_modifier='stem'"):
        TASKS[SPEC.name](judge="off", npc_modifier="stem")


def test_inspect_option_sets_the_rule(judge_server, tmp_path: Path, fresh_cache: Path) -> None:
    for options, expected in (({}, LEMMA_RECORDS), ({"npc_modifier": "surface"}, SURFACE_RECORDS)):
        log = run_task(SPEC.name, REPLIES, tmp_path, judge_base_url=judge_server.base_url,
                       **options)  # fmt: skip
        by_id = {sample.id: sample.scores["ccpt"].metadata for sample in log.samples}
        records = [by_id[item.item_id] for item in load_items(SPEC)[: len(REPLIES)]]
        assert _modifier_records(records) == expected
        assert log.eval.metadata["npc_modifier"] == expected[0][2]


def _write_predictions(path: Path) -> Path:
    items = load_items(SPEC)[: len(REPLIES)]
    lines = [json.dumps({"doc": item.as_doc(), "response": reply})
             for item, reply in zip(items, REPLIES, strict=True)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_score_flag_and_environment_set_the_rule(
    judge_server, tmp_path: Path, fresh_cache: Path, monkeypatch
) -> None:
    predictions = _write_predictions(tmp_path / "preds.jsonl")
    runs = (([], {}, LEMMA_RECORDS), (["--npc-modifier", "surface"], {}, SURFACE_RECORDS),
            ([], {ENV_VAR: "surface"}, SURFACE_RECORDS),
            (["--npc-modifier", "lemma"], {ENV_VAR: "surface"}, LEMMA_RECORDS))  # fmt: skip
    for number, (flags, env, expected) in enumerate(runs):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        samples = tmp_path / f"samples{number}.jsonl"
        command = ["score", SPEC.name, "--predictions", str(predictions), "--judge-base-url",
                   judge_server.base_url, "--samples-output", str(samples), *flags]  # fmt: skip
        assert main(command) == 0
        assert _modifier_records(read_jsonl(samples)) == expected, flags
        monkeypatch.delenv(ENV_VAR, raising=False)


def test_score_flag_is_for_noun_phrase_completion(tmp_path: Path, capsys) -> None:
    predictions = _write_predictions(tmp_path / "preds.jsonl")
    assert main(["score", "ccpt_pi_emergent", "--predictions", str(predictions),
                 "--judge", "off", "--npc-modifier", "surface"]) == 2  # fmt: skip
    error = capsys.readouterr().err
    assert "--npc-modifier applies to the noun phrase completion tasks" in error
    assert len(error.strip().splitlines()) == 1


def test_missing_spacy_model_is_one_clear_error(monkeypatch, tmp_path: Path, capsys) -> None:
    """Without en_core_web_sm the default rule refuses to run and says what to install."""
    from conceptcomb.ccpt.npc_lemma import analysis as lemma_analysis
    from conceptcomb.cggc import metrics as cggc_metrics
    from conceptcomb.common import spacy_english

    # Every cache of the one pipeline is emptied, before and after: one left holding the old
    # pipeline would no longer be the one english_pipeline() gives (one copy per process).
    caches = (spacy_english.english_pipeline, lemma_analysis.spacy_pipeline, cggc_metrics._spacy)
    monkeypatch.setattr(spacy_english, "SPACY_MODELS", ("no_such_spacy_model",))
    for cached in caches:
        cached.cache_clear()
    try:
        with pytest.raises(ConfigError) as raised:
            load_dataset(SPEC.name, judge="off")
        message = str(raised.value)
        assert "pip install 'conceptcomb[spacy]'" in message and "npc_modifier=surface" in message
        with pytest.raises(ConfigError, match="needs spaCy's en_core_web_sm"):
            TASKS[SPEC.name](judge="off")
        predictions = _write_predictions(tmp_path / "preds.jsonl")
        assert main(["score", SPEC.name, "--predictions", str(predictions), "--judge", "off"]) == 2
        error = capsys.readouterr().err.strip()
        assert "needs spaCy's en_core_web_sm" in error and len(error.splitlines()) == 1
        # The surface rule and the other tasks need no spaCy.
        assert len(load_dataset(SPEC.name, judge="off", npc_modifier="surface")["test"]) == 167
        assert len(load_dataset("ccpt_pi_emergent", judge="off")["test"]) == 200
    finally:
        for cached in caches:
            cached.cache_clear()


@pytest.mark.slow
def test_lm_eval_cli_run_records_the_rule(
    pi_emergent_run: LmEvalRun, tmp_path: Path, fresh_cache: Path
) -> None:
    """SmolLM2 through the lm_eval CLI with --metadata npc_modifier=surface; rescoring its
    samples with the same rule gives lm-eval's numbers. The run is the session's
    `pi_emergent_run` (tests/ccpt/conftest.py), which does 4 items of ccpt_npc_emergent with
    that rule beside ccpt_pi_emergent, generated (up to 48 tokens) and judged by the loopback
    server; then `conceptcomb score` in this process. Where it is the session's first user
    of that run it pays it: 127 s of setup, the SmolLM2 folder's conversion included (on 2
    cores at load 9-10; with a run of its own, 22 s at load 5-6; 2026-12-06)."""
    run = pi_emergent_run
    assert SPEC.name == NPC_TASK and run.metadata["npc_modifier"] == "surface"
    metrics = json.loads(next(run.out.rglob("results_*.json")).read_text())["results"][NPC_TASK]
    path = next(run.out.rglob(f"samples_{NPC_TASK}_*.jsonl"))
    samples = read_jsonl(path)
    assert {sample["doc"]["npc_modifier"] for sample in samples} == {"surface"}
    logged = [ast.literal_eval(sample["filtered_resps"][0]) for sample in samples]  # repr
    records = [record for record in logged if record["answer"]]
    assert records, "SmolLM2 gave no readable completion: the test proves nothing"
    for record in records:
        assert record["modifier"]["rule"] == "surface"
        assert record["judged"]["modifier"]["concept"] == record["modifier"]["judged"]
    results = tmp_path / "rescored.json"
    judge = ["--judge-base-url", run.server.base_url, "--judge-model",
             run.metadata["judge_model"], "--npc-modifier", "surface"]  # fmt: skip
    command = ["score", SPEC.name, "--predictions", str(path), *judge, "--output", str(results)]
    assert main(command) == 0
    rescored = json.loads(results.read_text())["results"]
    for name in ("R_HMP", "R_NP", "E", "format_failures"):
        if f"{name},judged" in metrics:
            assert math.isclose(rescored[name]["value"], metrics[f"{name},judged"], abs_tol=1e-9)


def test_the_replay_script_prints_table_3s_rows(results_dir: Path) -> None:
    """scripts/replay_ccpt_npc.py, whose table the README's Evaluation Report shows."""
    import subprocess
    import sys

    script = Path(__file__).parents[2] / "scripts" / "replay_ccpt_npc.py"
    done = subprocess.run(
        [sys.executable, str(script), "--results", str(results_dir)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {
        tuple(cells[1:3]): cells[3:]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 8
    }
    seeds, *ours, unanswered, published = rows[("GPT-4o", "Base")][:6]
    ours = [float(value) for value in ours]
    paper = [float(value) for value in published.split(" / ")]
    assert (seeds, unanswered) == ("3", "0")
    assert paper == list(TABLE_3_GPT4O_BASE.values())
    assert all(abs(a - b) <= 0.3 for a, b in zip(ours, paper, strict=True)), (ours, paper)
    assert len(rows) == 1 + 9  # the header and Base / CoT of the models the files hold


def test_the_replay_scripts_runs_compare_base_with_cot(results_dir: Path, tmp_path: Path) -> None:
    """``--out``: GPT-4o's seeds through ``conceptcomb score``, which ``compare --variants``
    pairs as Base against CoT (the README's Evaluation Report), each side the table's row."""
    import subprocess
    import sys

    from tests.leaderboard.eee_support import run_cli

    script = Path(__file__).parents[2] / "scripts" / "replay_ccpt_npc.py"
    argv = [sys.executable, str(script), "--results", str(results_dir), "--model", "gpt-4o"]
    done = subprocess.run(
        [*argv, "--out", str(tmp_path)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/seed*"))
    assert written == [f"gpt-4o_{m}/seed{n}" for m in ("cot", "naive") for n in range(3)]
    runs = [str(tmp_path / "gpt-4o_naive"), str(tmp_path / "gpt-4o_cot")]
    code, printed = run_cli("compare", *runs, "--variants", "--json")
    assert code == 0, printed
    rows = {row["metric"]: row for row in json.loads(printed)["comparisons"]}
    assert set(rows) == {"R_HMP", "R_NP", "E"}
    table = {
        cells[2]: [float(v) for v in cells[4:7]]
        for line in done.stdout.splitlines()
        if line.startswith("| GPT-4o") and (cells := [c.strip() for c in line.split("|")])
    }
    for position, metric in enumerate(("R_HMP", "R_NP", "E")):
        row = rows[metric]
        assert row["n"] == 167
        # the item means of three seeds: the table's mean of seed means, to its rounding
        # (CoT leaves one question unanswered in one seed: that item's mean has two seeds)
        assert abs(row["a"] - table["Base"][position]) <= 0.1, (metric, row)
        assert abs(row["b"] - table["CoT"][position]) <= 0.2, (metric, row)

"""Rescoring saved outputs: the 2008 ``concept property score`` format and lm-eval logs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conceptcomb.common.errors import DataFormatError
from conceptcomb.mcrae.docs import build_doc
from conceptcomb.mcrae.metrics import concept_metrics, mean_metrics
from conceptcomb.mcrae.rescore import rescore
from conceptcomb.mcrae.tasks import ESSLLI44, McraeTaskSpec
from tests.mcrae.test_metrics import gold_words

pytestmark = pytest.mark.shared_data


def write_triples(path: Path, rows: list[tuple[str, str, float]], sep: str = "\t") -> Path:
    path.write_text("".join(f"{c}{sep}{p}{sep}{s}\n" for c, p, s in rows), encoding="utf-8")
    return path


def test_gold_words_in_the_2008_format_score_one(esslli_golds, tmp_path: Path) -> None:
    rng = random.Random(2008)
    rows = []
    for gold in esslli_golds.values():
        # Scores rank the gold words first whatever the line order; "onions" is McRae's name.
        name = "onions" if gold.concept == "onion" else gold.concept
        rows += [(name, word, 1.0 + rng.random()) for word in gold_words(gold)]
        rows += [(name, "zzz", 0.5)]
    rng.shuffle(rows)
    values = rescore("mcrae_esslli44", write_triples(tmp_path / "out.txt", rows))
    assert values["P@10"] == pytest.approx((43 + 0.9) / 44)  # snail has 9 gold features
    assert values["P@10_strict"] == values["P@10"]
    assert values["R@10"] == 1.0
    assert values["concepts"] == 44 and values["concepts_missing"] == 0


def test_the_hand_checked_duplicates_through_the_file_format(esslli_golds, tmp_path) -> None:
    words = "sweet red sweetness juicy fruits reds pits cherries round trees pie sweeter summer"
    words = [*words.split(), "small", "stem", "red"]
    rows = [("cherry", word, 100.0 - rank) for rank, word in enumerate(words)]
    rows.append(("unicorn", "horn", 1.0))  # not an ESSLLI concept: counted, skipped
    path = write_triples(tmp_path / "cherry.txt", rows[::-1], sep=" ")
    values = rescore("mcrae_esslli44", path)
    # cherry scores P@10 = 0.8 (see test_metrics); the 43 missing concepts score 0.
    assert values["P@10"] == pytest.approx(0.8 / 44)
    assert values["P@20"] == pytest.approx(0.5 / 44)
    assert values["concepts_missing"] == 43 and values["unknown_lines"] == 1


def test_bad_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("dog\tbark\t0.9\ndog\tfur\thigh\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 2: the score 'high' is not a number"):
        rescore("mcrae_esslli44", path)
    with pytest.raises(DataFormatError, match="no such file"):
        rescore("mcrae_esslli44", tmp_path / "missing.txt")
    with pytest.raises(KeyError, match="not a McRae task"):
        rescore("mcrae_animals", path)


def test_lm_eval_sample_log_is_scored_like_the_task(esslli_golds, tmp_path: Path) -> None:
    spec = McraeTaskSpec(ESSLLI44)
    replies = {"cat": "1. fur\n2. whiskers\n3. purrs\n4. fur coat", "pen": "ink, writing, blue"}
    lines = []
    for doc_id, (concept, reply) in enumerate(replies.items()):
        doc = build_doc(spec, esslli_golds[concept], "norms_order", "tagged")
        lines.append({"doc_id": doc_id, "doc": doc, "resps": [[reply]], "filtered_resps": [reply]})
    path = tmp_path / "samples_mcrae_esslli44_2026-01-01T00-00-00.000000.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    values = rescore("mcrae_esslli44", path)
    expected = mean_metrics(
        [
            concept_metrics(esslli_golds["cat"], ["fur", "whiskers", "purrs", "fur coat"]),
            concept_metrics(esslli_golds["pen"], ["ink", "writing", "blue"]),
        ]
    )
    assert {k: values[k] for k in expected} == pytest.approx(expected)
    assert values["P@10"] == pytest.approx((0.3 + 0.3) / 2)  # "fur coat" duplicates "fur"
    assert values["concepts"] == 2
    with pytest.raises(DataFormatError, match="samples of mcrae_esslli44, not mcrae_all"):
        rescore("mcrae_all", path)


def test_score_command_reads_the_2008_format(tmp_path, capsys) -> None:
    from conceptcomb.cli import main

    lines = ["cherry\tred\t0.9", "cherry\tpit 0.5", "cherry\tsweet\t0.4", "unicorn\thorn\t1.0"]
    path = tmp_path / "system.txt"
    path.write_text("\n".join(lines) + "\n")
    assert main(["score", "mcrae_esslli44", "--predictions", str(path),
                 "--output", str(tmp_path / "r.json")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "P@10" in printed and "non-commercial" in printed.lower()
    import json

    results = json.loads((tmp_path / "r.json").read_text())
    assert results["n_items"] == 44
    assert results["results"]["P@10"]["value"] > 0

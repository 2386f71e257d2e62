"""What one process remembers while it builds CGGC tasks: the few-shot candidates' docs,
rendered once per (dataset, setting, style, seed), are the docs lm-eval listed from the
Arrow split before, every build gets its own copies, and an edited data file or another
style gives other docs."""

from __future__ import annotations

import gzip
from pathlib import Path

import datasets
import pytest

from conceptcomb.cggc import lm_eval_hooks, metrics
from conceptcomb.cggc.data import PACKAGED_DIR, load_dataset
from conceptcomb.cggc.docs import demonstration_docs
from conceptcomb.cggc.prompts import STYLES, question
from conceptcomb.cggc.verify_hooks import _with_field

POOL_LINES, TEST_LINES = 3000, 300  # concept sets: enough for id items to get 4 demos


def small_dataset(folder: Path, pool_lines: int = POOL_LINES) -> Path:
    """The first lines of the shipped files, as a dataset folder of plain JSONL."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem, lines in (("compos_train", pool_lines), ("compos_test", TEST_LINES)):
        with gzip.open(PACKAGED_DIR / f"{stem}.jsonl.gz", "rt", encoding="utf-8") as handle:
            head = [line for _, line in zip(range(lines), handle, strict=False)]
        (folder / f"{stem}.jsonl").write_text("".join(head), encoding="utf-8")
    return folder


def test_candidate_docs_are_rendered_per_dataset_setting_and_style(tmp_path: Path) -> None:
    folder = small_dataset(tmp_path / "data")
    dataset = load_dataset(folder)
    paper, script = STYLES["paper"], STYLES["script"]
    docs = demonstration_docs(dataset, "ood", paper, 0)
    assert docs is demonstration_docs(load_dataset(folder), "ood", paper, 0)  # remembered
    assert [d["item_id"] for d in docs] == [item.item_id for item in dataset.pool]
    assert docs[0] == {**dataset.pool[0].as_doc(), "prompt": question(dataset.pool[0], paper, 0)}
    assert [d["item_id"] for d in demonstration_docs(dataset, "id", paper, 0)] == [
        item.item_id for item in dataset.test
    ]
    scripted = demonstration_docs(dataset, "ood", script, 0)
    assert scripted[0]["prompt"] == question(dataset.pool[0], script, 0) != docs[0]["prompt"]
    assert demonstration_docs(dataset, "ood", paper, 1) != docs  # the edges' order follows the seed
    small_dataset(folder, POOL_LINES - 1)  # the pool file edited: another dataset, other docs
    edited = demonstration_docs(load_dataset(folder), "ood", paper, 0)
    assert len(edited) < len(docs)


def test_lm_eval_gets_the_pool_as_its_arrow_split_gave_it_each_build_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lm-eval lists the few-shot split once per task: the plain list holds the rows that
    listing the Arrow split gave, and a doc changed in one task's list is not in the next."""
    monkeypatch.setattr(metrics, "start_meteor", lambda: None)  # no JVM for this test
    folder = str(small_dataset(tmp_path / "data"))
    first = lm_eval_hooks.load_dataset("cggc_id", data_dir=folder)
    shown = first[lm_eval_hooks.DEMONSTRATIONS]
    assert isinstance(shown, list) and isinstance(first["test"], datasets.Dataset)
    shared = demonstration_docs(load_dataset(folder), "id", STYLES["paper"], 0)
    assert shown == datasets.Dataset.from_list(list(shared)).to_list()
    shown[0]["prompt"] = "changed by a caller"
    again = lm_eval_hooks.load_dataset("cggc_id", data_dir=folder)[lm_eval_hooks.DEMONSTRATIONS]
    assert again[0]["prompt"] == shared[0]["prompt"] != "changed by a caller"


def test_the_judge_field_reaches_both_splits_in_their_own_form() -> None:
    docs = [{"item_id": "a"}, {"item_id": "b"}]
    listed = _with_field(docs, "judge", {"judge": "off"})
    assert listed == [
        {"item_id": "a", "judge": {"judge": "off"}},
        {"item_id": "b", "judge": {"judge": "off"}},
    ]
    assert docs == [{"item_id": "a"}, {"item_id": "b"}]  # the shared docs untouched
    table = _with_field(datasets.Dataset.from_list(docs), "judge", {"judge": "off"})
    assert table.to_list() == listed

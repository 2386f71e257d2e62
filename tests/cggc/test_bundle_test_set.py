"""A CGGC bundle's check draws the demonstrations of the bundle's items only (issue 42):
`task_pair` gives each test item what `task_pairs` gives it (None for the items it leaves
out), and the evidence's test set counts its items from the card where the card's count
applies (the shipped dataset, the default options), else draws every item as before."""

from __future__ import annotations

import random

import pytest

from conceptcomb.cggc.data import load_dataset
from conceptcomb.cggc.docs import task_pair, task_pairs
from conceptcomb.cggc.evidence import CggcEvidence, _card_size
from conceptcomb.cggc.tasks import TaskOptions, spec_by_name


def test_the_card_count_applies_to_the_shipped_dataset_with_the_default_options() -> None:
    assert _card_size("cggc_ood", TaskOptions()) == 15985
    # A bundle of a task whose name fixes an option may record it or not: the same items.
    typed = _card_size("cggc_ood_test_typeA", TaskOptions())
    assert typed == 2182 == _card_size("cggc_ood_test_typeA", TaskOptions(test_type="A"))
    assert _card_size("cggc_ood", TaskOptions(seed=1)) is None
    assert _card_size("cggc_ood", TaskOptions(k=3)) is None
    assert _card_size("cggc_ood", TaskOptions(test_type="B")) is None


@pytest.mark.slow  # every item's demonstrations drawn, in both settings: ~10 s
@pytest.mark.parametrize("task", ["cggc_ood", "cggc_id"])
def test_one_item_at_a_time_gives_what_the_whole_draw_gives(task: str) -> None:
    spec, options = spec_by_name(task), TaskOptions()
    whole = {item.item_id: demos for item, demos in task_pairs(spec, options, False)}
    test = load_dataset(None).test
    left_out = [item for item in test if item.item_id not in whole]
    assert left_out  # 182 items of 16,167: each setting leaves some out
    sample = random.Random(0).sample(list(test), 300) + left_out[:50]
    for item in sample:
        pair = task_pair(spec, options, item.item_id)
        if item.item_id in whole:
            assert pair == (item, whole[item.item_id]), item.item_id
        else:
            assert pair is None, item.item_id
    items = CggcEvidence().test_set(task, {}, None).items
    assert len(items) == len(whole)
    assert all(f"compos_test:{item.item_id}" not in items for item in left_out[:50])
    drawn_anew = CggcEvidence().test_set(task, {"seed": "1"}, None).items  # not the card's
    assert isinstance(drawn_anew, dict) and len(drawn_anew) == len(list(drawn_anew))

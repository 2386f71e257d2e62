"""Shared fixtures: the real norms and the ESSLLI gold standard, built once."""

from __future__ import annotations

import pytest

from conceptcomb.mcrae.data import load_norms
from conceptcomb.mcrae.docs import load_golds
from conceptcomb.mcrae.gold.features import ConceptGold
from conceptcomb.mcrae.tasks import ALL, ESSLLI44, McraeTaskSpec


@pytest.fixture(scope="session")
def norms():
    return load_norms()


@pytest.fixture(scope="session")
def esslli_golds() -> dict[str, ConceptGold]:
    return {gold.concept: gold for gold in load_golds(McraeTaskSpec(ESSLLI44))}


@pytest.fixture(scope="session")
def all_golds() -> dict[str, ConceptGold]:
    return {gold.concept: gold for gold in load_golds(McraeTaskSpec(ALL))}

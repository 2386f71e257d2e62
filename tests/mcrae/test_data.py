"""The pinned McRae norms and ESSLLI nouns: checksums, parsing, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conceptcomb.common.datafiles import resolve_files, sha256_of
from conceptcomb.common.errors import ChecksumError, DataFormatError, DataUnavailableError
from conceptcomb.mcrae.data import (
    ESSLLI_NOUNS_DATASET,
    MCRAE_DATASET,
    NORMS_FILE,
    NOUNS_FILE,
    load_esslli_nouns,
    mcrae_name,
    read_esslli_nouns,
    read_norms,
)
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.shared_data


@pytest.mark.parametrize("dataset", [MCRAE_DATASET, ESSLLI_NOUNS_DATASET], ids=lambda d: d.title)
def test_pinned_files_match_the_shared_copies(dataset) -> None:
    for pinned in dataset.files:
        assert sha256_of(SHARED_DATA / "mcrae" / pinned.name) == pinned.sha256, pinned.name
        assert pinned.url and dataset.revision in pinned.url


def test_norms_have_541_concepts_and_7259_rows(norms) -> None:
    assert len(norms) == 541
    assert sum(len(features) for features in norms.values()) == 7259
    dog = {feature.feature: feature.prod_freq for feature in norms["dog"]}
    assert dog["beh_-_barks"] == 21 and dog["has_4_legs"] == 18


def test_the_44_esslli_nouns_are_mcrae_concepts(norms) -> None:
    nouns = load_esslli_nouns()
    assert len(nouns) == 44 and nouns[0] == "chicken" and nouns[-1] == "helicopter"
    assert [noun for noun in nouns if noun not in norms] == ["onion"]
    assert mcrae_name("onion") in norms


def test_a_file_from_another_revision_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "mcrae"
    folder.mkdir()
    original = (SHARED_DATA / "mcrae" / NOUNS_FILE).read_text(encoding="utf-8")
    (folder / NOUNS_FILE).write_text(original.replace("chicken", "hen"), encoding="utf-8")
    with pytest.raises(ChecksumError, match=NOUNS_FILE):
        resolve_files(ESSLLI_NOUNS_DATASET, [NOUNS_FILE], tmp_path)


def test_a_folder_without_the_norms_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailableError, match=f"{NORMS_FILE} is not in"):
        resolve_files(MCRAE_DATASET, [NORMS_FILE], tmp_path)


def test_malformed_norms_name_the_line_or_column(tmp_path: Path) -> None:
    path = tmp_path / "norms.txt"
    path.write_text("Concept\tFeature\tProd_Freq\ndog\tbeh_-_barks\tmany\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="line 2: Prod_Freq='many'"):
        read_norms(path)
    path.write_text("Concept\tFeat\ndog\tbarks\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="missing column"):
        read_norms(path)
    path.write_text("word\tclass\nchicken\tbird\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="noun"):
        read_esslli_nouns(path)


def test_cli_verifies_both_mcrae_datasets(capsys) -> None:
    from conceptcomb.cli import main

    assert main(["data", "verify", "mcrae", "--data-dir", str(SHARED_DATA)]) == 0
    assert main(["data", "verify", "esslli08-nouns", "--data-dir", str(SHARED_DATA)]) == 0
    out = capsys.readouterr().out
    assert f"ok  {NORMS_FILE}" in out and f"ok  {NOUNS_FILE}" in out

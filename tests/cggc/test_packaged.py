"""The CGGC dataset shipped in the package: found with no data option, pinned, licensed."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from conceptcomb.cggc import data
from conceptcomb.cggc.data import (
    MANIFEST,
    PACKAGED_DIR,
    PACKAGED_SHA256,
    dataset_dir,
    load_dataset,
)
from conceptcomb.cggc.dataset_build.sources import CN100K_DATASET, COMMONGEN_DATASET
from conceptcomb.common.errors import DataFormatError


def test_no_data_option_means_the_packaged_dataset(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    assert dataset_dir(None) == PACKAGED_DIR
    # CONCEPTCOMB_DATA_DIR names every benchmark's parent folder: without CGGC files in it,
    # CGGC still runs on the packaged dataset.
    monkeypatch.setenv("CONCEPTCOMB_DATA_DIR", str(tmp_path))
    assert dataset_dir(None) == PACKAGED_DIR
    dataset = load_dataset(None)
    assert dataset.packaged and dataset.sha256 == PACKAGED_SHA256
    assert dataset.pool and dataset.test
    assert {item.split for item in dataset.test} == {"test"}


def test_identity_is_the_manifest_whether_gzipped_or_not(tmp_path: Path) -> None:
    for gz in PACKAGED_DIR.glob("*.jsonl.gz"):
        (tmp_path / gz.name.removesuffix(".gz")).write_bytes(gzip.decompress(gz.read_bytes()))
    built = load_dataset(tmp_path)
    assert not built.packaged
    assert built.sha256 == PACKAGED_SHA256
    assert (PACKAGED_DIR / MANIFEST).read_text() == data.manifest(
        {name: line.split()[0] for line in (PACKAGED_DIR / MANIFEST).read_text().splitlines()
         for name in [line.split()[1]]}
    )  # fmt: skip


def test_a_damaged_packaged_copy_is_refused(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "packaged"
    shutil.copytree(PACKAGED_DIR, copy)
    test_file = copy / "compos_test.jsonl.gz"
    lines = gzip.decompress(test_file.read_bytes()).decode().splitlines(keepends=True)
    test_file.write_bytes(gzip.compress("".join(lines[1:]).encode()))  # one record less
    monkeypatch.setattr(data, "PACKAGED_DIR", copy.resolve())
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    with pytest.raises(DataFormatError, match="reinstall conceptcomb"):
        load_dataset(None)


def test_build_info_names_the_pinned_inputs_and_the_licence_both_sources() -> None:
    info = json.loads((PACKAGED_DIR / "build_info.json").read_text())
    assert info["seed"] == 0 and info["options"]["splits"] == ["train", "valid"]
    assert info["options"]["limit_concept_sets"] is None  # the full build
    pinned = {f.sha256 for f in (*COMMONGEN_DATASET.files, *CN100K_DATASET.files)}
    assert info["inputs"] and all(v["sha256"] in pinned for v in info["inputs"].values())
    assert all(not key.startswith("/") for key in info["inputs"])  # no machine's folders
    licence = (PACKAGED_DIR / "LICENSE.md").read_text()
    for needed in ("CC BY-SA 4.0", "ConceptNet", "CommonGen", "MIT License"):
        assert needed in licence

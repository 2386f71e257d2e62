"""The demo names the CGGC dataset before any model starts, from the files' sha256 alone
when it is the shipped one (issue 35: parsing its items cost the demo ~9 s of CPU)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from conceptcomb.cggc import data
from conceptcomb.common.errors import DataFormatError


def test_the_shipped_dataset_is_described_as_loading_it_would() -> None:
    assert data.describe_dataset(None) == data.load_dataset(None).describe()


def test_a_damaged_shipped_file_is_refused(tmp_path: Path, monkeypatch) -> None:
    shipped = tmp_path / "packaged_data"
    shutil.copytree(data.PACKAGED_DIR, shipped)
    test_file = shipped / f"{data.TEST_FILE}.jsonl.gz"
    test_file.write_bytes(gzip.compress(gzip.decompress(test_file.read_bytes())[:-200]))
    monkeypatch.setattr(data, "PACKAGED_DIR", shipped)
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    with pytest.raises(DataFormatError, match="do not match their pinned sha256"):
        data.describe_dataset(None)


def test_parsed_items_are_kept_in_the_cache_by_the_dataset_s_sha256(
    fresh_cache: Path, monkeypatch
) -> None:
    """Each process that reads CGGC parsed ~50 MB of JSON (~9 s of CPU): the items are
    kept in the user cache under the files' sha256 and read back the same."""
    data._load.cache_clear()
    parsed = data.load_dataset(None)
    path = data.cached_items_path(parsed.sha256)
    assert path.is_file() and fresh_cache in path.parents
    data._load.cache_clear()

    def no_parsing(*args, **kwargs):
        raise AssertionError("the files were parsed again")

    monkeypatch.setattr(data, "read_items", no_parsing)
    cached = data.load_dataset(None)
    assert cached.pool == parsed.pool and cached.test == parsed.test
    assert cached.sha256 == parsed.sha256
    data._load.cache_clear()


def test_a_cache_of_other_files_is_not_used(fresh_cache: Path) -> None:
    data._load.cache_clear()
    parsed = data.load_dataset(None)
    path = data.cached_items_path(parsed.sha256)
    path.write_text(path.read_text().replace(parsed.sha256, "0" * 64, 1))
    data._load.cache_clear()
    assert data.load_dataset(None).test == parsed.test  # parsed again, and written again
    assert parsed.sha256 in path.read_text()[:200]
    data._load.cache_clear()

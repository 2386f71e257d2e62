"""The CCPT loader on the real release files: subsets, checksums, and its error messages."""

from __future__ import annotations

import csv
import hashlib
import shutil
import threading
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import (
    CCPT_DATASET,
    TP_TEST_FILE,
    derive_tp_test,
    load_items,
)
from conceptcomb.ccpt.tasks import CcptTaskSpec, spec_by_name
from conceptcomb.common.datafiles import PinnedDataset, PinnedFile, SourceFile, resolve_files
from conceptcomb.common.errors import ChecksumError, DataFormatError, DataUnavailableError

pytestmark = pytest.mark.shared_data


@pytest.mark.parametrize(
    ("task", "size", "label"),
    [
        ("ccpt_pi_emergent", 200, "emergent"),
        ("ccpt_npc_emergent", 167, "emergent"),
        ("ccpt_pi_canceled", 167, "canceled"),
        ("ccpt_pi_emergent_full", 2500, "emergent"),
        ("ccpt_pi_canceled_full", 1613, "canceled"),
    ],
)
def test_paper_subsets(task: str, size: int, label: str) -> None:
    items = load_items(spec_by_name(task))
    assert len(items) == size
    assert {item.label for item in items} == {label}
    assert len({item.item_id for item in items}) == size


def test_test_subset_rows_are_the_indexed_rows(ccpt_dir: Path) -> None:
    items = load_items(CcptTaskSpec("pi_emergent"))
    assert items[0].item_id == "ccpt_emergent:0"
    assert (items[0].combination, items[0].root, items[0].modifier, items[0].property) == (
        "a boat on the rocks",
        "boat",
        "rock",
        "strand",
    )


def test_type_prediction_test_set_is_table_5s() -> None:
    items = load_items(CcptTaskSpec("tp"))
    assert Counter(item.label for item in items) == {
        "emergent": 250,
        "component": 250,
        "canceled": 250,
        "others": 250,
    }
    full = load_items(CcptTaskSpec("tp", subset="full"))
    assert Counter(item.label for item in full) == {
        "emergent": 2500,
        "canceled": 1613,
        "component": 8201,
    }


def _copy_ccpt(ccpt_dir: Path, target: Path) -> Path:
    shutil.copytree(ccpt_dir, target)
    for path in target.iterdir():
        path.chmod(0o644)
    return target


def test_missing_column_names_file_and_column(ccpt_dir: Path, tmp_path: Path, monkeypatch) -> None:
    folder = _copy_ccpt(ccpt_dir, tmp_path / "ccpt")
    path = folder / "ccpt_emergent.csv"
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([r[:3] + r[4:] for r in rows])  # drop "modifier"
    monkeypatch.setenv("CONCEPTCOMB_VERIFY_CHECKSUMS", "0")
    with pytest.raises(DataFormatError, match=r"ccpt_emergent\.csv: missing column\(s\) modifier"):
        load_items(CcptTaskSpec("pi_emergent"), data_dir=folder)


def test_empty_field_names_row_and_column(ccpt_dir: Path, tmp_path: Path, monkeypatch) -> None:
    folder = _copy_ccpt(ccpt_dir, tmp_path / "ccpt")
    path = folder / "ccpt_canceled.csv"
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    rows[5][rows[0].index("property")] = " "
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    monkeypatch.setenv("CONCEPTCOMB_VERIFY_CHECKSUMS", "0")
    with pytest.raises(DataFormatError, match=r"ccpt_canceled\.csv: row 6 has an empty 'property'"):
        load_items(CcptTaskSpec("pi_canceled", subset="full"), data_dir=folder)


def test_modified_file_is_refused_by_checksum(ccpt_dir: Path, tmp_path: Path) -> None:
    folder = _copy_ccpt(ccpt_dir, tmp_path / "ccpt")
    with (folder / "test_index.json").open("a") as handle:
        handle.write(" ")
    with pytest.raises(ChecksumError, match=r"test_index\.json: sha256 is [0-9a-f]{64}"):
        load_items(CcptTaskSpec("pi_emergent"), data_dir=folder)


def test_missing_file_in_named_folder(tmp_path: Path) -> None:
    (tmp_path / "ccpt").mkdir()
    with pytest.raises(DataUnavailableError, match=r"ccpt_emergent\.csv is not in .*ccpt") as err:
        load_items(CcptTaskSpec("pi_emergent"), data_dir=tmp_path)
    # The folder option as each front end spells it, to drop it and download instead.
    for form in ("conceptcomb --data-dir", "Inspect -T data_dir", "lm-eval --metadata data_dir"):
        assert form in str(err.value)


def test_offline_without_cache_says_what_to_do(monkeypatch, fresh_cache: Path) -> None:
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR")
    dead = PinnedDataset(
        key="ccpt",
        title="CCPT",
        repository=CCPT_DATASET.repository,
        revision=CCPT_DATASET.revision,
        files=(PinnedFile("x.csv", "0" * 64, "http://127.0.0.1:9/x.csv"),),
    )
    with pytest.raises(DataUnavailableError) as caught:
        resolve_files(dead, ["x.csv"])
    message = str(caught.value)
    assert "Could not download x.csv" in message
    assert "CONCEPTCOMB_DATA_DIR=/path/to/folder" in message
    assert CCPT_DATASET.revision in message
    assert not list(fresh_cache.rglob("*.part"))


@pytest.fixture
def file_server(ccpt_dir: Path, tmp_path: Path):
    """Serves a copy of the release (and a tp source) over HTTP, standing in for GitHub."""
    root = tmp_path / "served"
    _copy_ccpt(ccpt_dir, root)
    _write_tp_source(ccpt_dir / TP_TEST_FILE, root / "tp_gpt-4o_naive.csv")
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", root
    server.shutdown()


def _write_tp_source(tp_test: Path, target: Path) -> None:
    """A results file shaped like the authors' (item columns + the model's answer)."""
    with tp_test.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*rows[0], "gpt-4o_generated_"])
        for row in rows[1:]:
            writer.writerow([*row, '[\'{"property_type": "emergent"}\']'])


def _served(dataset: PinnedDataset, base: str) -> PinnedDataset:
    files = []
    for pinned in dataset.files:
        if pinned.source is not None:
            source = SourceFile(pinned.source.name, base + pinned.source.name)
            files.append(PinnedFile(pinned.name, pinned.sha256, None, source, pinned.derive))
        else:
            files.append(PinnedFile(pinned.name, pinned.sha256, base + pinned.name))
    return PinnedDataset(
        dataset.key, dataset.title, dataset.repository, dataset.revision, tuple(files)
    )


def test_download_checks_and_caches(file_server, monkeypatch, fresh_cache: Path) -> None:
    base, _ = file_server
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR")
    dataset = _served(CCPT_DATASET, base)
    files = resolve_files(dataset, ["test_index.json", TP_TEST_FILE])
    assert files["test_index.json"].is_relative_to(fresh_cache)
    # tp_test.csv is derived from the results file and must hash to the pinned sum.
    digest = hashlib.sha256(files[TP_TEST_FILE].read_bytes()).hexdigest()
    assert digest == CCPT_DATASET.file(TP_TEST_FILE).sha256
    # Second call: from the cache, even with the server gone.
    monkeypatch.setattr("conceptcomb.common.datafiles._download", _no_download)
    assert resolve_files(dataset, ["test_index.json", TP_TEST_FILE]) == files


def _no_download(*args, **kwargs):
    raise AssertionError("should have come from the cache")


def test_download_with_wrong_checksum_leaves_nothing(file_server, monkeypatch, fresh_cache):
    base, root = file_server
    (root / "test_index.json").write_text("{}")
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR")
    with pytest.raises(ChecksumError):
        resolve_files(_served(CCPT_DATASET, base), ["test_index.json"])
    assert not [p for p in fresh_cache.rglob("*") if p.is_file()]


def test_tp_test_derivation_reproduces_the_published_file(ccpt_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "tp_gpt-4o_naive.csv"
    _write_tp_source(ccpt_dir / TP_TEST_FILE, source)
    derive_tp_test(source, tmp_path / "tp_test.csv")
    assert (tmp_path / "tp_test.csv").read_bytes() == (ccpt_dir / TP_TEST_FILE).read_bytes()


def test_user_folder_with_only_the_tp_source(ccpt_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    _write_tp_source(ccpt_dir / TP_TEST_FILE, folder / "tp_gpt-4o_naive.csv")
    items = load_items(CcptTaskSpec("tp"), data_dir=folder)
    assert len(items) == 1000

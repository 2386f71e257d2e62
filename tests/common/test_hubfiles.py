"""Hub datasets pinned like the others: a pins file with the full commit and each file's
sha256 (written by scripts/pin_hub_dataset.py from a clone of the hub repository), every
file found checked against it, bundles' records checked against it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import conceptcomb.leaderboard.bundles.datasets as report_datasets
from conceptcomb.abspyramid.data import ABSPYRAMID_DATASET
from conceptcomb.common.datafiles import sha256_of
from conceptcomb.common.errors import ChecksumError, DataFormatError
from conceptcomb.common.hubfiles import HubDataset, HubPins, resolve_hub_files
from conceptcomb.leaderboard.bundles.datasets import check_record, hub_record
from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "pin_hub_dataset.py"
FILES = ABSPYRAMID_DATASET.files


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A git repository laid out as the hub's AbsPyramid, one small file per path."""
    folder = tmp_path / "AbsPyramid"
    for number, name in enumerate(FILES):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps({"event": f"event {number}", "label": 1}) + "\n")
    git(folder.parent, "init", "-q", str(folder))
    git(folder, "add", ".")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "upload")
    return folder


def pins_file(path: Path, revision: str, sha256: dict[str, str] | None = None) -> Path:
    record = {"repo_id": ABSPYRAMID_DATASET.repo_id, "revision": revision, "sha256": sha256 or {}}
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def pin(clone: Path, pins: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        str(SCRIPT),
        "abspyramid",
        "--folder",
        str(clone),
        "--pins",
        str(pins),
    ]
    command += ["--pins", str(pins)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_script_pins_the_full_commit_and_every_file(clone: Path, tmp_path: Path) -> None:
    commit = git(clone, "rev-parse", "HEAD")
    pins = pins_file(tmp_path / "pins.json", commit[:7])  # what was known: the short commit
    done = pin(clone, pins)
    assert done.returncode == 0, done.stderr
    dataset = HubPins(pins).dataset("abspyramid", "AbsPyramid", FILES)
    assert dataset.revision == commit and dataset.fully_pinned
    assert dataset.sha256 == {name: sha256_of(clone / name) for name in FILES}
    assert f"{len(FILES)} files pinned" in done.stdout

    # Every file found is checked against its pin: the clone passes, a changed file does not.
    assert resolve_hub_files(dataset, FILES, clone) == {name: clone / name for name in FILES}
    changed = clone / FILES[0]
    changed.write_text(changed.read_text() + "\n")
    with pytest.raises(ChecksumError) as caught:
        resolve_hub_files(dataset, [FILES[0]], clone)
    message = str(caught.value)
    assert "\n" not in message and str(changed) in message and dataset.sha256[FILES[0]] in message
    assert "CONCEPTCOMB_VERIFY_CHECKSUMS=0" in message


@pytest.mark.parametrize("case", ["other commit", "LFS pointer", "missing file"])
def test_the_script_refuses_what_it_cannot_pin(clone: Path, tmp_path: Path, case: str) -> None:
    commit = git(clone, "rev-parse", "HEAD")
    pins = pins_file(tmp_path / "pins.json", "0000000" if case == "other commit" else commit[:7])
    if case == "LFS pointer":
        (clone / FILES[3]).write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\n")
    if case == "missing file":
        (clone / FILES[5]).unlink()
    before = pins.read_text()
    done = pin(clone, pins)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pin_hub_dataset: ")
    expected = {"other commit": "checkout 0000000", "LFS pointer": "git lfs pull",
                "missing file": "missing"}[case]  # fmt: skip
    assert expected in done.stderr
    assert pins.read_text() == before  # nothing written


def test_a_pins_file_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="'revision'"):
        HubPins(pins_file(tmp_path / "a.json", None)).read()  # type: ignore[arg-type]
    stray = pins_file(tmp_path / "b.json", "8d48c28", {"elsewhere.json": "00"})
    with pytest.raises(DataFormatError, match=r"elsewhere\.json"):
        HubPins(stray).dataset("abspyramid", "AbsPyramid", FILES)


def test_a_short_recorded_commit_names_the_pinned_one() -> None:
    full = "8d48c28" + "1" * 33
    dataset = HubDataset("k", "K", "o/r", full, ("a",), sha256={"a": "0" * 64})
    assert dataset.fully_pinned
    assert dataset.same_revision("8d48c28") and dataset.same_revision(full)
    assert not dataset.same_revision("8d48c2") and not dataset.same_revision("9d48c28")
    assert not HubDataset("k", "K", "o/r", "8d48c28", ("a",)).fully_pinned


def test_bundle_records_are_checked_against_the_pins(clone: Path, tmp_path: Path, monkeypatch):
    commit = git(clone, "rev-parse", "HEAD")
    sha256 = {name: sha256_of(clone / name) for name in FILES}
    dataset = HubPins(pins_file(tmp_path / "p.json", commit, sha256)).dataset(
        "abspyramid", "AbsPyramid", FILES
    )
    monkeypatch.setattr(report_datasets, "hub_dataset", lambda key: dataset)
    record = hub_record(dataset, str(clone))
    assert all(entry["checked_locally"] for entry in record["files"].values())
    assert check_record(record, "datasets[0]") == []
    # A run on other data, or an edited bundle: the file is named.
    record["files"][FILES[2]]["sha256"] = "f" * 64
    problems = check_record(record, "datasets[0]")
    assert len(problems) == 1 and FILES[2] in problems[0] and sha256[FILES[2]] in problems[0]
    # A bundle written before the full commit was pinned records the short one: still it.
    record["files"][FILES[2]]["sha256"] = sha256[FILES[2]]
    assert check_record({**record, "revision": commit[:7]}, "datasets[0]") == []
    assert check_record({**record, "revision": "0000000"}, "datasets[0]")
    # Files the run did not find fall back to their pins, as for the other datasets.
    shutil.rmtree(clone / "AbsPyramid_Generation")
    record = hub_record(dataset, str(clone))
    entry = record["files"][next(name for name in FILES if "Generation" in name)]
    assert entry["checked_locally"] is False and entry["sha256"] in sha256.values()

"""AbsPyramid data: the hub layout in a folder, the hub cache, schema errors, offline errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conceptcomb.abspyramid.data import (
    ABSPYRAMID_DATASET,
    REPO_ID,
    REVISION,
    check_seed,
    choose_demonstrations,
    file_name,
    load_demonstrations,
    load_items,
    read_detection,
    read_generation,
)
from conceptcomb.abspyramid.tasks import DETECTION, GENERATION, AbsTaskSpec
from conceptcomb.cli import main as cli_main
from conceptcomb.common.errors import ConfigError, DataFormatError, DataUnavailableError
from conceptcomb.common.hubfiles import hub_cache_dir, resolve_hub_files
from tests.abspyramid.conftest import real_records

pytestmark = pytest.mark.shared_data


def test_detection_items_from_a_folder(abspyramid_dir: Path) -> None:
    items = load_items(AbsTaskSpec(DETECTION, "noun"), data_dir=abspyramid_dir)
    assert len(items) == 20
    first = items[0]  # the first real record
    assert (first.event, first.concept, first.label, first.type) == (
        "<faxes of lists> become available", "office supplies", 0, "noun"
    )  # fmt: skip
    assert first.instance == "faxes of lists"
    assert first.premise == "faxes of lists become available"
    assert first.hypothesis == "office supplies become available"
    assert {item.label for item in items} == {0, 1}
    merged = load_items(AbsTaskSpec(DETECTION, "all"), data_dir=abspyramid_dir)
    assert len(merged) == 60 and {item.type for item in merged} == {"noun", "verb", "event"}
    # The real records keep their instance spans exactly.
    assert [i.instance for i in merged[:30]] == [r["event"][r["event"].index("<") + 1 :
                                                           r["event"].index(">")]
                                                 for r in real_records()]  # fmt: skip


def test_generation_items_are_multi_reference(abspyramid_dir: Path) -> None:
    items = load_items(AbsTaskSpec(GENERATION, "noun"), data_dir=abspyramid_dir)
    assert items[0].references == ("dog", "pet", "young animal", "animal")
    assert items[0].instance == "puppy"
    valid = load_items(AbsTaskSpec(GENERATION, "event"), "valid", abspyramid_dir)
    assert valid[1].references == ("power outage", "blackout")


def test_parent_folder_in_the_environment(abspyramid_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("CONCEPTCOMB_DATA_DIR", str(abspyramid_dir.parent))
    assert len(load_items(AbsTaskSpec(DETECTION, "verb"))) == 20


def test_demonstrations_are_train_records_of_the_items_type(abspyramid_dir: Path) -> None:
    noun = load_demonstrations("noun", data_dir=abspyramid_dir)
    assert list(noun) == ["noun"] and len(noun["noun"].pool) == 11  # every train record
    merged = load_demonstrations("all", data_dir=abspyramid_dir)
    assert {kind: len(pool.pool) for kind, pool in merged.items()} == {
        "noun": 11, "verb": 11, "event": 11
    }  # fmt: skip
    for item in load_items(AbsTaskSpec(DETECTION, "all"), data_dir=abspyramid_dir):
        demos = choose_demonstrations(merged, item)
        assert len(demos) == 10 and len({d.item_id for d in demos}) == 10
        assert {d.type for d in demos} == {item.type}
        assert all(d.item_id.startswith("all:train:") for d in demos)


def test_demonstrations_are_drawn_per_item_and_seed(abspyramid_dir: Path) -> None:
    def draws(seed: int) -> list[list[str]]:
        pools = load_demonstrations("verb", seed, abspyramid_dir)
        items = load_items(AbsTaskSpec(DETECTION, "verb"), data_dir=abspyramid_dir)
        return [[d.item_id for d in choose_demonstrations(pools, item)] for item in items]

    first = draws(0)
    assert draws(0) == first  # reproducible
    assert draws(1) != first  # another seed, another draw
    assert len({tuple(ids) for ids in first}) > 1  # each item its own draw
    # Not the first 10 train records in file order (task version 1.0).
    assert first[0] != [f"verb:train:{n}" for n in range(10)]


def test_an_item_is_never_its_own_demonstration(abspyramid_dir: Path) -> None:
    """A train record as the target (the pool holds it): never among its own 10."""
    pools = load_demonstrations("event", 3, abspyramid_dir)
    for target in pools["event"].pool:
        chosen = choose_demonstrations(pools, target)
        assert len(chosen) == 10 and target not in chosen


@pytest.mark.parametrize("seed", [-1, 1.5, "abc", True, [0]])
def test_a_bad_seed_is_one_line_naming_the_option(seed: object) -> None:
    with pytest.raises(ConfigError, match=r"^seed=.*non-negative integer") as caught:
        check_seed(seed)
    assert "\n" not in str(caught.value)


def test_seed_defaults_to_zero_and_reads_text() -> None:
    assert (check_seed(None), check_seed(""), check_seed(7), check_seed(" 12 ")) == (0, 0, 7, 12)


def test_too_few_demonstrations_is_an_error(abspyramid_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    shutil.copytree(abspyramid_dir, folder)
    train = folder / file_name(DETECTION, "verb", "train")
    train.write_text("".join(train.read_text().splitlines(keepends=True)[:4]))
    with pytest.raises(DataFormatError, match=r"train.json: .*need 10 train records of type verb"):
        load_demonstrations("verb", data_dir=folder)


def _write(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"event": "no markers here", "concept": "c", "label": 1}, "mark the instance as <...>"),
        ({"event": "a <b> c", "concept": "c", "label": 2}, "'label' must be 0 or 1"),
        ({"event": "a <b> c", "concept": " ", "label": 1}, "'concept' must be a non-empty"),
        ({"event": "a <b> c", "concept": "c", "label": 1, "type": "adj"}, "'type' must be one"),
    ],
)
def test_bad_detection_records_name_file_line_and_field(
    tmp_path: Path, record: dict, message: str
) -> None:
    good = {"event": "PersonX ate <an apple>", "concept": "fruit", "label": 1}
    path = _write(tmp_path / "test.json", good, record)
    with pytest.raises(DataFormatError, match=rf"test.json, line 2: .*{message}"):
        read_detection(path, "noun", "t")


def test_merged_records_need_their_type(tmp_path: Path) -> None:
    path = _write(tmp_path / "test.json", {"event": "a <b> c", "concept": "c", "label": 1})
    assert read_detection(path, "noun", "t")[0].type == "noun"  # a relation's own folder
    with pytest.raises(DataFormatError, match="merged files need it"):
        read_detection(path, "all", "t")


def test_bad_lines_and_empty_references(tmp_path: Path) -> None:
    path = tmp_path / "test.json"
    path.write_text('{"event": "a <b> c", "concept": "x", "label": 1}\nnot json\n')
    with pytest.raises(DataFormatError, match="line 2: not a JSON object"):
        read_detection(path, "noun", "t")
    _write(path, {"event": "a <b> c", "concept": "x[SEP] [SEP]y", "type": "noun"})
    with pytest.raises(DataFormatError, match=r"empty reference between \[SEP\]"):
        read_generation(path, "noun", "t")


def test_unknown_split_is_refused(abspyramid_dir: Path) -> None:
    with pytest.raises(ConfigError, match="split='train'"):
        load_items(AbsTaskSpec(DETECTION, "noun"), "train", abspyramid_dir)


def test_folder_without_the_file(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailableError, match=r"noun_dataset/test.json is not in") as err:
        load_items(AbsTaskSpec(DETECTION, "noun"), data_dir=tmp_path)
    assert "conceptcomb --data-dir" in str(err.value)  # the hub's files: the same advice


@pytest.fixture
def no_folder(monkeypatch, fresh_cache: Path) -> Path:
    monkeypatch.delenv("CONCEPTCOMB_DATA_DIR", raising=False)
    return fresh_cache


def test_offline_without_a_folder_is_one_clear_line(no_folder: Path) -> None:
    with pytest.raises(DataUnavailableError) as caught:
        load_items(AbsTaskSpec(DETECTION, "noun"))
    message = str(caught.value)
    assert "\n" not in message
    for part in (REPO_ID, f"revision {REVISION}", "data_dir", "CONCEPTCOMB_DATA_DIR"):
        assert part in message
    assert "HF_HUB_OFFLINE is set" in message


def test_no_network_is_reported_without_waiting_for_retries(no_folder: Path, monkeypatch) -> None:
    from huggingface_hub import constants

    import conceptcomb.common.hubfiles as hubfiles

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hubfiles, "_hub_reachable", lambda: False)
    with pytest.raises(DataUnavailableError, match=r"\(no network\)"):
        load_items(AbsTaskSpec(GENERATION, "verb"))


def _seed_hub_cache(source: Path, names: list[str]) -> None:
    """The layout huggingface_hub writes when it downloads at revision 8d48c28."""
    commit = "8d48c28" + "0" * 33
    repo = hub_cache_dir() / f"datasets--{REPO_ID.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / REVISION).write_text(commit)
    for name in names:
        target = repo / "snapshots" / commit / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, target)


def test_a_cached_download_is_used_offline(abspyramid_dir: Path, no_folder: Path) -> None:
    name = file_name(GENERATION, "event", "test")
    _seed_hub_cache(abspyramid_dir, [name])
    path = resolve_hub_files(ABSPYRAMID_DATASET, [name])[name]
    assert path.is_relative_to(no_folder)
    assert len(load_items(AbsTaskSpec(GENERATION, "event"))) == 8


def test_cli_verifies_a_folder_and_prints_checksums(abspyramid_dir: Path, capsys) -> None:
    assert cli_main(["data", "verify", "abspyramid", "--data-dir", str(abspyramid_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([line for line in lines if line.startswith("ok ")]) == 24
    assert all("sha256=" in line for line in lines if line.startswith("ok "))
    assert "not pinned to a full commit and sha256 yet" in lines[-1]


def test_cli_offline_error(no_folder: Path, capsys) -> None:
    assert cli_main(["data", "fetch", "abspyramid"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and REPO_ID in err and REVISION in err

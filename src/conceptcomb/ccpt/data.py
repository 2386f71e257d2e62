"""CCPT items: the pinned release files, checked, parsed and cut into the paper's subsets."""

from __future__ import annotations

import csv
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from conceptcomb.ccpt.tasks import (
    NPC_EMERGENT,
    PI_CANCELED,
    PI_EMERGENT,
    TYPE_PREDICTION,
    CcptTaskSpec,
)
from conceptcomb.common.datafiles import (
    PinnedDataset,
    PinnedFile,
    SourceFile,
    require_columns,
    resolve_files,
)
from conceptcomb.common.errors import DataFormatError

REVISION = "dbd6c08b413b939c3f3878ffb0bd5f048f71dc50"
_RAW = f"https://raw.githubusercontent.com/seokwon99/CCPT/{REVISION}/"

EMERGENT_FILE = "ccpt_emergent.csv"
CANCELED_FILE = "ccpt_canceled.csv"
COMPONENT_FILE = "ccpt_component.csv"
ADDITIONAL_EMERGENT_FILE = "add_ccpt_emergent.csv"
TEST_INDEX_FILE = "test_index.json"
TP_TEST_FILE = "tp_test.csv"
CONCEPTNET_FILE = "conceptnet_adjacent.json"
TP_TEST_SOURCE = SourceFile("tp_gpt-4o_naive.csv", _RAW + "results/tp_gpt-4o_naive.csv")
# Said when a file lacks a column: the usual cause is a file from elsewhere.
HINT = " Is this a CCPT release file?"
TP_COLUMNS = ("combination", "property", "human_label_majority")
TRIPLET_COLUMNS = ("combination", "root", "modifier", "property", "human_label_majority")
PROPERTY_TYPES = ("emergent", "component", "canceled", "others")


def derive_tp_test(source: Path, target: Path) -> None:
    """tp_test.csv = the item columns of the authors' ``results/tp_gpt-4o_naive.csv``.

    That results file is the only published copy of the paper's 1000-item type-prediction
    test set (its 250 "others" items were sampled once and exist nowhere else); we drop the
    GPT-4o answer column. The output's sha256 is pinned, so a changed source is refused.
    """
    with source.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        require_columns(source, reader.fieldnames, TP_COLUMNS, HINT)
        rows = [[row[column] for column in TP_COLUMNS] for row in reader]
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(TP_COLUMNS)
        writer.writerows(rows)


CCPT_DATASET = PinnedDataset(
    key="ccpt",
    title="CCPT",
    repository="github.com/seokwon99/CCPT",
    revision=REVISION,
    files=(
        PinnedFile(
            EMERGENT_FILE,
            "3aedc874f9389668a2435f23c7b68a0402cb1b4397804c1631ae6cccb9928169",
            _RAW + EMERGENT_FILE,
        ),
        PinnedFile(
            CANCELED_FILE,
            "0d2353975068987f9c29a850a625e446ffdc90c24e169042e6fd7b902d0be1f9",
            _RAW + CANCELED_FILE,
        ),
        PinnedFile(
            COMPONENT_FILE,
            "d4b0266f1ed58b3a038d1117631a88b0c6bf5c8adc2ea0a575a6dc4941e66a77",
            _RAW + COMPONENT_FILE,
        ),
        PinnedFile(
            ADDITIONAL_EMERGENT_FILE,
            "4064f2d03d8d179b8a36fa13967bc82095c0bd8ced02b3f5040d2f918499f342",
            _RAW + ADDITIONAL_EMERGENT_FILE,
        ),
        PinnedFile(
            TEST_INDEX_FILE,
            "809e74b7bbe618e3c631723af5b362925606e8aa0763b8f54b080eea6c233d00",
            _RAW + TEST_INDEX_FILE,
        ),
        PinnedFile(
            CONCEPTNET_FILE,
            "49211173b55edc1353c1c9dace39fa5fbafb3f793816b878e90fdcfebdce043d",
            _RAW + "experiment/conceptnet/" + CONCEPTNET_FILE,
        ),
        PinnedFile(
            TP_TEST_FILE,
            "23fe3c7c6e518f3b3651fff2161bb32d661fd6f2671f9994b74dc78eae3a6919",
            source=TP_TEST_SOURCE,
            derive=derive_tp_test,
        ),
    ),
)


@dataclass(frozen=True)
class CcptItem:
    """One (noun phrase, head, modifier, property, type) item of CCPT."""

    item_id: str
    combination: str
    root: str
    modifier: str
    property: str
    label: str
    sentence: str = ""

    def as_doc(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_doc(cls, doc: dict[str, object], origin: str = "document") -> CcptItem:
        """Rebuild an item from a doc (ours, an lm-eval sample's, or a user's JSONL line)."""
        label = doc.get("label", doc.get("human_label_majority", ""))
        missing = [name for name in ("combination", "property") if not doc.get(name)]
        if missing:
            raise DataFormatError(f"{origin}: missing field(s) {', '.join(missing)}")
        return cls(
            item_id=str(doc.get("item_id", "")),
            combination=str(doc["combination"]),
            root=str(doc.get("root", "") or ""),
            modifier=str(doc.get("modifier", "") or ""),
            property=str(doc["property"]),
            label=str(label or ""),
            sentence=str(doc.get("sentence", "") or ""),
        )


def read_items(path: Path, columns: tuple[str, ...], id_prefix: str) -> list[CcptItem]:
    """Parse a CCPT csv; every required field must be non-empty."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            require_columns(path, reader.fieldnames, columns, HINT)
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as err:
        raise DataFormatError(f"{path}: not a readable CSV file ({err}).") from err
    items = []
    for position, row in enumerate(rows):
        for column in columns:
            if row.get(column) is None or not str(row[column]).strip():
                raise DataFormatError(
                    f"{path}: row {position + 2} has an empty '{column}' (column required)."
                )
        items.append(
            CcptItem(
                item_id=f"{id_prefix}:{position}",
                combination=row["combination"],
                root=row.get("root", ""),
                modifier=row.get("modifier", ""),
                property=row["property"],
                label=row["human_label_majority"].strip(),
                sentence=row.get("sentence", "") or "",
            )
        )
    return items


def read_test_index(path: Path) -> dict[str, list[int]]:
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: not valid JSON ({err}).") from err
    for key in (PI_EMERGENT, PI_CANCELED, NPC_EMERGENT):
        positions = index.get(key) if isinstance(index, dict) else None
        if not isinstance(positions, list) or not all(isinstance(p, int) for p in positions):
            raise DataFormatError(f"{path}: field '{key}' must be a list of row positions.")
    return index


def _subset(path: Path, items: list[CcptItem], positions: list[int], key: str) -> list[CcptItem]:
    out_of_range = [p for p in positions if not 0 <= p < len(items)]
    if out_of_range:
        raise DataFormatError(
            f"test_index.json field '{key}': positions {out_of_range[:5]} are outside "
            f"{path.name} ({len(items)} rows)."
        )
    # The authors select with df.index.isin(...): file order, whatever the index order.
    return [items[p] for p in sorted(set(positions))]


def load_items(
    spec: CcptTaskSpec, data_dir: str | os.PathLike[str] | None = None
) -> list[CcptItem]:
    """The items of one task: the paper's test subset, or every item of that type."""
    if spec.kind == TYPE_PREDICTION:
        return _load_type_prediction(spec, data_dir)
    source = CANCELED_FILE if spec.kind == PI_CANCELED else EMERGENT_FILE
    names = [source] + ([TEST_INDEX_FILE] if spec.subset == "test" else [])
    files = resolve_files(CCPT_DATASET, names, data_dir)
    items = read_items(files[source], TRIPLET_COLUMNS, Path(source).stem)
    if spec.subset == "full":
        return items
    index = read_test_index(files[TEST_INDEX_FILE])
    return _subset(files[source], items, index[spec.kind], spec.kind)


def _load_type_prediction(
    spec: CcptTaskSpec, data_dir: str | os.PathLike[str] | None
) -> list[CcptItem]:
    if spec.subset == "test":
        path = resolve_files(CCPT_DATASET, [TP_TEST_FILE], data_dir)[TP_TEST_FILE]
        items = read_items(path, TP_COLUMNS, "tp_test")
    else:
        names = [EMERGENT_FILE, CANCELED_FILE, COMPONENT_FILE]
        files = resolve_files(CCPT_DATASET, names, data_dir)
        items = [
            item
            for name in names
            for item in read_items(files[name], TRIPLET_COLUMNS, Path(name).stem)
        ]
    for item in items:
        if item.label not in PROPERTY_TYPES:
            raise DataFormatError(
                f"item {item.item_id}: human_label_majority={item.label!r} is not one of "
                f"{', '.join(PROPERTY_TYPES)}."
            )
    return items

"""AbsPyramid records: the hub files at the pinned revision, checked and parsed.

The files are JSON Lines (despite the ``.json`` name), one folder per relation:
``AbsPyramid_{Detection,Generation}/{noun,verb,event,merged}_dataset/{train,valid,test}.json``.
Detection records hold ``event`` (the instance in ``<...>``; for events the whole sentence),
``concept``, ``label`` (1 = valid abstraction) and ``type``; generation records hold the
same ``event`` and ``type`` with every gold concept in ``concept``, joined by ``[SEP]``.

Every item's id is ``<relation>:<split>:<n>``, n counting the file's non-blank records from
0: stable for the pinned files, and what seeds the draw of its in-context demonstrations.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conceptcomb.abspyramid.tasks import (
    DETECTION,
    FOLDERS,
    ICL_SHOTS,
    SPLITS,
    TYPES,
    AbsTaskSpec,
)
from conceptcomb.common.demonstrations import RANDOM, OrderedDemonstrations
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.common.hubfiles import HubPins, resolve_hub_files
from conceptcomb.common.jsonl import LINE, read_jsonl

# The pinned hub commit and files' sha256 (`scripts/pin_hub_dataset.py abspyramid` writes
# them). Written offline: the repository's one upload commit (2023-11-16) by its short hash,
# which the hub resolves, and no sha256 yet (see the README's Data section).
PINS = HubPins(Path(__file__).with_name("hub_pins.json"))
REFERENCE_SEPARATOR = "[SEP]"
_TOP = {"detection": "AbsPyramid_Detection", "generation": "AbsPyramid_Generation"}


def file_name(kind: str, relation: str, split: str) -> str:
    """Path of a file inside the hub repository (and inside a user's data folder)."""
    return f"{_TOP[kind]}/{FOLDERS[relation]}/{split}.json"


ABSPYRAMID_DATASET = PINS.dataset(
    "abspyramid",
    "AbsPyramid",
    tuple(
        file_name(kind, relation, split)
        for kind in _TOP
        for relation in FOLDERS
        for split in SPLITS
    ),
)
REPO_ID, REVISION = ABSPYRAMID_DATASET.repo_id, ABSPYRAMID_DATASET.revision


@dataclass(frozen=True)
class DetectionItem:
    """One (head event, instance, abstract concept, validity) tuple."""

    item_id: str
    event: str
    concept: str
    label: int
    type: str

    @property
    def instance(self) -> str:
        return instance_of(self.event)

    @property
    def premise(self) -> str:
        """The head event without the instance markers (the NLI premise)."""
        return self.event.replace("<", "").replace(">", "")

    @property
    def hypothesis(self) -> str:
        """The tail event: the instance replaced by the concept (an event becomes the concept)."""
        start, end = self.event.index("<"), self.event.index(">")
        return self.event[:start] + self.concept + self.event[end + 1 :]

    def as_doc(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenerationItem:
    """One (head event, instance) with every gold abstract concept (multi-reference)."""

    item_id: str
    event: str
    references: tuple[str, ...]
    type: str

    @property
    def instance(self) -> str:
        return instance_of(self.event)

    def as_doc(self) -> dict[str, Any]:
        return {**asdict(self), "references": list(self.references)}


def instance_of(event: str) -> str:
    """The marked span, as the authors cut it: first ``<`` to first ``>``."""
    return event[event.index("<") + 1 : event.index(">")]


def _check_event(event: object, where: str) -> str:
    if not isinstance(event, str) or not event.strip():
        raise DataFormatError(f"{where}: field 'event' must be a non-empty string.")
    start, end = event.find("<"), event.find(">")
    if start < 0 or end < start + 2:
        raise DataFormatError(
            f"{where}: field 'event' must mark the instance as <...> (got {event!r})."
        )
    return event


def _record_type(record: dict[str, Any], relation: str, where: str) -> str:
    value = record.get("type", relation if relation in TYPES else None)
    if value not in TYPES:
        raise DataFormatError(
            f"{where}: field 'type' must be one of {', '.join(TYPES)} (got {value!r}); "
            "the merged files need it on every record."
        )
    return str(value)


def _label(value: object, where: str) -> int:
    if isinstance(value, bool) or str(value).strip() not in {"0", "1"}:
        raise DataFormatError(f"{where}: field 'label' must be 0 or 1 (got {value!r}).")
    return int(str(value).strip())


def _concept(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataFormatError(f"{where}: field 'concept' must be a non-empty string.")
    return value


def read_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(location, record) for each non-blank line; the location names file and line."""
    return [
        (LINE.at(path, n), record) for n, record in read_jsonl(path, style=LINE, empty="records")
    ]


def read_detection(path: Path, relation: str, id_prefix: str) -> list[DetectionItem]:
    return [
        DetectionItem(
            item_id=f"{id_prefix}:{position}",
            event=_check_event(record.get("event"), where),
            concept=_concept(record.get("concept"), where),
            label=_label(record.get("label"), where),
            type=_record_type(record, relation, where),
        )
        for position, (where, record) in enumerate(read_records(path))
    ]


def split_references(concept: str, where: str) -> tuple[str, ...]:
    """The gold concepts of a generation record, stripped as the authors' scorer does."""
    references = tuple(part.strip() for part in concept.split(REFERENCE_SEPARATOR))
    if not all(references):
        raise DataFormatError(
            f"{where}: field 'concept' has an empty reference between {REFERENCE_SEPARATOR} "
            f"separators ({concept!r})."
        )
    return references


def read_generation(path: Path, relation: str, id_prefix: str) -> list[GenerationItem]:
    return [
        GenerationItem(
            item_id=f"{id_prefix}:{position}",
            event=_check_event(record.get("event"), where),
            references=split_references(_concept(record.get("concept"), where), where),
            type=_record_type(record, relation, where),
        )
        for position, (where, record) in enumerate(read_records(path))
    ]


def check_split(split: str) -> str:
    if split not in ("test", "valid"):
        raise ConfigError(f"split={split!r}: AbsPyramid tasks evaluate on 'test' or 'valid'.")
    return split


def load_items(
    spec: AbsTaskSpec, split: str = "test", data_dir: str | os.PathLike[str] | None = None
) -> list[DetectionItem] | list[GenerationItem]:
    """The evaluation items of a task (the test split by default)."""
    name = file_name(spec.kind, spec.relation, check_split(split))
    path = resolve_hub_files(ABSPYRAMID_DATASET, [name], data_dir)[name]
    prefix = f"{spec.relation}:{split}"
    if spec.kind == DETECTION:
        return read_detection(path, spec.relation, prefix)
    return read_generation(path, spec.relation, prefix)


def check_seed(seed: object) -> int:
    """The ``seed`` option (which demonstrations each item is shown): 0 when not given."""
    if seed is None or seed == "":
        return 0
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        return seed
    if isinstance(seed, str) and re.fullmatch(r"[0-9]+", seed.strip()):
        return int(seed)
    raise ConfigError(
        f"seed={seed!r}: the AbsPyramid option seed (the draw of the in-context "
        "demonstrations) must be a non-negative integer, e.g. seed=0."
    )


DemonstrationPools = dict[str, OrderedDemonstrations[DetectionItem]]


def load_demonstrations(
    relation: str, seed: object = 0, data_dir: str | os.PathLike[str] | None = None
) -> DemonstrationPools:
    """Per type, the train records of that type, ready to draw an item's 10 demonstrations.

    For ``all`` (the merged files), one pool per type of the merged train split, so that
    every item is shown demonstrations of its own relation and instruction. The draw is
    `conceptcomb.common.demonstrations`' (``order=random``, no difficulty): seeded by
    (seed, item id), never the item itself, in a shuffled order.
    """
    seed = check_seed(seed)
    name = file_name(DETECTION, relation, "train")
    path = resolve_hub_files(ABSPYRAMID_DATASET, [name], data_dir)[name]
    train = read_detection(path, relation, f"{relation}:train")
    wanted = TYPES if relation == "all" else (relation,)
    by_type = {kind: [item for item in train if item.type == kind] for kind in wanted}
    short = [kind for kind, items in by_type.items() if len(items) < ICL_SHOTS]
    if short:
        raise DataFormatError(
            f"{path}: the 10-shot tasks need {ICL_SHOTS} train records of type "
            f"{', '.join(short)}; the file has fewer."
        )
    return {
        kind: OrderedDemonstrations(
            items, k=ICL_SHOTS, order=RANDOM, difficulty=None, seed=seed, id_of=_item_id
        )
        for kind, items in by_type.items()
    }


def _item_id(item: DetectionItem) -> str:
    return item.item_id


def choose_demonstrations(pools: DemonstrationPools, item: DetectionItem) -> list[DetectionItem]:
    """The item's 10 demonstrations, in the order shown: train records of its own type."""
    chosen = pools[item.type].choose(item.item_id)
    assert chosen is not None  # only a custom Selection can decline a target
    return chosen

"""McRae et al. (2005) feature norms and the 44 ESSLLI 2008 nouns: pinned files, parsing.

Two published files are needed, each pinned to a commit and a sha256:

* the norms, ``CONCS_FEATS_concstats_brm.txt`` of the Psychonomic Society archive
  McRae-BRM-2005.zip, as vendored in github.com/danoneata/probing-norms;
* the 44 ESSLLI 2008 concrete nouns, ``esslli08_clustering_nouns.tab``, as shipped in
  github.com/rforge/wordspace.

Both live in a folder the user names (``data_dir`` / ``CONCEPTCOMB_DATA_DIR``, the folder
itself or a parent holding ``mcrae/``) or are downloaded into the cache. The norms are not
ours to redistribute: see `TERMS_OF_USE`.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.common.datafiles import PinnedDataset, PinnedFile, require_columns, resolve_files
from conceptcomb.common.errors import DataFormatError
from conceptcomb.common.evalcard import load_card

NORMS_REVISION = "fd30c589ce14ae43ed844d8611c4bbc6468daccb"
NOUNS_REVISION = "4be9ddc1da693bbe945d588524a0b03ac2f522fb"
_NORMS_RAW = (
    f"https://raw.githubusercontent.com/danoneata/probing-norms/{NORMS_REVISION}/data/norms/mcrae/"
)
_NOUNS_RAW = (
    f"https://raw.githubusercontent.com/rforge/wordspace/{NOUNS_REVISION}/pkg/wordspace/data/"
)

NORMS_FILE = "CONCS_FEATS_concstats_brm.txt"
TERMS_FILE = "ReadMe_Terms_of_Use.txt"
NOUNS_FILE = "esslli08_clustering_nouns.tab"
NORMS_COLUMNS = ("Concept", "Feature", "Prod_Freq")
NOUNS_COLUMNS = ("noun", "class1")

# Both datasets use the folder name "mcrae", so one data folder holds all three files.
MCRAE_DATASET = PinnedDataset(
    key="mcrae",
    title="McRae et al. (2005) feature norms (Psychonomic Society archive McRae-BRM-2005)",
    repository="github.com/danoneata/probing-norms",
    revision=NORMS_REVISION,
    files=(
        PinnedFile(
            NORMS_FILE,
            "fe796831232b164635c258095749320665c18c40186778e8d8baf4b0c4cdba23",
            _NORMS_RAW + NORMS_FILE,
        ),
        PinnedFile(
            TERMS_FILE,
            "2f52993903af2ba93ecb2729fcc09d9b7f3b02534a7ef18142ad61917ba660b0",
            _NORMS_RAW + TERMS_FILE,
        ),
    ),
)
ESSLLI_NOUNS_DATASET = PinnedDataset(
    key="mcrae",
    title="ESSLLI 2008 concrete nouns",
    repository="github.com/rforge/wordspace",
    revision=NOUNS_REVISION,
    files=(
        PinnedFile(
            NOUNS_FILE,
            "249192c604072bb0a3c05f167032c4b3bba1d0653e4ab7803efea26b9c316d03",
            _NOUNS_RAW + NOUNS_FILE,
        ),
    ),
)

# The one ESSLLI noun whose McRae concept has another name.
ESSLLI_TO_MCRAE = {"onion": "onions"}

# What users of the norms must do: the card's (eval.yaml), printed with every run.
TERMS_OF_USE = load_card("conceptcomb.mcrae").data_terms
CITATION = (
    "McRae, K., Cree, G. S., Seidenberg, M. S., & McNorgan, C. (2005). Semantic feature "
    "production norms for a large set of living and nonliving things. Behavior Research "
    "Methods, 37(4), 547-559. Norms: McRae-BRM-2005.zip, Psychonomic Society Web Archive. "
    "Task: Baroni, Evert & Lenci (eds.), ESSLLI 2008 Workshop on Distributional Lexical "
    "Semantics, task 3 (property generation)."
)


@dataclass(frozen=True)
class NormFeature:
    """One row of the norms: a feature some subjects listed for a concept."""

    concept: str
    feature: str
    prod_freq: int
    position: int  # row order within the concept in the norms file (the tie-breaker)


def read_norms(path: Path) -> dict[str, list[NormFeature]]:
    """Concept -> its features in the order of the norms file."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            require_columns(path, reader.fieldnames, NORMS_COLUMNS)
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as err:
        raise DataFormatError(f"{path}: not a readable tab-separated file ({err}).") from err
    norms: dict[str, list[NormFeature]] = {}
    for line, row in enumerate(rows, start=2):
        concept, feature = (row["Concept"] or "").strip(), (row["Feature"] or "").strip()
        if not concept or not feature:
            raise DataFormatError(f"{path}: line {line} has an empty Concept or Feature.")
        try:
            freq = int(row["Prod_Freq"])
        except (TypeError, ValueError) as err:
            raise DataFormatError(
                f"{path}: line {line}: Prod_Freq={row['Prod_Freq']!r} is not a whole number."
            ) from err
        features = norms.setdefault(concept, [])
        features.append(NormFeature(concept, feature, freq, len(features)))
    return norms


def read_esslli_nouns(path: Path) -> list[str]:
    """The ESSLLI 2008 nouns, in file order."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            require_columns(path, reader.fieldnames, NOUNS_COLUMNS)
            nouns = [(row["noun"] or "").strip() for row in reader]
    except (UnicodeDecodeError, csv.Error) as err:
        raise DataFormatError(f"{path}: not a readable tab-separated file ({err}).") from err
    if not nouns or not all(nouns):
        raise DataFormatError(f"{path}: column 'noun' is empty or has empty cells.")
    return nouns


def load_norms(data_dir: str | os.PathLike[str] | None = None) -> dict[str, list[NormFeature]]:
    path = resolve_files(MCRAE_DATASET, [NORMS_FILE], data_dir)[NORMS_FILE]
    return read_norms(path)


def load_esslli_nouns(data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    path = resolve_files(ESSLLI_NOUNS_DATASET, [NOUNS_FILE], data_dir)[NOUNS_FILE]
    return read_esslli_nouns(path)


def mcrae_name(noun: str) -> str:
    return ESSLLI_TO_MCRAE.get(noun, noun)

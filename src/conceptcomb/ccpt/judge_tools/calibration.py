"""How well does a judge agree with humans? The paper's section 6.1 check, on any judge.

CCPT's emergent and canceled files carry, for every item, three annotators' 1-5 ratings
of how much the noun phrase, the head and the modifier have the property. We sample items
(half emergent, half canceled, as the paper's 50 + 50), take their three (concept,
property) pairs, let the judge rate them with the paper's prompt, and correlate with the
annotators' mean. The same pairs' GPT-4o ratings recorded in the files give a reference
row, so a cheap judge can be compared with the paper's on identical pairs.

The paper reports Pearson 0.85 / Spearman 0.83 for GPT-4o against separately recruited
raters on its own 300 pairs; ours are the dataset's annotators, so expect lower values
for every judge, GPT-4o included.
"""

from __future__ import annotations

import csv
import math
import os
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from conceptcomb.ccpt.data import CANCELED_FILE, CCPT_DATASET, EMERGENT_FILE, HINT
from conceptcomb.common.datafiles import require_columns, resolve_files
from conceptcomb.common.errors import ConfigError, DataFormatError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.rating import JudgeUsage, preflight_judge, rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt

# Pairs rated by default: as many as the paper's own check of its judge (section 6.1).
DEFAULT_PAIRS = 300

# concept kind -> (concept column, human ratings column, recorded GPT-4o relevance column)
KINDS = {
    "noun_phrase": (
        "combination",
        "meta.combination_human_relevance",
        "meta.combination_gpt-4o_relevance",
    ),
    "head": ("root", "meta.root_human_relevance", "meta.root_gpt-4o_relevance"),
    "modifier": ("modifier", "meta.modifier_human_relevance", "meta.modifier_gpt-4o_relevance"),
}


@dataclass(frozen=True)
class CalibrationPair:
    item_id: str
    kind: str  # noun_phrase | head | modifier
    property_type: str  # emergent | canceled
    concept: str
    prop: str
    human: float  # mean of the annotators' 1-5 ratings
    recorded_gpt4o: float  # 1-10, from the files

    @property
    def prompt(self) -> str:
        return relevance_prompt(self.concept, self.prop)


def parse_ratings(text: str, where: str) -> list[int]:
    """``"(5, 4, 3)"`` -> [5, 4, 3]."""
    try:
        values = [int(part) for part in text.strip("() ").split(",") if part.strip()]
    except ValueError as err:
        raise DataFormatError(f"{where}: {text!r} is not a tuple of 1-5 ratings.") from err
    if not values or not all(1 <= value <= 5 for value in values):
        raise DataFormatError(f"{where}: {text!r} is not a tuple of 1-5 ratings.")
    return values


COLUMNS = ("property", *(column for columns in KINDS.values() for column in columns))


def _pairs_of_row(
    row: dict[str, str | None], item_id: str, property_type: str, where: str
) -> list[CalibrationPair]:
    """The row's three pairs; ``where`` (file:line) names the row in errors."""
    empty = [column for column in COLUMNS if not (row.get(column) or "").strip()]
    if empty:
        raise DataFormatError(
            f"{where}: empty {', '.join(empty)} (a row cut short? the file may be truncated)."
        )
    pairs = []
    for kind, (concept_column, human_column, gpt_column) in KINDS.items():
        human = parse_ratings(str(row[human_column]), f"{where}: column {human_column}")
        try:
            recorded = float(str(row[gpt_column]))
        except ValueError:
            recorded = math.nan
        if not 0.0 <= recorded <= 1.0:
            raise DataFormatError(
                f"{where}: column {gpt_column}={row[gpt_column]!r} is not a relevance in [0, 1]."
            )
        pairs.append(
            CalibrationPair(
                item_id=item_id,
                kind=kind,
                property_type=property_type,
                concept=str(row[concept_column]),
                prop=str(row["property"]),
                human=sum(human) / len(human),
                recorded_gpt4o=1 + 9 * recorded,
            )
        )
    return pairs


def read_rated_items(path: Path, property_type: str) -> list[list[CalibrationPair]]:
    """Every row's three pairs, each row checked as `conceptcomb.ccpt.data.read_items` does:
    a one-line error names the file and line of the first bad row."""
    stem = path.name.removesuffix(".csv")
    items = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        try:
            require_columns(path, reader.fieldnames, COLUMNS, HINT)
            for position, row in enumerate(reader):
                where = f"{path}:{reader.line_num}"
                items.append(_pairs_of_row(row, f"{stem}:{position}", property_type, where))
        except (UnicodeDecodeError, csv.Error) as err:
            raise DataFormatError(
                f"{path}:{reader.line_num}: not a readable CSV row ({err})."
            ) from err
    return items


def sample_pairs(
    n_pairs: int, seed: int, data_dir: str | os.PathLike[str] | None = None
) -> list[CalibrationPair]:
    """``n_pairs // 3`` items, split between emergent and canceled, three pairs each."""
    if n_pairs < 6:
        raise ConfigError("--n must be at least 6 (one emergent and one canceled item).")
    files = resolve_files(CCPT_DATASET, [EMERGENT_FILE, CANCELED_FILE], data_dir)
    rng = random.Random(seed)
    n_items = n_pairs // 3
    pairs: list[CalibrationPair] = []
    for name, property_type, count in (
        (EMERGENT_FILE, "emergent", n_items - n_items // 2),
        (CANCELED_FILE, "canceled", n_items // 2),
    ):
        items = read_rated_items(files[name], property_type)
        if count > len(items):
            raise ConfigError(f"--n {n_pairs} asks for more items than {files[name]} holds.")
        for position in sorted(rng.sample(range(len(items)), count)):
            pairs += items[position]
    return pairs


@dataclass(frozen=True)
class Correlation:
    group: str
    n: int
    pearson: float
    spearman: float
    reference_pearson: float
    reference_spearman: float


def _correlate(xs: list[float], ys: list[float]) -> tuple[float, float]:
    from scipy.stats import pearsonr, spearmanr

    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return math.nan, math.nan
    return float(pearsonr(xs, ys)[0]), float(spearmanr(xs, ys)[0])


def correlations(
    pairs: list[CalibrationPair], ratings: dict[str, float | None]
) -> list[Correlation]:
    """Judge vs human (and recorded GPT-4o vs human) overall, per kind, per property type."""
    groups: list[tuple[str, Iterable[CalibrationPair]]] = [("all", pairs)]
    groups += [(kind, [p for p in pairs if p.kind == kind]) for kind in KINDS]
    groups += [
        (f"{kind} items", [p for p in pairs if p.property_type == kind])
        for kind in ("emergent", "canceled")
    ]
    rows = []
    for name, members in groups:
        rated = [p for p in members if ratings.get(p.prompt) is not None]
        human = [p.human for p in rated]
        judge = _correlate([ratings[p.prompt] for p in rated], human)  # type: ignore[misc]
        reference = _correlate([p.recorded_gpt4o for p in rated], human)
        rows.append(Correlation(name, len(rated), *judge, *reference))
    return rows


@dataclass
class CalibrationReport:
    judge: str
    seed: int
    pairs: int
    rows: list[Correlation]
    usage: JudgeUsage

    def table(self) -> str:
        lines = [
            f"Judge calibration against CCPT's human relevance ratings ({self.pairs} pairs, "
            f"seed {self.seed})",
            f"judge: {self.judge}",
            "",
            "| pairs | n | Pearson | Spearman | recorded GPT-4o: Pearson | Spearman |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in self.rows:
            values = (row.pearson, row.spearman, row.reference_pearson, row.reference_spearman)
            cells = " | ".join("n/a" if math.isnan(v) else f"{v:.3f}" for v in values)
            lines.append(f"| {row.group} | {row.n} | {cells} |")
        failed = self.usage.failures
        if failed:
            lines.append(f"\n{failed} pairs could not be rated and are left out.")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "judge": self.judge,
            "seed": self.seed,
            "pairs": self.pairs,
            "correlations": [row.__dict__ for row in self.rows],
            "judge_usage": self.usage.as_dict(),
        }


def calibrate(
    settings: JudgeSettings,
    n_pairs: int = DEFAULT_PAIRS,
    seed: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
) -> CalibrationReport:
    settings.check_credentials()
    pairs = sample_pairs(n_pairs, seed, data_dir)
    preflight_judge(settings)
    replies, usage, identity = rate_prompts(
        settings, [p.prompt for p in pairs], description="calibrating judge"
    )
    ratings = {prompt: reply.rating for prompt, reply in replies.items()}
    return CalibrationReport(identity, seed, len(pairs), correlations(pairs, ratings), usage)

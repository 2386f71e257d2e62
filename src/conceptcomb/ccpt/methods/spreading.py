"""Spreading activation (paper section 4.1, Algorithm 1), framework-agnostic.

Starting from the seed concepts C_0 ({head, modifier} for property induction, {property,
head} for noun phrase completion), each iteration

1. activates every concept of C_t ∪ C_0: its ConceptNet neighbours, the concepts the model
   lists for it (the activation prompt), or both;
2. samples at most 10 concepts of C_t ∪ activations (the authors' script), and
3. lets the model keep those related to both seed concepts (the filter prompt, shown at
   most 5 of them, as the script does), minus C_0; the no-filter ablation (Table 7) keeps
   the sample;

and stops after T iterations or when the Jaccard distance between C_t and C_t+1, on
lemmas, is below epsilon (T = 5, epsilon = 0.1 in the paper). The answer prompt then
shows C_T without C_0 (`conceptcomb.ccpt.methods.spreading_prompts`).

Model calls are passed in as coroutines, so the same loop runs inside Inspect (the
evaluated model) and, graph-only without filter, when lm-eval builds its dataset.
Sampling uses a `random.Random` seeded by (seed, item id): a run is reproducible, and
items do not depend on each other or on their order.
"""

from __future__ import annotations

import ast
import json
import os
import random
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.ccpt.data import CCPT_DATASET, CONCEPTNET_FILE, CcptItem
from conceptcomb.ccpt.tasks import NPC_EMERGENT, SA_BOTH, SA_LLM, CcptTaskSpec
from conceptcomb.common.collector import collector_paused
from conceptcomb.common.conceptnet import CN100K_FILES, pinned_cn100k_dir, read_edges
from conceptcomb.common.datafiles import resolve_files
from conceptcomb.common.errors import ConfigError, DataFormatError, one_of

GRAPHS = ("ccpt", "cn100k", "ccpt+cn100k")
MAX_SAMPLED = 10  # the script samples at most 10 concepts of C_t+1 ...
MAX_FILTER_NODES = 5  # ... and shows the filter at most 5 of them
FILTER_ATTEMPTS = 3  # the script's @retry(3) around the filter
MIN_NEIGHBOUR_LENGTH = 3  # the script drops ConceptNet neighbours of 1-2 characters

# (concept) -> the model's reply to the activation prompt
ActivateFn = Callable[[str], Awaitable[list[str]]]
# (node set, objective) -> the filter's kept nodes, None when no list could be read
FilterFn = Callable[[list[str], str], Awaitable[list[str] | None]]


@dataclass(frozen=True)
class SaSettings:
    """How one spreading-activation variant runs (Algorithm 1's parameters)."""

    use_llm: bool
    use_graph: bool
    use_filter: bool
    iterations: int = 5  # T
    epsilon: float = 0.1
    seed: int = 0
    graph: str = "ccpt"

    @classmethod
    def for_spec(cls, spec: CcptTaskSpec, options: Mapping[str, Any] | None = None) -> SaSettings:
        """Settings of a task variant; options ``sa_iterations``, ``sa_epsilon``,
        ``sa_seed``, ``sa_graph`` (lm-eval --metadata, Inspect -T) override the paper's."""
        if not spec.spreading:
            raise ConfigError(f"{spec.name} does not use spreading activation.")
        options = {k: v for k, v in (options or {}).items() if v is not None and v != ""}
        settings = cls(
            use_llm=spec.method in (SA_LLM, SA_BOTH),
            use_graph=spec.method != SA_LLM,
            use_filter=spec.method != "sa_conceptnet_nofilter",
            iterations=_number(options, "sa_iterations", int, 5),
            epsilon=_number(options, "sa_epsilon", float, 0.1),
            seed=_number(options, "sa_seed", int, 0),
            graph=str(options.get("sa_graph", "ccpt")).lower(),
        )
        settings.check()
        return settings

    def check(self) -> None:
        if self.iterations < 1:
            raise ConfigError("sa_iterations must be at least 1 (the paper's T is 5).")
        if not 0 <= self.epsilon <= 1:
            raise ConfigError("sa_epsilon is a Jaccard distance: between 0 and 1 (paper: 0.1).")
        one_of("sa_graph", self.graph, GRAPHS)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _number(options: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    if name not in options:
        return default
    try:
        return kind(options[name])
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{name}={options[name]!r} is not a number.") from err


def initial_concepts(spec: CcptTaskSpec, item: CcptItem) -> list[str]:
    """C_0: {head, modifier} (property induction) or {property, head} (NPC), as the script."""
    if spec.kind == NPC_EMERGENT:
        return unique([item.property, item.root])
    return unique([item.root, item.modifier])


def objective(spec: CcptTaskSpec, item: CcptItem) -> str:
    """The filter's "Concepts:" line, quoted as the script quotes it."""
    if spec.kind == NPC_EMERGENT:
        return f'"{item.property}", "{item.root}"'
    return f"'{item.root}', '{item.modifier}'"


# --- concepts -----------------------------------------------------------------------------
def normalize(concept: object) -> str:
    """Lower case, single spaces: one spelling per concept (graph keys are lower case)."""
    return " ".join(str(concept).split()).lower()


def unique(concepts: Iterable[object]) -> list[str]:
    """Normalized, without empties or repeats, first occurrence first."""
    return list(dict.fromkeys(c for c in map(normalize, concepts) if c))


_LIST = re.compile(r"\[[^\]]*\]")


def parse_concept_list(reply: str) -> list[str] | None:
    """The first ``[...]`` list in a reply, as the script reads it; None when there is none.

    Raises ValueError when a list is there but cannot be read (the script then asks again).
    """
    match = _LIST.search(reply)
    if match is None:
        return None
    try:
        value = ast.literal_eval(match.group(0))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as err:
        raise ValueError(f"unreadable list {match.group(0)[:80]!r}") from err
    if not isinstance(value, list | tuple):
        raise ValueError(f"not a list: {match.group(0)[:80]!r}")
    return unique(v for v in value if isinstance(v, str | int | float))


@lru_cache(maxsize=65536)
def lemma_key(concept: str) -> str:
    """A concept's lemmas (WordNet's morphy, noun then verb then adjective), for Jaccard."""
    from conceptcomb.common.wordnet import wordnet

    reader = wordnet()
    words = []
    for word in concept.split():
        base = next((b for pos in ("n", "v", "a") if (b := reader.morphy(word, pos))), None)
        words.append(base or word)
    return " ".join(words)


def jaccard_distance(before: Iterable[str], after: Iterable[str]) -> float:
    """Delta = 1 - |C_t ∩ C_t+1| / |C_t ∪ C_t+1| on lemmas; 0 for two empty sets."""
    a, b = {lemma_key(c) for c in before}, {lemma_key(c) for c in after}
    union = a | b
    return 1.0 - len(a & b) / len(union) if union else 0.0


# --- graphs -------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConceptGraph:
    """Neighbours of a concept in a ConceptNet graph (both directions, file order)."""

    name: str
    adjacency: Mapping[str, tuple[str, ...]]

    def neighbours(self, concept: str) -> list[str]:
        return list(self.adjacency.get(normalize(concept), ()))


def _adjacency(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    found: dict[str, dict[str, None]] = {}
    for a, b in pairs:
        a, b = normalize(a), normalize(b)
        if a and b and a != b and len(b) >= MIN_NEIGHBOUR_LENGTH:
            found.setdefault(a, {})[b] = None
    return {key: tuple(values) for key, values in found.items()}


def read_ccpt_graph(path: Path) -> ConceptGraph:
    """``conceptnet_adjacent.json``: concept -> neighbours the authors fetched from ConceptNet."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataFormatError(f"{path}: not valid JSON ({err}).") from err
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(n, str) for n in v) for v in data.values()
    ):
        raise DataFormatError(f"{path}: expected an object mapping concepts to lists of names.")
    return ConceptGraph("ccpt", _adjacency((k, n) for k, v in data.items() for n in v))


def read_cn100k_graph(folder: Path) -> ConceptGraph:
    """CN-100K, every relation, both directions: a wider graph than the authors' file."""
    pairs = []
    for name in CN100K_FILES:
        for head, _, tail in read_edges(folder / name):
            pairs += [(head, tail), (tail, head)]
    return ConceptGraph("cn100k", _adjacency(pairs))


def _merge(graphs: list[ConceptGraph]) -> ConceptGraph:
    adjacency: dict[str, dict[str, None]] = {}
    for graph in graphs:
        for key, values in graph.adjacency.items():
            adjacency.setdefault(key, {}).update(dict.fromkeys(values))
    merged = {key: tuple(values) for key, values in adjacency.items()}
    return ConceptGraph("+".join(g.name for g in graphs), merged)


def load_graph(name: str, data_dir: str | os.PathLike[str] | None = None) -> ConceptGraph:
    """``ccpt`` (the authors' file, pinned with CCPT), ``cn100k`` (pinned in
    `conceptcomb.common.conceptnet`) or both."""
    one_of("sa_graph", name, GRAPHS)
    parts = []
    if "ccpt" in name.split("+"):
        path = resolve_files(CCPT_DATASET, [CONCEPTNET_FILE], data_dir)[CONCEPTNET_FILE]
        parts.append(_cached_ccpt(str(path)))
    if "cn100k" in name.split("+"):
        parts.append(_cached_cn100k(str(pinned_cn100k_dir(data_dir))))
    return parts[0] if len(parts) == 1 else _merge(parts)


@lru_cache(maxsize=4)
@collector_paused()  # a large build (common.collector)
def _cached_ccpt(path: str) -> ConceptGraph:
    return read_ccpt_graph(Path(path))


@lru_cache(maxsize=2)
def _cached_cn100k(folder: str) -> ConceptGraph:
    return read_cn100k_graph(Path(folder))


# --- the loop -----------------------------------------------------------------------------
@dataclass
class SaStep:
    """One iteration: what was activated, sampled, filtered, and the new concept set."""

    t: int
    activated: dict[str, int]  # concept -> number of concepts it activated
    candidates: int  # |C_t ∪ activations|
    sampled: list[str]
    filter_input: list[str] | None
    filter_parsed: bool | None
    concepts: list[str]  # C_t+1 (without C_0)
    delta: float


@dataclass
class SaTrace:
    """Everything one item's spreading activation did, for logs."""

    seed_concepts: list[str]
    objective: str
    settings: dict[str, Any]
    steps: list[SaStep] = field(default_factory=list)
    stopped: str = ""  # "converged" or "max_iterations"

    @property
    def final(self) -> list[str]:
        """C_T without C_0."""
        return self.steps[-1].concepts if self.steps else []

    @property
    def relevant(self) -> list[str]:
        """The concepts the answer prompt shows: C_T, or, when the filter emptied it, the
        last non-empty C_t (the script's ``get_previous_concepts``)."""
        for step in reversed(self.steps):
            if step.concepts:
                return step.concepts
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            "C_0": self.seed_concepts,
            "objective": self.objective,
            "settings": self.settings,
            "iterations": [asdict(step) for step in self.steps],
            "stopped": self.stopped,
            "C_T": self.final,
            "relevant_concepts": self.relevant,
        }


def item_rng(settings: SaSettings, item_id: str) -> random.Random:
    # A str seed is hashed with SHA-512 by `random`: the same in every process.
    return random.Random(f"ccpt-sa|{settings.seed}|{item_id}")


async def spread(
    seed_concepts: list[str],
    goal: str,
    settings: SaSettings,
    rng: random.Random,
    graph: ConceptGraph | None = None,
    activate: ActivateFn | None = None,
    keep: FilterFn | None = None,
) -> SaTrace:
    """Algorithm 1 for one item; ``activate`` / ``keep`` call the model when used."""
    if settings.use_graph and graph is None:
        raise ConfigError("spreading activation with ConceptNet needs a graph.")
    if (settings.use_llm and activate is None) or (settings.use_filter and keep is None):
        raise ConfigError("this spreading-activation variant needs the model (Inspect only).")
    c0 = unique(seed_concepts)
    trace = SaTrace(c0, goal, settings.as_dict(), stopped="max_iterations")
    current = list(c0)
    for t in range(settings.iterations):
        activated: dict[str, list[str]] = {}
        for concept in unique([*current, *c0]):
            found = graph.neighbours(concept) if settings.use_graph and graph else []
            if settings.use_llm and activate is not None:
                found = [*found, *await activate(concept)]
            activated[concept] = unique(found)
        candidates = unique([*current, *(c for found in activated.values() for c in found)])
        sampled = rng.sample(candidates, min(len(candidates), MAX_SAMPLED))
        shown, parsed = None, None
        if settings.use_filter and keep is not None:
            shown = sampled[:MAX_FILTER_NODES]
            kept = await keep(shown, goal)
            parsed = kept is not None
            chosen = unique(kept or [])
        else:
            chosen = sampled
        after = [c for c in chosen if c not in c0]
        delta = jaccard_distance(current, after)
        trace.steps.append(
            SaStep(
                t=t + 1,
                activated={c: len(found) for c, found in activated.items()},
                candidates=len(candidates),
                sampled=sampled,
                filter_input=shown,
                filter_parsed=parsed,
                concepts=after,
                delta=round(delta, 6),
            )
        )
        current = after
        if delta < settings.epsilon:
            trace.stopped = "converged"
            break
    return trace


def offline_trace(
    spec: CcptTaskSpec, item: CcptItem, settings: SaSettings, graph: ConceptGraph
) -> SaTrace:
    """Graph-only spreading activation without filter: no model call, computed up front."""
    from conceptcomb.scorers.rating import run_coroutine

    if settings.use_llm or settings.use_filter:
        raise ConfigError(f"{spec.name} calls the model during spreading activation.")
    rng = item_rng(settings, item.item_id)
    return run_coroutine(
        spread(initial_concepts(spec, item), objective(spec, item), settings, rng, graph)
    )

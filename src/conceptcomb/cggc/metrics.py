"""CommonGen's metrics (paper section 5.3, Table 4), computed as CommonGen computes them.

CommonGen's ``evaluation/Traditional/eval_metrics/eval.py`` tokenizes every sentence with
spaCy (tokens joined by spaces, case kept) and runs the coco-caption scorers, which we
call from the ``pycocoevalcap`` package: BLEU-3/4 (corpus level, "closest" reference
length), METEOR 1.5 (the jar, needs Java), CIDEr (coco-caption's CIDEr-D) and SPICE (needs
the Stanford CoreNLP 3.6.0 jars, which pycocoevalcap cannot download offline: reported as
unavailable until the user supplies them). ROUGE-2/L: ``rouge-score`` F-measure with
stemming, averaged over items (CommonGen ran Perl ROUGE-1.5.5; values differ by ~0.005).
Coverage (CommonGen's ``PivotScore/evaluate.py``): the share of the item's concepts among
the spaCy lemmas of the output, averaged over items.

Scale as CommonGen and the paper report them: x100, CIDEr x10. Each item is scored against
its own reference: a CGGC item's graph was built from that one sentence (the paper does
not say; CommonGen pools all references of a concept set).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import math
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from conceptcomb.cggc import meteor_server
from conceptcomb.common.contract import PERCENT, MetricInfo
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.optional_imports import NLTK_SPARES, without
from conceptcomb.common.spacy_english import SPACY_MODELS, english_pipeline

log = logging.getLogger("conceptcomb")
NAN = float("nan")
SPICE_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
SPICE_ENV = "CONCEPTCOMB_SPICE_JARS"
INSTALL_HINT = "pip install 'conceptcomb[cggc]'"


# All x100 (CIDEr-D, at most 10, x10): 0 to 100.
METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("rouge2", True, "mean", "ROUGE-2", PERCENT),
    MetricInfo("rougeL", True, "mean", "ROUGE-L", PERCENT),
    MetricInfo("bleu3", True, "corpus", "BLEU-3", PERCENT),
    MetricInfo("bleu4", True, "corpus", "BLEU-4", PERCENT),
    MetricInfo("meteor", True, "corpus", "METEOR", PERCENT),
    MetricInfo("cider", True, "corpus", "CIDEr", PERCENT),
    MetricInfo("spice", True, "corpus", "SPICE", PERCENT),
    MetricInfo("coverage", True, "mean", "Coverage", PERCENT),
)
METRIC_NAMES = tuple(info.name for info in METRICS)


@dataclass(frozen=True)
class Scored:
    """What the corpus metrics need of one item."""

    item_id: str
    prediction: str
    references: tuple[str, ...]
    concepts: tuple[str, ...]

    def as_record(self) -> list[Any]:
        return [self.item_id, self.prediction, list(self.references), list(self.concepts)]

    @classmethod
    def from_record(cls, record: Sequence[Any]) -> Scored:
        item_id, prediction, references, concepts = record
        return cls(str(item_id), str(prediction), tuple(references), tuple(concepts))


def check_libraries() -> None:
    """Before a CGGC task generates anything: the `cggc` extra's libraries that scoring
    cannot do without (spaCy, pycocoevalcap) are installed, else one line saying how to
    install them (without this, the error came after the model had generated every reply).
    Found without importing them; a missing spaCy model or Java only makes a warning later.
    """
    missing = [name for name in ("spacy", "pycocoevalcap") if not _installed(name)]
    if missing:
        raise ConfigError(
            f"CGGC scores replies as CommonGen does, with {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}."
        )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules as None: refused on purpose
        return False


# --- spaCy: tokenization and lemmas ---------------------------------------------------------
@lru_cache(maxsize=1)
def _spacy() -> tuple[Any, bool]:
    """(pipeline, has a lemmatizer). A blank English pipeline tokenizes identically."""
    try:
        return english_pipeline(), True
    except ImportError as err:
        raise ConfigError(
            f"CGGC metrics tokenize with spaCy as CommonGen does: {INSTALL_HINT}."
        ) from err
    except OSError:
        log.warning(
            "CGGC Coverage: no spaCy English model (%s); lemmas fall back to NLTK WordNet, "
            "which is not CommonGen's lemmatizer. Install it with %s.",
            " / ".join(SPACY_MODELS),
            INSTALL_HINT,
        )
    import spacy  # installed: english_pipeline got as far as looking for a model

    return spacy.blank("en"), False


@lru_cache(maxsize=65536)
def tokenize(text: str) -> str:
    """CommonGen eval.py: spaCy tokens joined by single spaces."""
    nlp, _ = _spacy()
    return " ".join(token.text for token in nlp.tokenizer(text)).strip()


# Lemmas computed in batches by `prime_lemmas` (nlp.pipe: ~3x faster than one nlp() per
# text on a CPU, and the same lemmas: the pipeline is the same, checked on CGGC's references).
_PRIMED: dict[str, frozenset[str]] = {}
_PRIMED_MOST = 262_144


def prime_lemmas(texts: Sequence[str]) -> None:
    """Lemmatize many texts at once, for `lemmas` to find (validating a full bundle)."""
    nlp, has_lemmatizer = _spacy()
    if not has_lemmatizer:
        return
    todo = [text for text in dict.fromkeys(texts) if text not in _PRIMED]
    if len(_PRIMED) + len(todo) > _PRIMED_MOST:
        _PRIMED.clear()
    for text, doc in zip(todo, nlp.pipe(todo, batch_size=256), strict=True):
        _PRIMED[text] = frozenset(token.lemma_.lower() for token in doc)


@lru_cache(maxsize=65536)
def lemmas(text: str) -> frozenset[str]:
    nlp, has_lemmatizer = _spacy()
    if has_lemmatizer:
        primed = _PRIMED.get(text)
        if primed is not None:
            return primed
        return frozenset(token.lemma_.lower() for token in nlp(text))
    from conceptcomb.common.wordnet import wordnet

    reader = wordnet()
    found: set[str] = set()
    for token in nlp.tokenizer(text.lower()):
        word = token.text
        found.add(word)
        for pos in ("n", "v", "a"):
            base = reader.morphy(word, pos)
            if base:
                found.add(base)
    return frozenset(found)


def coverage(prediction: str, concepts: Sequence[str]) -> float:
    """Share of the concepts among the prediction's lemmas (x100)."""
    wanted = set(concepts)
    return 100.0 * len(lemmas(prediction) & wanted) / len(wanted) if wanted else NAN


# --- ROUGE ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _rouge() -> Any:
    try:
        with without(*NLTK_SPARES):  # NLTK would import scikit-learn and SciPy: ~1 s of CPU
            from rouge_score import rouge_scorer
    except ImportError as err:
        raise ConfigError(f"CGGC ROUGE needs rouge-score: {INSTALL_HINT}.") from err
    return rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=True)


def rouge(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """ROUGE-2 / ROUGE-L F-measure x100, best over the references."""
    scores = _rouge().score_multi(list(references), prediction)
    return {name: 100.0 * scores[name].fmeasure for name in ("rouge2", "rougeL")}


def item_metrics(scored: Scored) -> dict[str, float]:
    return {
        **rouge(scored.prediction, scored.references),
        "coverage": coverage(scored.prediction, scored.concepts),
    }


# --- coco-caption scorers -----------------------------------------------------------------
def _coco_inputs(records: Sequence[Scored]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    gts = {str(i): [tokenize(ref) for ref in r.references] for i, r in enumerate(records)}
    res = {str(i): [tokenize(r.prediction)] for i, r in enumerate(records)}
    return gts, res


def _pycocoevalcap(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"pycocoevalcap.{module}")
    except ImportError as err:
        raise ConfigError(f"CGGC metrics use pycocoevalcap: {INSTALL_HINT}.") from err


def bleu(records: Sequence[Scored]) -> dict[str, float]:
    gts, res = _coco_inputs(records)
    scores, _ = _pycocoevalcap("bleu.bleu").Bleu(4).compute_score(gts, res, verbose=0)
    return {"bleu3": 100.0 * scores[2], "bleu4": 100.0 * scores[3]}


def meteor(records: Sequence[Scored]) -> float:
    server = _meteor_server()
    if server is None and shutil.which("java") is None:
        log.warning("CGGC METEOR needs Java (METEOR 1.5 is a jar): no 'java' on PATH.")
        return NAN
    gts, res = _coco_inputs(records)
    score, _ = (server or _meteor_scorer()).compute_score(gts, res)
    return 100.0 * score


def _meteor_server() -> meteor_server.RemoteMeteor | None:
    """The METEOR server that ``CONCEPTCOMB_METEOR_SERVER`` names (`conceptcomb.cggc.
    meteor_server`: one JVM for many runs), unless this process runs it itself; None: this
    process's own JVM scores."""
    address = os.environ.get(meteor_server.ENV, "").strip()
    if not address or meteor_server.runs_here(address):
        return None
    return _remote_meteor(address)


def _remote_meteor(address: str) -> meteor_server.RemoteMeteor:
    """One connection per process and server; a ConfigError (one line) where none answers."""
    if address not in _REMOTE:
        _REMOTE[address] = meteor_server.RemoteMeteor(address)
    return _REMOTE[address]


_REMOTE: dict[str, meteor_server.RemoteMeteor] = {}


# One METEOR JVM per process, stopped when it exits (`meteor_server.local_meteor`).
_meteor_scorer = meteor_server.local_meteor


def start_meteor() -> None:
    """Start METEOR's JVM now, when the task is built (or its first reply scored), so that
    it loads its tables (about 6-8 s) while the model generates and the items are scored, not
    after them. Nothing is
    waited for here; without Java or pycocoevalcap, `meteor` says so when it is asked.
    Not on the other ranks of a data-parallel lm-eval run: rank 0 alone aggregates."""
    if os.environ.get("RANK", "0") != "0":
        return
    if _meteor_server() is not None:  # connected now: a server that is not there stops the run
        return
    if not _java_found():
        return
    with contextlib.suppress(ConfigError):
        _meteor_scorer()


def stop_meteor() -> None:
    """Stop this process's METEOR JVM, if one was started (a later `meteor` starts another),
    and close its connections to METEOR servers: for a process that goes on without them,
    such as a test session (tests/conftest.py). A JVM that a METEOR server of this process
    scores with (`meteor_server.MeteorServer`) is the server's: other runs are using it, so
    it goes on until the server closes and this is called again."""
    while _REMOTE:
        _REMOTE.popitem()[1].close()
    if _meteor_scorer.cache_info().currsize == 0 or meteor_server.serves_local_meteor():
        return
    process = _meteor_scorer().meteor_p
    _meteor_scorer.cache_clear()
    with contextlib.suppress(OSError):
        process.stdin.close()
    process.kill()
    process.wait()


@lru_cache(maxsize=1)
def _java_found() -> bool:
    """Looked up once: `start_meteor` runs for every scored reply (a PATH search each)."""
    return shutil.which("java") is not None


def cider(records: Sequence[Scored]) -> float:
    gts, res = _coco_inputs(records)
    score, _ = _pycocoevalcap("cider.cider").Cider().compute_score(gts, res)
    return 10.0 * float(score)


def spice_lib() -> Path:
    module = _pycocoevalcap("spice.spice")
    return Path(module.__file__).resolve().parent / "lib"


def spice_status(jar_dir: str | None = None) -> str | None:
    """None when SPICE can run; otherwise why not and how to enable it."""
    lib = spice_lib()
    jar_dir = jar_dir or os.environ.get(SPICE_ENV)
    if jar_dir:
        _link_jars(Path(jar_dir).expanduser(), lib)
    missing = [jar for jar in SPICE_JARS if not (lib / jar).is_file()]
    if not missing:
        return None
    return (
        f"SPICE unavailable: {', '.join(missing)} missing from {lib}. Get them from Stanford "
        "CoreNLP 3.6.0 (stanford-corenlp-full-2015-12-09.zip) and pass their folder as "
        f"spice_jars=DIR (lm-eval --metadata, Inspect -T) or {SPICE_ENV}=DIR."
    )


def _link_jars(source: Path, lib: Path) -> None:
    for jar in SPICE_JARS:
        if (lib / jar).is_file():
            continue
        if not (source / jar).is_file():
            raise ConfigError(f"spice_jars={source}: {jar} is not there.")
        try:
            lib.mkdir(exist_ok=True)
            (lib / jar).symlink_to(source / jar)
        except OSError as err:
            raise ConfigError(
                f"Cannot link {source / jar} into {lib} ({err}); copy the two jars there yourself."
            ) from err


def spice(records: Sequence[Scored], jar_dir: str | None = None) -> float:
    problem = spice_status(jar_dir)
    if problem:
        _warn_once(problem)
        return NAN
    gts, res = _coco_inputs(records)
    score, _ = _pycocoevalcap("spice.spice").Spice().compute_score(gts, res)
    return 100.0 * float(score)


@lru_cache(maxsize=8)
def _warn_once(message: str) -> None:
    """Said once per process, through the log alone: a print beside it showed a user the
    same line twice (lm-eval and Inspect show the log; without a handler, logging's last
    resort writes a warning to stderr)."""
    log.warning(message)


def _mean(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else NAN


CORPUS: dict[str, Callable[[Sequence[Scored]], float]] = {
    "bleu3": lambda records: bleu(records)["bleu3"],
    "bleu4": lambda records: bleu(records)["bleu4"],
    "meteor": meteor,
    "cider": cider,
    "spice": spice,
}


def corpus_metric(name: str, records: Sequence[Scored]) -> float:
    """One Table 4 metric over a set of scored items."""
    if not records:
        return NAN
    if name in CORPUS:
        return CORPUS[name](records)
    return _mean([item_metrics(record)[name] for record in records])


def all_metrics(records: Sequence[Scored], spice_jars: str | None = None) -> dict[str, float]:
    """Every Table 4 metric (SPICE NaN when its jars are missing)."""
    if not records:
        return dict.fromkeys(METRIC_NAMES, NAN)
    per_item = [item_metrics(record) for record in records]
    values = {name: _mean([m[name] for m in per_item]) for name in ("rouge2", "rougeL", "coverage")}
    values.update(bleu(records))
    values["meteor"] = meteor(records)
    values["cider"] = cider(records)
    values["spice"] = spice(records, spice_jars)
    return {name: values[name] for name in METRIC_NAMES}

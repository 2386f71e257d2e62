"""Corpus metrics on bootstrap resamples, vectorised (`stats`'s bootstrap).

A corpus metric (BLEU, CIDEr, macro-F1, AUC) is not a mean over items, so a resample of the
items needs the metric computed again. Each class here takes the items once, computes what
each item adds (its n-gram counts and lengths, its confusion cell, its tf-idf terms) with the
library the benchmark scores with, or as it computes them, and then computes the metric on
a (resamples x items) matrix of draw counts with numpy at once: a resample that draws an
item twice counts it twice, as the library would if the item were listed twice. Each one's
``value()`` equals the library's score on all items, and ``resampled`` the library's score
on each resample (tests/leaderboard/statistics/test_corpus.py checks both against the libraries):

* `coco_bleu`: pycocoevalcap's BLEU-n (CommonGen, CGGC): clipped n-gram matches and guesses,
  hypothesis lengths and the closest reference length summed over the items, then
  ``prod_k ((correct_k + 1e-15) / (guess_k + 1e-9))^(1/n)`` with the brevity penalty
  ``exp(1 - ref/test)`` when test < ref (``BleuScorer.compute_score``); each item's counts
  come from its n-grams, counted with numpy as pycocoevalcap's ``precook`` counts them
  (`count_ngrams`, tested against it) and matched against the references' (`Hypotheses`:
  one count of a run's n-grams for BLEU and CIDEr-D; the references' once per task);
* `CocoCider`: pycocoevalcap's CIDEr-D. Its idf comes from the references of the corpus
  scored, so it changes with every resample: the document frequency of each n-gram is
  recomputed per resample (the draw counts times each item's n-gram presence), and since
  every term of the score is a product of term frequencies with idf^2, each item's score on
  a resample is a few sparse products with that resample's idf^2. What depends on the
  references only (`ReferenceNGrams`: their n-grams, grouped by the items that hold them,
  and on each resample the idf^2 and the references' norms) is the same for every run of a
  task: built once per process, and computed once per resample for all the runs resampled
  together (`resampled_together`);
* `nmt_bleu`: tensorflow/nmt ``compute_bleu`` as Hugging Face ``evaluate``'s "bleu" computes
  it (AbsPyramid): the n-gram precision of one order, or the brevity penalty against the
  shortest reference;
* `macro_f1`: scikit-learn's ``f1_score(average="macro", zero_division=0)``: per-class F1 from
  the summed confusion cells, averaged over the classes present in the resample;
* `Auc`: scikit-learn's ``roc_auc_score`` with the draw counts as sample weights (ties
  count one half);
* `Mean`: a weighted mean (metrics that are means, for tests and the generic path);
* `Looped`: any other aggregation (one registered with lm-eval, such as its ``bleu``): called
  on each resample's items in turn, not vectorised.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptcomb.benchmarks import evidence_adapter
from conceptcomb.common.errors import ConceptcombError, DataFormatError
from conceptcomb.common.evidence import CorpusInputs

# Resamples computed at once where a (groups x resamples) matrix is needed: CIDEr-D's arrays
# of a chunk of 16 stay in the processor's cache (on cggc_ood a fifth less time than 64).
CHUNK = 16


class Summed:
    """A metric computed from statistics summed over the items: ``formula`` maps the
    (resamples x k) sums to the metric's values."""

    def __init__(self, stats: np.ndarray, formula: Callable[[np.ndarray], np.ndarray]) -> None:
        self.stats = np.asarray(stats, dtype=float)
        self.formula = formula

    @property
    def n(self) -> int:
        return len(self.stats)

    def value(self) -> float:
        return float(self.formula(self.stats.sum(axis=0)[None, :])[0])

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return self.formula(counts @ self.stats)

    def subset(self, rows: Sequence[int]) -> Summed:
        if _all_rows(rows, self.n):
            return self
        return Summed(self.stats[np.asarray(rows, dtype=int)], self.formula)


# --- pycocoevalcap: the n-grams of the references and of a run's hypotheses ----------------
ORDERS = 4  # n-grams of 1 to 4 words: pycocoevalcap's CIDEr-D and ``Bleu(4)``
References = tuple[tuple[str, ...], ...]  # each item's references (a cache key)


def _references(records: Sequence[tuple[str, Sequence[str]]]) -> References:
    return tuple(tuple(references) for _, references in records)


def _all_rows(rows: Sequence[int], n: int) -> bool:
    """The rows are every item, in order (a subset that is the whole)."""
    return len(rows) == n and bool(np.array_equal(np.asarray(rows), np.arange(n)))


def _find(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each wanted key is in the sorted ``keys``, and whether it is there."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=np.int64), np.zeros(len(wanted), dtype=bool)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return at, keys[at] == wanted


# --- n-grams, counted as pycocoevalcap's ``precook`` counts them ---------------------------
BASE = 2**31  # a k-gram's key: its (k-1)-gram prefix's number x BASE + its last word's number


def _words(
    sentences: Sequence[str], known: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The sentences' words (``str.split()``, as ``precook`` splits them) as numbers, one
    sentence after the other, and each sentence's length in words: ``known``'s numbers, and
    for other words numbers after them (the same word alike; the third value)."""
    split = [sentence.split() for sentence in sentences]
    lengths = np.fromiter(map(len, split), np.int64, len(split))
    words = list(itertools.chain.from_iterable(split))
    numbers = np.fromiter(map(known.get, words, itertools.repeat(-1)), np.int64, len(words))
    new: dict[str, int] = {}
    for at in np.flatnonzero(numbers < 0).tolist():
        numbers[at] = new.setdefault(words[at], len(known) + len(new))
    return numbers, lengths, new


@dataclass(frozen=True)
class NGrams:
    """The n-grams of some sentences as ``precook`` counts them (every run of 1 to 4
    consecutive words), with numpy: each distinct n-gram of each sentence once."""

    sentence: np.ndarray  # its sentence
    order: np.ndarray  # its order less one (0: a word)
    number: np.ndarray  # its number among the distinct n-grams of its order (``distinct``)
    tf: np.ndarray  # how often the sentence holds it
    distinct: list[np.ndarray]  # per order, the keys of the distinct n-grams, sorted
    lengths: np.ndarray  # each sentence's length in words


def count_ngrams(numbers: np.ndarray, lengths: np.ndarray) -> NGrams:
    """The n-grams of sentences given as word numbers (`_words`): a k-gram is numbered by its
    key, its (k-1)-gram prefix's number x BASE + its last word's (exact: no hashing)."""
    total = len(numbers)
    sentence_of = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    left = np.repeat(lengths, lengths) - (np.arange(total) - starts)  # words from here on
    prefix = np.zeros(total, dtype=np.int64)  # the (k-1)-gram starting at each word: its number
    parts: list[list[np.ndarray]] = [[], [], [], []]
    distinct = []
    for order in range(ORDERS):
        at = np.flatnonzero(left > order)
        key = numbers[at] if order == 0 else prefix[at] * BASE + numbers[at + order]
        keys, number = np.unique(key, return_inverse=True)
        number = number.ravel()
        prefix[at] = number
        distinct.append(keys)
        held, tf = np.unique(sentence_of[at] * len(keys) + number, return_counts=True)
        sentence, number = np.divmod(held, max(len(keys), 1))
        found = (sentence, np.full(len(held), order), number, tf)
        for part, values in zip(parts, found, strict=True):
            part.append(values)
    sentence, order, number, tf = (np.concatenate(part) for part in parts)
    return NGrams(sentence, order, number, tf.astype(float), distinct, lengths)


def _groups(
    gram: np.ndarray, item: np.ndarray, n: int, grams: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each n-gram's group (n-grams held by the same items share one), and the (n-gram, item)
    pairs of the holdings, once each. The items of each n-gram are hashed (two random 64-bit
    sums and their number) and then compared with those of its group's first n-gram, so the
    groups are exact: were two sets ever to hash alike, each n-gram keeps a column of its own."""
    held = np.unique(gram * n + item)  # by n-gram, then item
    held_gram, held_item = np.divmod(held, n)
    if not len(held):
        return np.zeros(0, dtype=np.int64), held_gram, held_item
    starts = np.flatnonzero(np.r_[True, held_gram[1:] != held_gram[:-1]])  # n-gram after n-gram
    sizes = np.diff(np.r_[starts, len(held)])
    rng = np.random.default_rng(0)
    keys = [sizes]
    for _ in range(2):
        draws = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
        keys.append(np.add.reduceat(draws[held_item], starts).astype(np.int64))  # wraps around
    _, first, group = np.unique(
        np.stack(keys, axis=1), axis=0, return_index=True, return_inverse=True
    )
    group = group.ravel()
    offset = np.arange(len(held)) - np.repeat(starts, sizes)
    if not np.all(held_item == held_item[starts[first[group[held_gram]]] + offset]):
        group = np.arange(grams)
    # Numbered in the order of the first item holding them: an item's own n-grams sit near
    # the next item's, and the weights' rows are read in the items' order.
    lowest = np.empty(int(group.max()) + 1, dtype=np.int64)
    lowest[group] = held_item[starts]
    rank = np.empty_like(lowest)
    rank[np.argsort(lowest, kind="stable")] = np.arange(len(lowest))
    return rank[group], held_gram, held_item


@dataclass(frozen=True, eq=False)
class ReferenceNGrams:
    """The references' side of BLEU and CIDEr-D on a list of items: the same for every run of
    a task, built once per process (`reference_ngrams`).

    CIDEr-D: an n-gram's idf on a resample depends only on which items' references hold it
    (its document frequency is how many of those items the resample draws), so the n-grams
    held by the same items share one column, a *group*, and their terms are summed in it
    before being weighted: most 3- and 4-grams of cggc_ood are held by one item's reference
    only, and the 273k n-grams of its 15,985 references make 46k groups. The last column
    holds the hypotheses' n-grams that no reference holds (document frequency 0 on every
    resample)."""

    n: int  # items
    word_numbers: dict[str, int]  # each word of the references: its number
    distinct: list[np.ndarray]  # per order, the keys of the references' n-grams (`NGrams`)
    offsets: np.ndarray  # per order, the number of its first n-gram among all orders'
    grams: int  # the references' distinct n-grams, all orders
    group: np.ndarray  # each reference n-gram's group (its column)
    width: int  # groups, and the last column
    presence: Any  # groups x items: 1 where the item's references hold the group's n-grams
    ref_sq: Any  # (ORDERS * pairs) x groups: tf_ref^2, row k * pairs + pair for order k + 1
    keys: np.ndarray  # pair * grams + n-gram number of each reference n-gram, sorted
    tf: np.ndarray  # its count in that reference, in the order of ``keys``
    item_keys: np.ndarray  # item * grams + n-gram number, sorted (BLEU's clipping)
    item_max: np.ndarray  # the n-gram's largest count in a reference of the item
    pair_item: np.ndarray  # each (item, reference) pair's item; an item's pairs are adjacent
    first_pair: np.ndarray  # each item's first pair
    words: np.ndarray  # each pair's reference length in words (BLEU's)
    bigrams: np.ndarray  # each pair's bigram count (the length CIDEr-D compares)
    item_of_pair: Any  # items x pairs: 1 where the pair is the item's
    refs_per_item: np.ndarray  # each item's references (at least 1: a divisor)
    one_each: bool  # every item has one reference (pairs are items: CGGC)

    @property
    def pairs(self) -> int:
        return len(self.pair_item)

    @property
    def none(self) -> int:
        return self.width - 1

    def weights(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """On each resample (a row of ``counts``): each group's idf^2 (groups x resamples,
        ``log(items listed) - log(max(df, 1))`` squared, as ``counts2vec`` weighs a term
        frequency), and each pair's reference norm per order ((ORDERS * pairs) x resamples,
        the rows of ``ref_sq``)."""
        df = self.presence @ counts.T  # the document frequencies: groups x resamples
        size = np.maximum(counts.sum(axis=1), 1.0)  # the items listed
        # Both are whole numbers: log(max(df, 1)) is looked up, not computed for each group.
        logs = np.log(np.maximum(np.arange(int(df.max(initial=0.0)) + 1), 1.0))
        weight = np.log(size)[None, :] - logs[df.astype(np.int64)]
        weight **= 2
        ref_norm = np.sqrt(self.ref_sq @ weight)
        return weight, ref_norm


@functools.lru_cache(maxsize=4)
def reference_ngrams(references: References) -> ReferenceNGrams:
    """The references' side for these items' references (cached: every run of a task has
    the same ones), their n-grams counted as ``cook_refs`` counts them (`count_ngrams`)."""
    from scipy import sparse

    n = len(references)
    refs_count = np.fromiter(map(len, references), np.int64, n)
    pair_item = np.repeat(np.arange(n), refs_count)
    pairs = len(pair_item)
    numbers, lengths, word_numbers = _words([r for refs in references for r in refs], {})
    counted = count_ngrams(numbers, lengths)
    offsets = np.cumsum([0] + [len(keys) for keys in counted.distinct])
    grams = int(offsets[-1])
    pair, order, tf = counted.sentence, counted.order, counted.tf
    gram = offsets[order] + counted.number
    group, held_gram, held_item = _groups(gram, pair_item[pair], n, grams)
    width = int(group.max()) + 2 if len(group) else 1
    first = np.unique(group, return_index=True)[1]  # each group's first n-gram: its items
    mine = group[held_gram]
    keep = first[mine] == held_gram
    presence = sparse.csr_matrix(
        (np.ones(int(keep.sum())), (mine[keep], held_item[keep])), shape=(width, n)
    )
    ref_sq = sparse.csr_matrix(
        (tf**2, (order * pairs + pair, group[gram])), shape=(ORDERS * pairs, width)
    )
    keys = pair * grams + gram
    sort = np.argsort(keys)
    item_keys = pair_item[pair] * grams + gram
    by_item = np.argsort(item_keys, kind="stable")
    item_keys = item_keys[by_item]
    starts = np.flatnonzero(np.r_[True, item_keys[1:] != item_keys[:-1]]) if grams else []
    first_pair = np.cumsum(refs_count) - refs_count
    return ReferenceNGrams(
        n=n, word_numbers=word_numbers, distinct=counted.distinct, offsets=offsets[:-1],
        grams=grams, group=group, width=width, presence=presence, ref_sq=ref_sq,
        keys=keys[sort], tf=tf[sort], item_keys=item_keys[starts],
        item_max=np.maximum.reduceat(tf[by_item], starts) if grams else tf,
        pair_item=pair_item, first_pair=first_pair, words=lengths.astype(float),
        bigrams=np.maximum(lengths - 1, 0).astype(float),
        item_of_pair=sparse.csr_matrix(
            (np.ones(pairs), (pair_item, np.arange(pairs))), shape=(n, pairs)
        ),
        refs_per_item=np.maximum(refs_count, 1).astype(float),
        one_each=bool(np.all(refs_count == 1)),
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class Hypotheses:
    """A run's hypotheses' n-grams as pycocoevalcap's ``precook`` counts them (the same for
    BLEU and CIDEr-D: counted once a run), numbered by the references' vocabulary."""

    refs: ReferenceNGrams
    item: np.ndarray  # each distinct n-gram of each hypothesis: its item
    order: np.ndarray  # its order less one
    gram: np.ndarray  # its number among the references' n-grams (-1: no reference holds it)
    tf: np.ndarray  # its count in the hypothesis
    words: np.ndarray  # each hypothesis's length in words

    def in_references(
        self, keys: np.ndarray, per: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The known n-grams found in ``keys`` (sorted ``<pair or item> * vocabulary +
        n-gram``; ``per`` "pair": each n-gram once per reference of its item), as (entries
        into these arrays, their pairs or items, where each is in ``keys``)."""
        refs, entry = self.refs, np.flatnonzero(self.gram >= 0)
        where = self.item[entry]
        if per == "pair":
            per_item = np.bincount(refs.pair_item, minlength=refs.n)[where]
            entry = np.repeat(entry, per_item)
            where = refs.first_pair[self.item[entry]] + (
                np.arange(len(entry)) - np.repeat(np.cumsum(per_item) - per_item, per_item)
            )
        at, found = _find(keys, where * refs.grams + self.gram[entry])
        return entry[found], where[found], at[found]


def hypotheses(records: Sequence[tuple[str, Sequence[str]]]) -> Hypotheses:
    """The hypotheses' n-grams (as ``cook_test`` counts them: `count_ngrams`), numbered by
    their references' `reference_ngrams`: a k-gram is theirs when its (k-1)-gram prefix is
    and the key of that prefix's number and its last word is among theirs."""
    refs = reference_ngrams(_references(records))
    numbers, lengths, _ = _words([hypothesis for hypothesis, _ in records], refs.word_numbers)
    counted = count_ngrams(numbers, lengths)
    theirs: list[np.ndarray] = []  # per order, each distinct n-gram's number there, or -1
    for order, keys in enumerate(counted.distinct):
        if order == 0:
            wanted = keys
        else:
            head = theirs[-1][keys // BASE]  # the prefix's number among the references'
            wanted = (head - refs.offsets[order - 1]) * BASE + keys % BASE
            wanted[head < 0] = -1
        at, found = _find(refs.distinct[order], wanted)
        theirs.append(np.where(found & (wanted >= 0), refs.offsets[order] + at, -1))
    first = np.cumsum([0] + [len(keys) for keys in counted.distinct])[:-1]
    gram = np.concatenate(theirs)[first[counted.order] + counted.number]
    return Hypotheses(refs, counted.sentence, counted.order, gram, counted.tf, lengths)


# --- pycocoevalcap: BLEU -------------------------------------------------------------------
def coco_bleu_stats(
    records: Sequence[tuple[str, Sequence[str]]], counted: Hypotheses | None = None
) -> np.ndarray:
    """Per item (hypothesis, references; tokens joined by spaces as pycocoevalcap takes them):
    [test length, closest reference length, guess_1..4, correct_1..4] as ``BleuScorer``
    counts them (``cook_test`` with the closest reference length, its default): the words,
    the reference length nearest to theirs (the shorter on a tie), the n-grams of each order,
    and those matched, each at most as often as one reference of the item holds it.
    ``counted``: the records' `hypotheses` where CIDEr-D counted them already."""
    hyp = hypotheses(records) if counted is None else counted
    refs, n = hyp.refs, len(records)
    words = hyp.words.astype(float)
    entry, item, at = hyp.in_references(refs.item_keys, per="item")
    matched = np.minimum(hyp.tf[entry], refs.item_max[at])
    correct = np.bincount(item * ORDERS + hyp.order[entry], weights=matched, minlength=n * ORDERS)
    guess = np.maximum(words[:, None] - np.arange(ORDERS)[None, :], 0.0)
    distance = np.abs(refs.words - words[refs.pair_item])
    nearest = np.lexsort((refs.words, distance, refs.pair_item))  # by item, distance, length
    first = nearest[np.r_[True, refs.pair_item[nearest][1:] != refs.pair_item[nearest][:-1]]]
    reflen = np.zeros(n)
    reflen[refs.pair_item[first]] = refs.words[first]
    return np.column_stack([words, reflen, guess, correct.reshape(n, ORDERS)])


def _coco_bleu_formula(order: int, scale: float) -> Callable:
    def formula(sums: np.ndarray) -> np.ndarray:
        tiny, small = 1e-15, 1e-9
        testlen, reflen = sums[:, 0], sums[:, 1]
        guess, correct = sums[:, 2 : 2 + ORDERS], sums[:, 2 + ORDERS :]
        product = np.prod((correct[:, :order] + tiny) / (guess[:, :order] + small), axis=1)
        bleu = product ** (1.0 / order)
        ratio = (testlen + tiny) / (reflen + small)
        with np.errstate(divide="ignore", over="ignore"):
            penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
        return scale * bleu * penalty

    return formula


def coco_bleu(
    records: Sequence[tuple[str, Sequence[str]]],
    order: int,
    scale: float = 1.0,
    counted: np.ndarray | None = None,
) -> Summed:
    """pycocoevalcap ``Bleu(4)``'s BLEU-``order`` (times ``scale``); ``counted``: the
    records' `coco_bleu_stats` where another order counted them already."""
    counted = coco_bleu_stats(records) if counted is None else counted
    return Summed(counted, _coco_bleu_formula(order, scale))


# --- pycocoevalcap: CIDEr-D ----------------------------------------------------------------
class CocoCider:
    """pycocoevalcap ``Cider()``'s CIDEr-D (times ``scale``) on resamples, its document
    frequencies recomputed on each (`CiderScorer.compute_doc_freq` counts an n-gram once per
    item whose references hold it; a resample lists an item as often as it is drawn).

    On a resample every term of an item's score is a product of term frequencies with an
    n-gram's idf^2: the hypotheses' terms (``hyp_sq``: tf^2; ``clipped``: min(tf, tf_ref) x
    tf_ref) are sparse rows over the references' groups (`ReferenceNGrams`), multiplied by
    each resample's idf^2 at once. ``counted``: the records' `hypotheses` where BLEU counted
    them already."""

    def __init__(
        self,
        records: Sequence[tuple[str, Sequence[str]]],
        scale: float = 1.0,
        sigma: float = 6.0,
        counted: Hypotheses | None = None,
    ) -> None:
        self.records = list(records)
        self.scale, self.sigma, self.n = scale, sigma, len(self.records)
        hyp = hypotheses(self.records) if counted is None else counted
        self.refs = hyp.refs
        self._terms(hyp)

    def _terms(self, hyp: Hypotheses) -> None:
        """Each hypothesis's terms over the groups, and each pair's length penalty."""
        from scipy import sparse

        refs, n, pairs = self.refs, self.n, self.refs.pairs
        known = hyp.gram >= 0  # the n-grams some reference holds
        column = np.where(known, refs.group[np.where(known, hyp.gram, 0)], refs.none)
        self.hyp_sq = sparse.csr_matrix(
            (hyp.tf**2, (hyp.order * n + hyp.item, column)), shape=(ORDERS * n, refs.width)
        )
        bigrams = np.maximum(hyp.words - 1, 0).astype(float)  # pycocoevalcap's length
        delta = bigrams[refs.pair_item] - refs.bigrams
        self.penalty = np.exp(-(delta**2) / (2 * self.sigma**2))
        # Each n-gram's count in each reference of its item that holds it; the penalty is the
        # pair's on every resample: it multiplies the numerators here.
        entry, pair, at = hyp.in_references(refs.keys, per="pair")
        tf_ref = refs.tf[at]
        clipped = np.minimum(hyp.tf[entry], tf_ref) * tf_ref * self.penalty[pair]
        self.clipped = sparse.csr_matrix(
            (clipped, (hyp.order[entry] * pairs + pair, column[entry])),
            shape=(ORDERS * pairs, refs.width),
        )

    def _item_scores(self, weight: np.ndarray, ref_norm: np.ndarray) -> np.ndarray:
        """(items x resamples) CIDEr-D of each item, from each resample's `weights`:
        pycocoevalcap's ``sim`` of each (item, reference) pair and order (the clipped
        products over the norms, unless a norm is 0), times the pair's length penalty,
        summed over the orders and references, / 4 / references x 10 (``compute_cider``)."""
        refs = self.refs
        hyp_norm = np.sqrt(self.hyp_sq @ weight)  # (ORDERS * items) x resamples
        if not refs.one_each:  # each pair's row: its item's
            rows = (np.arange(ORDERS)[:, None] * self.n + refs.pair_item[None, :]).ravel()
            hyp_norm = hyp_norm[rows]
        value = self.clipped @ weight  # the numerators, times the pairs' length penalty
        denominator = hyp_norm * ref_norm
        np.divide(value, denominator, out=value, where=denominator != 0)
        total = value.reshape(ORDERS, refs.pairs, -1).sum(axis=0)  # pairs x resamples
        if refs.one_each:
            return total / ORDERS * 10.0
        per_item = refs.item_of_pair @ total  # summed over references
        return per_item / ORDERS / refs.refs_per_item[:, None] * 10.0

    def value(self) -> float:
        ones = np.ones((1, self.n))
        return float(self.scale * np.mean(self._item_scores(*self.refs.weights(ones))[:, 0]))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return CocoCider.together([self], counts)[0]

    @staticmethod
    def together(metrics: Sequence[CocoCider], counts: np.ndarray) -> list[np.ndarray]:
        """Several runs' CIDEr-D on the same references and resamples: each chunk of
        resamples' idf weights and reference norms (`ReferenceNGrams.weights`, half a run's
        cost on a large task) computed once for all of them."""
        refs = metrics[0].refs
        if any(metric.refs is not refs for metric in metrics):
            raise ValueError("CIDEr-D computed together needs the same references")
        out = np.empty((len(metrics), counts.shape[0]))
        for start in range(0, counts.shape[0], CHUNK):
            chunk = counts[start : start + CHUNK]
            weights = refs.weights(chunk)
            size = chunk.sum(axis=1)
            for row, metric in enumerate(metrics):
                scores = metric._item_scores(*weights)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[row, start : start + CHUNK] = (
                        metric.scale * np.sum(chunk * scores.T, axis=1) / size
                    )
        return list(out)

    def subset(self, rows: Sequence[int]) -> CocoCider:
        if _all_rows(rows, self.n):
            return self
        return CocoCider([self.records[i] for i in rows], self.scale, self.sigma)


# --- tensorflow/nmt compute_bleu (Hugging Face evaluate's "bleu") ------------------------
def nmt_bleu_stats(
    records: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]], max_order: int = 4
) -> np.ndarray:
    """Per item (hypothesis tokens, references' tokens): [matches_1..n, possible_1..n,
    translation length, shortest reference length], as ``compute_bleu`` counts them."""
    from collections import Counter

    def ngrams(tokens: Sequence[str]) -> Counter:
        found: Counter = Counter()
        for order in range(1, max_order + 1):
            for start in range(len(tokens) - order + 1):
                found[tuple(tokens[start : start + order])] += 1
        return found

    rows = []
    for hypothesis, references in records:
        merged: Counter = Counter()
        for reference in references:
            merged |= ngrams(reference)
        matches = [0.0] * max_order
        for ngram, count in (ngrams(hypothesis) & merged).items():
            matches[len(ngram) - 1] += count
        possible = [max(len(hypothesis) - k + 1, 0) for k in range(1, max_order + 1)]
        shortest = min(len(reference) for reference in references) if references else 0
        rows.append([*matches, *possible, len(hypothesis), shortest])
    return np.asarray(rows, dtype=float).reshape(len(rows), 2 * max_order + 2)


def nmt_bleu(
    records: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]],
    part: str,
    scale: float = 1.0,
    max_order: int = 4,
    counted: np.ndarray | None = None,
) -> Summed:
    """``part``: "precision_<k>" (the k-gram precision) or "brevity_penalty"; ``counted``:
    the records' `nmt_bleu_stats` where another part counted them already."""

    def formula(sums: np.ndarray) -> np.ndarray:
        matches, possible = sums[:, :max_order], sums[:, max_order : 2 * max_order]
        length, reference = sums[:, 2 * max_order], sums[:, 2 * max_order + 1]
        if part.startswith("precision_"):
            k = int(part.removeprefix("precision_")) - 1
            with np.errstate(divide="ignore", invalid="ignore"):
                return scale * np.where(possible[:, k] > 0, matches[:, k] / possible[:, k], 0.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(reference > 0, length / reference, np.inf)
            penalty = np.where(ratio > 1.0, 1.0, np.exp(1 - 1.0 / ratio))
        return scale * np.where(length > 0, penalty, 0.0)

    counted = nmt_bleu_stats(records, max_order) if counted is None else counted
    return Summed(counted, formula)


# --- classification ------------------------------------------------------------------------
def macro_f1(gold: Sequence[Any], predicted: Sequence[Any], scale: float = 1.0) -> Summed:
    """scikit-learn's macro F1 (zero_division=0): the classes are those present in the
    gold or predicted labels of each resample."""
    labels = sorted({*gold, *predicted}, key=str)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    cells = np.zeros((len(gold), k * k))
    for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        cells[row, index[g] * k + index[p]] = 1.0

    def formula(sums: np.ndarray) -> np.ndarray:
        confusion = sums.reshape(-1, k, k)
        true_pos = np.diagonal(confusion, axis1=1, axis2=2)
        gold_total, predicted_total = confusion.sum(axis=2), confusion.sum(axis=1)
        present = (gold_total + predicted_total) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(present, 2 * true_pos / (gold_total + predicted_total), 0.0)
        classes = present.sum(axis=1)
        return scale * np.where(classes > 0, f1.sum(axis=1) / np.maximum(classes, 1), np.nan)

    return Summed(cells, formula)


class Auc:
    """scikit-learn's ``roc_auc_score`` with each item weighted by its draw count: the
    weighted share of (positive, negative) pairs ranked right, ties counting one half; NaN
    where a resample holds one class only. Items without a score (NaN) are left out, as the
    benchmark leaves them out."""

    def __init__(self, labels: Sequence[int], scores: Sequence[float], scale: float = 1.0) -> None:
        self.labels, self.scores = list(labels), [float(s) for s in scores]
        self.scale, self.n = scale, len(self.labels)
        score = np.asarray(self.scores, dtype=float)
        self.keep = np.isfinite(score)
        levels, group = np.unique(np.where(self.keep, score, 0.0), return_inverse=True)
        self.groups = len(levels)
        label = np.asarray(self.labels, dtype=int)
        self.positive = (label == 1) & self.keep
        self.negative = (label != 1) & self.keep
        self.group = group

    def _by_group(self, weights: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros((weights.shape[0], self.groups))
        for g in range(self.groups):  # few distinct scores or many: one column each
            members = mask & (self.group == g)
            if members.any():
                out[:, g] = weights[:, members].sum(axis=1)
        return out

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        pos, neg = self._by_group(counts, self.positive), self._by_group(counts, self.negative)
        below = np.cumsum(neg, axis=1) - neg
        ranked = np.sum(pos * (below + 0.5 * neg), axis=1)
        total = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.scale * np.where(total > 0, ranked / total, np.nan)

    def value(self) -> float:
        return float(self.resampled(np.ones((1, self.n)))[0])

    def subset(self, rows: Sequence[int]) -> Auc:
        return Auc([self.labels[i] for i in rows], [self.scores[i] for i in rows], self.scale)


# --- means and the rest -----------------------------------------------------------------------
class Mean:
    """The mean of per-item values (NaN left out) on each resample."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = np.asarray(values, dtype=float)
        self.n = len(self.values)

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        defined = np.isfinite(self.values)
        weights = counts[:, defined]
        with np.errstate(divide="ignore", invalid="ignore"):
            return weights @ self.values[defined] / weights.sum(axis=1)

    def value(self) -> float:
        return float(np.nanmean(self.values)) if np.isfinite(self.values).any() else math.nan

    def subset(self, rows: Sequence[int]) -> Mean:
        return Mean(self.values[np.asarray(rows, dtype=int)])


class Looped:
    """Any aggregation of per-item values (lm-eval's registered ``bleu``, ``f1``...), called
    once on all items and once per resample, on the items drawn (in the order drawn)."""

    def __init__(self, items: Sequence[Any], aggregate: Callable[[list[Any]], float]) -> None:
        self.items, self.aggregate, self.n = list(items), aggregate, len(items)

    def value(self) -> float:
        return float(self.aggregate(list(self.items)))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        positions = np.arange(self.n)
        out = np.empty(counts.shape[0])
        for row, drawn in enumerate(counts.astype(int)):
            chosen = np.repeat(positions, drawn)
            try:
                out[row] = float(self.aggregate([self.items[i] for i in chosen]))
            except (ValueError, ZeroDivisionError, TypeError):
                out[row] = math.nan
        return out

    def subset(self, rows: Sequence[int]) -> Looped:
        return Looped([self.items[i] for i in rows], self.aggregate)


class Masked:
    """A metric over some of the items only (a ``_verified`` metric's verified items): a
    resample draws from all items and the metric takes those it keeps."""

    def __init__(self, metric: Any, keep: Sequence[bool]) -> None:
        self.metric, self.keep = metric, np.asarray(keep, dtype=bool)
        self.n = len(self.keep)

    def value(self) -> float:
        return self.metric.value() if self.keep.any() else math.nan

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        if not self.keep.any():
            return np.full(counts.shape[0], math.nan)
        return self.metric.resampled(counts[:, self.keep])

    def subset(self, rows: Sequence[int]) -> Masked:
        if _all_rows(rows, self.n):
            return self
        rows = np.asarray(rows, dtype=int)
        kept = rows[self.keep[rows]]
        inner = np.cumsum(self.keep) - 1  # an item's row among the kept
        return Masked(self.metric.subset(inner[kept]), self.keep[rows])


class Lazy:
    """A corpus metric built on first use (CIDEr's tables take seconds on a large task; a
    report ranks by one metric of several)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._metric = make, None

    @property
    def metric(self) -> Any:
        if self._metric is None:
            self._metric = self._make()
        return self._metric

    @property
    def n(self) -> int:
        return int(self.metric.n)

    def value(self) -> float:
        return float(self.metric.value())

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        return self.metric.resampled(counts)

    def subset(self, rows: Sequence[int]) -> Any:
        return self.metric.subset(rows)


def resampled_together(metrics: Sequence[Any], counts: np.ndarray) -> list[np.ndarray]:
    """Each metric on the same resamples (``metric.resampled(counts)``), the CIDEr-D of runs
    on the same references computed together (`CocoCider.together`: ``conceptcomb compare``
    of many runs of one task)."""
    inners = [metric.metric if isinstance(metric, Lazy) else metric for metric in metrics]
    found: dict[int, np.ndarray] = {}
    ciders: dict[int, list[int]] = {}  # id of the references -> the metrics on them
    for number, inner in enumerate(inners):
        if isinstance(inner, CocoCider):
            ciders.setdefault(id(inner.refs), []).append(number)
        else:
            found[number] = np.asarray(inner.resampled(counts), dtype=float)
    for members in ciders.values():
        values = CocoCider.together([inners[m] for m in members], counts)
        found.update(zip(members, values, strict=True))
    return [found[number] for number in range(len(metrics))]


def build(inputs: CorpusInputs, counted: dict[tuple[str, int], Any] | None = None) -> Any:
    """The resampled computation a benchmark's `CorpusInputs` names (records of None: the
    items the metric leaves out). ``counted``: what the metrics of one task that read the
    same records share (by what it is and the records' id): the hypotheses' n-grams (BLEU and
    CIDEr-D), BLEU's per-item counts (BLEU-3 and BLEU-4)."""
    keep = [record is not None for record in inputs.records]
    records = [record for record in inputs.records if record is not None]
    kind, scale = inputs.kind, inputs.scale
    counted = {} if counted is None else counted

    def shared(what: str, count: Callable[[], Any]) -> Any:
        key = (what, id(inputs.records))
        if key not in counted:
            counted[key] = count()
        return counted[key]

    if kind in ("coco-bleu", "coco-cider"):
        ngrams = shared("n-grams", lambda: hypotheses(records))
    if kind == "coco-bleu":
        sums = shared(kind, lambda: coco_bleu_stats(records, ngrams))
        metric: Any = coco_bleu(records, int(inputs.part), scale, counted=sums)
    elif kind == "coco-cider":
        metric = CocoCider(records, scale, counted=ngrams)
    elif kind == "nmt-bleu":
        sums = shared(kind, lambda: nmt_bleu_stats(records))
        metric = nmt_bleu(records, str(inputs.part), scale, counted=sums)
    elif kind == "macro-f1":
        metric = macro_f1([g for g, _ in records], [p for _, p in records], scale)
    elif kind == "auc":
        metric = Auc([label for label, _ in records], [p for _, p in records], scale)
    else:
        raise ValueError(f"no resampled computation of kind {kind!r}")
    return metric if all(keep) else Masked(metric, keep)


# --- a benchmark's corpus metrics --------------------------------------------------------
def _pairs_with_test_set(
    adapter: Any, record: dict[str, Any], items: list[dict[str, Any]], data_dir: str | None
) -> list[tuple[Any, dict[str, Any]]]:
    """(test item, evidence) of each item: the test items as the corpus metrics need them
    (an adapter's ``reference_set`` where it has one: without what only the item checks
    need, such as CGGC's sampled demonstrations)."""
    load = getattr(adapter, "reference_set", None) or adapter.test_set
    test = load(record["task"], record.get("options") or {}, data_dir)
    by_id = {test.item_id(key): item for key, item in test.items.items()}
    pairs = []
    for evidence in items:
        found = by_id.get(evidence.get("id"))
        if found is None:
            raise DataFormatError(f"item {evidence.get('id')} is not in the pinned test set here")
        pairs.append((found, evidence))
    return pairs


def corpus_metrics(
    benchmark: str,
    record: dict[str, Any],
    items: list[dict[str, Any]],
    wanted: list[str],
    data_dir: str | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The task's corpus metrics on its items (`corpus.build`), and why others are not
    there: the benchmark computes them from its test items (references, gold labels)."""
    if not wanted:
        return {}, {}
    adapter = evidence_adapter(benchmark)
    if adapter is None or not hasattr(adapter, "corpus_inputs"):
        return {}, dict.fromkeys(wanted, f"{benchmark} does not resample its corpus metrics")
    try:
        pairs = _pairs_with_test_set(adapter, record, items, data_dir)
        inputs = adapter.corpus_inputs(record["task"], record.get("options") or {}, pairs)
    except ConceptcombError as err:
        reason = f"its test items could not be read here ({err})"
        return {}, dict.fromkeys(wanted, reason)
    except Exception as err:  # an item the computation does not take: named, not raised
        return {}, dict.fromkeys(wanted, f"cannot be recomputed ({type(err).__name__}: {err})")
    found, skipped = {}, {}
    counted: dict[tuple[str, int], Any] = {}  # what the metrics of these records share
    for metric in wanted:
        if metric in inputs:
            found[metric] = Lazy(functools.partial(build, inputs[metric], counted))
        else:
            skipped[metric] = "a corpus metric whose tool scores the whole corpus at once (a jar)"
    return found, skipped

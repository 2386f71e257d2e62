"""Importing a library without the optional libraries it would pull in for nothing.

spaCy imports thinc, which imports torch whenever it is installed (to offer PyTorch
layers), though ``en_core_web_sm`` runs on numpy alone; rouge-score imports NLTK, whose
``__init__`` imports scikit-learn and SciPy (for classifiers and statistics) where ROUGE
needs only its Porter stemmer. Both take them only when they can (``try: import torch``).
Imported without them, spaCy and ROUGE give the same tokens, lemmas and scores
(tests/common/test_optional_imports.py), and import in a third of the CPU time: spaCy, its
pipeline and rouge-score took 1.0 s of CPU instead of 3.0 s (the project's 2-core machine).

What those libraries decide at import stays decided for the process: thinc offers no
PyTorch layers (no pipeline of ours uses one), NLTK no scikit-learn classifier. Where the
optional library is imported already (an lm-eval run of the hf model has torch), nothing
changes.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

SPACY_SPARES = ("torch",)  # thinc.compat: `import torch` when installed
NLTK_SPARES = ("sklearn", "scipy")  # nltk.classify.scikitlearn, nltk.metrics.association


class _Refuse(MetaPathFinder):
    """A finder, first on ``sys.meta_path``, that reports ``names`` (and their submodules)
    missing to one thread: the others import them as ever, and none sees a half state."""

    def __init__(self, names: frozenset[str], thread: int) -> None:
        self.names, self.thread = names, thread

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if threading.get_ident() == self.thread and fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (spared)", name=fullname)
        return None


@contextlib.contextmanager
def without(*names: str) -> Iterator[None]:
    """Inside, this thread's imports of ``names`` (not imported yet) raise ImportError, as
    if they were not installed; other threads', and any afterwards, import as ever."""
    refuse = _Refuse(frozenset(names), threading.get_ident())
    sys.meta_path.insert(0, refuse)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse)

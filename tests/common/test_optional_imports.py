"""spaCy without torch, ROUGE without scikit-learn and SciPy (issue 42): a fresh process that
loads them as CGGC's metrics do imports none of those, and gives the same tokens, lemmas
and ROUGE scores, on the shipped CGGC references, as a process that imported all three
first; and `without` refuses an import to its own thread only."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from conceptcomb.common.optional_imports import without

SPARED = ("torch", "sklearn", "scipy")
SCRIPT = """
import json, sys
{first}
from conceptcomb.cggc import metrics
from conceptcomb.cggc.data import load_dataset

texts = [item.target for item in load_dataset(None).test[:60]]
found = {{
    "tokens": [metrics.tokenize(text) for text in texts],
    "lemmas": [sorted(metrics.lemmas(text)) for text in texts],
    "rouge": [metrics.rouge(a, [b]) for a, b in zip(texts, texts[1:])],
    "has_lemmatizer": metrics._spacy()[1],
    "imported": sorted(name for name in {spared!r} if name in sys.modules),
}}
import torch, sklearn, scipy.stats  # importable as ever afterwards
print(json.dumps(found))
"""


def _run(first: str) -> dict:
    code = SCRIPT.format(first=first, spared=SPARED)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two fresh processes loading spaCy, one with torch: ~20 s
def test_spacy_and_rouge_without_the_libraries_they_spare_give_the_same_results() -> None:
    spared = _run("")
    full = _run("import torch, sklearn, scipy.stats")
    assert spared["imported"] == [] and full["imported"] == sorted(SPARED)
    assert spared["has_lemmatizer"] is True
    for key in ("tokens", "lemmas", "rouge"):
        assert spared[key] == full[key], key


def test_without_refuses_an_import_to_its_thread_only_and_only_inside() -> None:
    name = "tabnanny"  # a standard module nothing here imports
    sys.modules.pop(name, None)
    found: list[str] = []

    def other_thread() -> None:
        try:
            __import__(name)
            found.append("imported")
        except ImportError:
            found.append("refused")

    with without(name, "json"):
        assert "json" in sys.modules  # imported already: left alone
        with pytest.raises(ImportError):
            __import__(name)
        assert name not in sys.modules
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(10)
        assert found == ["imported"]  # another thread imports it as ever
    sys.modules.pop(name, None)
    assert __import__(name) is sys.modules[name]  # and so does this one, afterwards

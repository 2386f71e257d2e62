"""The NPC lemma rule's spaCy runs in a helper process: same analyses, loaded off the path.

Building a noun phrase completion task starts the helper and returns at once; the
framework's process never imports spaCy (nor, through thinc, torch); the helper's analyses
are those of this process; a helper that cannot load spaCy or stops is one clear error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conceptcomb.ccpt.data import load_items
from conceptcomb.ccpt.npc_lemma.analysis import rule_lemma, spacy_pipeline
from conceptcomb.ccpt.npc_lemma.helper_process import SpacyHelper
from conceptcomb.ccpt.tasks import NPC_EMERGENT, CcptTaskSpec
from conceptcomb.common.errors import ConfigError

SPEC = CcptTaskSpec(NPC_EMERGENT)


@pytest.mark.shared_data
def test_the_helper_gives_the_analyses_of_spacy_one_text_at_a_time(ccpt_dir: Path) -> None:
    """Every noun phrase, head and modifier of the NPC items, both tokenizers, in one batch
    (spaCy's ``pipe``) and one by one in the helper, against each text's own pipeline run."""
    items = load_items(SPEC, str(ccpt_dir))
    texts = sorted({t for item in items for t in (item.combination, item.root, item.modifier)})
    helper = SpacyHelper()
    try:
        for keep_hyphenated in (False, True):
            pairs = [(text, keep_hyphenated) for text in texts]
            batch = helper.analyse(pairs)
            assert batch == [one_by_one(text, keep_hyphenated) for text in texts]
            assert [helper.analyse([pair])[0] for pair in pairs[:50]] == batch[:50]
    finally:
        helper.close()
    assert len(texts) > 400


def one_by_one(text: str, keep_hyphenated: bool) -> tuple[tuple[str, str, str], ...]:
    """Each component called on this text's doc alone (how the rule was first written)."""
    nlp, hyphens = spacy_pipeline()
    doc = hyphens(text) if keep_hyphenated else nlp.make_doc(text)
    for name, component in nlp.pipeline:
        if name != "lemmatizer":
            doc = component(doc)
    lemmatizer = nlp.get_pipe("lemmatizer")
    return tuple(
        (t.text, t.pos_, t.lemma_ if t.lemma != 0 else rule_lemma(lemmatizer, t)) for t in doc
    )


CHECK_MODULES = """
import json, sys
from conceptcomb.ccpt.lm_eval_hooks import load_dataset
from conceptcomb.ccpt.inspect_tasks import ccpt_npc_emergent
from conceptcomb.ccpt.modifiers import analyse
from conceptcomb.ccpt.npc_lemma.helper_process import HELPER

ccpt_npc_emergent(judge="off")
docs = load_dataset("ccpt_npc_emergent", judge="off")["test"]
loaded = {name: name in sys.modules for name in ("spacy", "thinc", "torch")}
alive = HELPER._process is not None and HELPER._process.poll() is None
lemmas = [lemma for _, _, lemma in analyse("floating winged staged")]
print(json.dumps({"loaded": loaded, "alive": alive, "docs": len(docs), "lemmas": lemmas}))
"""


@pytest.mark.shared_data
def test_building_the_task_loads_spacy_in_the_helper_only(ccpt_dir: Path) -> None:
    env = {"CONCEPTCOMB_DATA_DIR": str(ccpt_dir), "HF_DATASETS_OFFLINE": "1"}
    command = [sys.executable, "-c", CHECK_MODULES]
    env = {**os.environ, **env}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == {"spacy": False, "thinc": False, "torch": False}
    assert result["alive"] and result["docs"] == 167
    # spaCy 3.7's order of the rule lemmatizer's candidates ("staged" -> "stage")
    assert result["lemmas"] == ["float", "wing", "stage"]


def _broken_spacy(folder: Path, body: str) -> Path:
    package = folder / "spacy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(body))
    return folder


def test_a_helper_without_spacy_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    """The helper's process finds a spaCy that fails to import: the rule's own message."""
    monkeypatch.setenv("PYTHONPATH", str(_broken_spacy(tmp_path, "raise ImportError('no')")))
    helper = SpacyHelper()
    with pytest.raises(ConfigError) as raised:
        helper.analyse([("a red car", False)])
    message = str(raised.value)
    assert "needs spaCy's en_core_web_sm" in message and "npc_modifier=surface" in message
    assert "\n" not in message


def test_a_helper_that_stops_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(_broken_spacy(tmp_path, "import os; os._exit(3)")))
    helper = SpacyHelper()
    with pytest.raises(ConfigError, match=r"helper process .* stopped \(exit code 3\)"):
        helper.analyse([("a red car", False)])


def test_a_helper_that_was_stopped_is_started_again() -> None:
    helper = SpacyHelper()
    try:
        first = helper.analyse([("a floating island", False)])
        assert helper._process is not None
        helper._process.kill()
        helper._process.wait()
        assert helper.analyse([("a floating island", False)]) == first
    finally:
        helper.close()
    assert helper._process is None

"""The CGGC prompt, in two layouts: the paper's Appendix C and the authors' released script.

``paper`` (default), Appendix C (first line wrapped here)::

    Please generate a natural sentence with the provided concepts and their commonsense
    reasoning graphs.
    concepts: oven, cheese, pizza
    commonsense reasoning graph: <H> pizza <R> HasA <T> cheese, <H> pizza <R> AtLocation <T> oven
    sentence:

The appendix shows one block; we put each demonstration as such a block followed by its
sentence, blocks separated by a blank line (our choice).

``script``: byte for byte what the authors' main.py and run-main.sh build (xiyan524/CGGC)::

    generate a natural sentence with the provided concepts and their commonsense reasoning graphs:
     ### concepts: c1, c2, c3
     ### graph: head - Relation - tail, head - Relation - tail,
     ### sentence: <target>; ### concepts: ...

with node URIs stripped of ``/c/en/`` only (so ``ice_cream`` keeps its underscore).

Both shuffle each graph's edges, as main.py does; ours is seeded by (seed, item id) so a
prompt is reproducible. The instruction goes first (the system message with a chat
template), each demonstration is a user turn answered by its sentence, the item comes last.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from conceptcomb.cggc.data import CggcItem, edge_from_official
from conceptcomb.common.errors import ConfigError

PAPER_INSTRUCTION = (
    "Please generate a natural sentence with the provided concepts and their commonsense "
    "reasoning graphs."
)
SCRIPT_INSTRUCTION = (
    "generate a natural sentence with the provided concepts and their commonsense reasoning graphs:"
)
MAX_NEW_TOKENS = 20  # run-main.sh: --max_seq_gen 20


@dataclass(frozen=True)
class PromptStyle:
    name: str
    description: str  # the instruction, with the separator that follows it
    target_delimiter: str  # between a block's "sentence:" and its answer
    fewshot_delimiter: str  # after each demonstration's answer
    until: tuple[str, ...]  # generation stops there (lm-eval until, Inspect stop_seqs)
    stop: tuple[str, ...]  # the sentence ends there (clean_prediction)


STYLES = {
    # A chat model may open with a line break: stop at a blank line, keep the first line.
    "paper": PromptStyle("paper", PAPER_INSTRUCTION + "\n", " ", "\n\n", ("\n\n",), ("\n",)),
    "script": PromptStyle(
        "script", SCRIPT_INSTRUCTION + "\n ", " ", "; ", ("###", "\n\n"), ("\n", "###", ";")
    ),
}


def style_named(name: str | None) -> PromptStyle:
    try:
        return STYLES[name or "paper"]
    except KeyError as err:
        raise ConfigError(f"prompt_style={name!r}: use one of {', '.join(STYLES)}.") from err


def shuffled_edges(item: CggcItem, seed: int) -> list[tuple[str, str, str, str]]:
    edges = list(item.edges)
    random.Random(f"edges|{seed}|{item.item_id}").shuffle(edges)
    return edges


def graph_text(item: CggcItem, style: PromptStyle, seed: int) -> str:
    edges = shuffled_edges(item, seed)
    if style.name == "script":
        parts = []
        for a, b, relation, direction in edges:
            head, tail = (a, b) if direction == "left" else (b, a)
            parts.append(
                f"{head.replace('/c/en/', '')} - {relation.replace('/r/', '')} - "
                f"{tail.replace('/c/en/', '')}, "
            )
        return "".join(parts)
    triples = [edge_from_official(edge) for edge in edges]
    return ", ".join(f"<H> {e.head} <R> {e.relation} <T> {e.tail}" for e in triples)


# Blocks known before they are asked for (`remember_questions`: a dataset's, read from the
# cache by `conceptcomb.cggc.docs.prime_questions`), per (style, seed), by the item object's
# id; each entry holds its item, so that the id is not reused while the entry lives. At most
# as many per (style, seed) as `rendered_question` keeps: a long-lived process that loads
# dataset after dataset (a test worker) forgets the older ones' blocks.
_REMEMBERED: dict[tuple[PromptStyle, int], dict[int, tuple[CggcItem, str]]] = {}
_REMEMBERED_MAX = 1 << 17


def remember_questions(
    style: PromptStyle, seed: int, items: Sequence[CggcItem], texts: Sequence[str]
) -> None:
    """``texts[i]`` is ``question(items[i], style, seed)``: answered without rendering."""
    known = _REMEMBERED.setdefault((style, seed), {})
    if len(known) + len(items) > _REMEMBERED_MAX:
        known.clear()
    known.update((id(item), (item, text)) for item, text in zip(items, texts, strict=True))


def question(item: CggcItem, style: PromptStyle, seed: int) -> str:
    """One block up to and including ``sentence:``, without the answer."""
    known = _REMEMBERED.get((style, seed))
    if known is not None:
        entry = known.get(id(item))
        if entry is not None and entry[0] is item:
            return entry[1]
    return rendered_question(item, style, seed)


# An item's block is wanted more than once (a sample's input and its doc's prompt, other
# items' demonstrations, the id setting's candidates that are test items too): rendered once.
# Room for every item in both styles (~38k items each): with less, a process that builds
# tasks of both styles in turn evicts every block before it is wanted again.
@lru_cache(maxsize=1 << 17)
def rendered_question(item: CggcItem, style: PromptStyle, seed: int) -> str:
    """`question`, rendered from the item's concepts and graph."""
    concepts = ", ".join(item.concepts)
    graph = graph_text(item, style, seed)
    if style.name == "script":
        return f"### concepts: {concepts}\n ### graph: {graph}\n ### sentence:"
    return f"concepts: {concepts}\ncommonsense reasoning graph: {graph}\nsentence:"


def chat_turns(
    item: CggcItem, demos: list[CggcItem], style: PromptStyle, seed: int
) -> list[tuple[str, str]]:
    """(role, text) turns: system instruction, demonstration pairs, the item."""
    turns = [("system", style.description)]
    for demo in demos:
        turns += [("user", question(demo, style, seed)), ("assistant", demo.target)]
    turns.append(("user", question(item, style, seed)))
    return turns


def plain_prompt(item: CggcItem, demos: list[CggcItem], style: PromptStyle, seed: int) -> str:
    """The single-string prompt (lm-eval without a chat template renders exactly this)."""
    text = style.description
    for demo in demos:
        text += question(demo, style, seed) + style.target_delimiter
        text += demo.target + style.fewshot_delimiter
    return text + question(item, style, seed)


def clean_prediction(reply: str, style: PromptStyle) -> str:
    """The generated sentence: the reply up to the first stop marker, trimmed."""
    text = reply.strip()
    for marker in style.stop:
        text = text.split(marker)[0] if marker != "\n" else _first_line(text)
    return text.strip()


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")

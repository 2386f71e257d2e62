"""The prompt: Appendix C's layout and the authors' released script's, byte for byte."""

from __future__ import annotations

from conceptcomb.cggc.data import CggcItem
from conceptcomb.cggc.prompts import (
    chat_turns,
    clean_prediction,
    plain_prompt,
    question,
    shuffled_edges,
    style_named,
)

PIZZA = CggcItem(
    "t-1", "t-1", ("oven", "cheese", "pizza"), "He puts a cheese pizza in an oven.",
    "AtLocation&HasA",
    (("/c/en/pizza", "/c/en/cheese", "/r/HasA", "left"),
     ("/c/en/oven", "/c/en/pizza", "/r/AtLocation", "right")),
)  # fmt: skip
DOG = CggcItem(
    "d-1", "d-1", ("dog", "tail", "wag"), "The dog is wagging his tail.", "HasA&UsedFor",
    (("/c/en/dog", "/c/en/tail", "/r/HasA", "left"),
     ("/c/en/tail", "/c/en/wag_tail", "/r/UsedFor", "left")),
)  # fmt: skip


def test_zero_shot_prompt_is_appendix_c() -> None:
    text = plain_prompt(PIZZA, [], style_named("paper"), seed=0)
    edges = ["<H> pizza <R> HasA <T> cheese", "<H> pizza <R> AtLocation <T> oven"]
    if shuffled_edges(PIZZA, 0)[0][2] != "/r/HasA":
        edges.reverse()
    assert text == (
        "Please generate a natural sentence with the provided concepts and their commonsense "
        "reasoning graphs.\n"
        "concepts: oven, cheese, pizza\n"
        f"commonsense reasoning graph: {', '.join(edges)}\n"
        "sentence:"
    )


def test_script_layout_is_the_authors_main_py() -> None:
    style = style_named("script")
    demo_edges = [
        f"{a.removeprefix('/c/en/')} - {r.removeprefix('/r/')} - {b.removeprefix('/c/en/')}, "
        for a, b, r, _ in shuffled_edges(DOG, 3)
    ]
    item_edges = []
    for a, b, r, direction in shuffled_edges(PIZZA, 3):
        head, tail = (a, b) if direction == "left" else (b, a)
        item_edges.append(f"{head[6:]} - {r[3:]} - {tail[6:]}, ")
    assert plain_prompt(PIZZA, [DOG], style, seed=3) == (
        "generate a natural sentence with the provided concepts and their commonsense "
        "reasoning graphs:\n "
        "### concepts: dog, tail, wag\n ### graph: " + "".join(demo_edges) + "\n ### sentence: "
        "The dog is wagging his tail.; "
        "### concepts: oven, cheese, pizza\n ### graph: " + "".join(item_edges) + "\n ### sentence:"
    )
    assert "wag_tail" in plain_prompt(PIZZA, [DOG], style, seed=3)  # URIs keep underscores


def test_paper_layout_with_demonstrations_and_chat_turns() -> None:
    style = style_named("paper")
    text = plain_prompt(PIZZA, [DOG], style, seed=0)
    assert text.startswith(style.description + question(DOG, style, 0) + " " + DOG.target + "\n\n")
    assert "<H> tail <R> UsedFor <T> wag tail" in text and text.endswith("sentence:")
    turns = chat_turns(PIZZA, [DOG], style, 0)
    assert [role for role, _ in turns] == ["system", "user", "assistant", "user"]
    assert turns[2][1] == DOG.target and turns[3][1] == question(PIZZA, style, 0)


def test_replies_are_cut_to_the_sentence() -> None:
    paper, script = style_named("paper"), style_named("script")
    assert clean_prediction(" The dog wags.\n\nconcepts: a, b", paper) == "The dog wags."
    assert clean_prediction("\n\nThe dog wags.\nMore", paper) == "The dog wags."
    assert clean_prediction(" A dog wags; ### concepts: x", script) == "A dog wags"
    assert clean_prediction("", paper) == ""

"""The 13 ConceptNet relations of CGGC (paper Appendix A.1, Table 9) and their templates.

Merges (Table 9): HasFirstSubevent and HasLastSubevent -> HasSubevent, InstanceOf and
MannerOf -> IsA, PartOf -> HasA. The paper only says "merge"; PartOf(wheel, car) becomes
HasA(car, wheel), i.e. head and tail swap, so that the merged triple still reads true.

Templates: the paper verbalizes (tail, UsedFor, wag) as "Tail is used for wag" and does not
print its other templates (its source, Plenz et al. 2023, keeps them in a file that is not
public). Ours follow ConceptNet's own surface texts, head first. MiniLM is uncased, so the
capital letter of the paper's example makes no difference.
"""

from __future__ import annotations

RELATIONS: tuple[str, ...] = (
    "IsA",
    "UsedFor",
    "AtLocation",
    "HasSubevent",
    "HasPrerequisite",
    "CapableOf",
    "CausesDesire",
    "Causes",
    "MotivatedByGoal",
    "HasProperty",
    "ReceivesAction",
    "HasA",
    "Desires",
)

# merged relation -> (CGGC relation, whether head and tail swap)
MERGES: dict[str, tuple[str, bool]] = {
    "HasFirstSubevent": ("HasSubevent", False),
    "HasLastSubevent": ("HasSubevent", False),
    "InstanceOf": ("IsA", False),
    "MannerOf": ("IsA", False),
    "PartOf": ("HasA", True),
}

TEMPLATES: dict[str, str] = {
    "IsA": "{head} is a {tail}",
    "UsedFor": "{head} is used for {tail}",
    "AtLocation": "{head} is located at {tail}",
    "HasSubevent": "{head} has the subevent {tail}",
    "HasPrerequisite": "{head} requires {tail}",
    "CapableOf": "{head} is capable of {tail}",
    "CausesDesire": "{head} makes you want to {tail}",
    "Causes": "{head} causes {tail}",
    "MotivatedByGoal": "{head} is motivated by {tail}",
    "HasProperty": "{head} is {tail}",
    "ReceivesAction": "{head} can be {tail}",
    "HasA": "{head} has {tail}",
    "Desires": "{head} desires {tail}",
}

_BY_LOWER = {name.lower(): name for name in (*RELATIONS, *MERGES)}


def canonical_relation(name: str) -> tuple[str, bool] | None:
    """(CGGC relation, swap head/tail) for a ConceptNet relation name or URI; None if unused.

    Accepts ``/r/PartOf``, ``PartOf`` and CN-100K's lower-case ``partof``.
    """
    bare = name.strip().removeprefix("/r/")
    known = _BY_LOWER.get(bare.lower())
    if known is None:
        return None
    return MERGES.get(known, (known, False))


def verbalize(head: str, relation: str, tail: str) -> str:
    """Template sentence of a (merged) triple, e.g. ``tail is used for wag``."""
    return TEMPLATES[relation].format(head=head, tail=tail)


def split_label(label: str) -> tuple[str, ...]:
    """The primitives of a graph label such as ``AtLocation&HasA``."""
    return tuple(part for part in label.split("&") if part)


def make_label(relations: set[str] | list[str] | tuple[str, ...]) -> str:
    """The graph label: the sorted distinct relation types joined with '&'."""
    return "&".join(sorted(set(relations)))

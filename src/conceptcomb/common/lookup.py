"""Finding one entry of a list by its name, with an error that lists the names there are."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def _name(entry: Any) -> str:
    return str(entry.name)


def find_named(
    entries: Iterable[T],
    name: str,
    missing: Callable[[str], Exception],
    key: Callable[[T], str] = _name,
) -> T:
    """The entry whose ``key`` is ``name``; else ``missing(known)`` is raised, ``known``
    being every entry's name, comma-separated, for the message."""
    listed = list(entries)
    for entry in listed:
        if key(entry) == name:
            return entry
    raise missing(", ".join(key(entry) for entry in listed))

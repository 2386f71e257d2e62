"""McRae norms (ESSLLI 2008 property generation): no published rows.

The ESSLLI 2008 task description (the task's only source) publishes no system results.
"""

from __future__ import annotations

from conceptcomb.common.tables import PublishedRow

NOTE = (
    "The ESSLLI 2008 task description (the task's only source) publishes no system results: "
    "there are no published rows to show."
)


def published() -> list[PublishedRow]:
    return []

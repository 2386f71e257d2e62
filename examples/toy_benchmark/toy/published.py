"""The paper's rows: the toy has no paper."""

from __future__ import annotations

from conceptcomb.common.tables import PublishedRow


def published() -> list[PublishedRow]:
    return []

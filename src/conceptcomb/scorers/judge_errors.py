"""What a judge's failed request means: whether a retry may fix it, whether the judge is
unusable, whether the endpoint cannot be reached. Shared by the chat judges (lm-eval's HTTP
client, `conceptcomb.scorers.api_judge`; Inspect's models, `conceptcomb.scorers.inspect_judge`).
"""

from __future__ import annotations

import errno
import socket

# Statuses no retry can fix: a refused key, an unknown model (or a wrong route).
UNUSABLE_STATUSES = (401, 403, 404)
_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH}


def http_status(err: BaseException) -> int | None:
    status = getattr(err, "status_code", None)
    return status if isinstance(status, int) else None


def unreachable_cause(err: BaseException) -> OSError | None:
    """The refused connection or unknown host behind a connection error, if that is what it
    is (a timeout or a dropped connection is not: those are transient)."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, socket.gaierror) or (
            isinstance(cause, OSError) and cause.errno in _UNREACHABLE_ERRNOS
        ):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def is_transient(err: BaseException) -> bool:
    """What a retry may fix: timeouts, dropped connections, 408/409/429 and 5xx."""
    status = http_status(err)
    if status is None:
        return unreachable_cause(err) is None
    return status in (408, 409, 429) or status >= 500

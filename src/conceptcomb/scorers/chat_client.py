"""POST to OpenAI-compatible ``/chat/completions`` endpoints, with the openai SDK's retries.

Why not the ``openai`` package: at hundreds of requests per second its request path (option
models copied per attempt, header merging, URL parsing, an httpx layer over aiohttp) costs
about 0.8 ms of CPU per request, four times aiohttp's own, and that CPU on the judge's one
event loop is what kept throughput below concurrency / latency
(``benchmarks/judge_throughput.py``). Here a request is one aiohttp call, and the retry
policy is the SDK's (``openai._base_client``), so faults are handled as before:

* retried: timeouts, connection errors, HTTP 408, 409, 429 and 5xx; a ``x-should-retry:
  true|false`` header is obeyed; a ``Retry-After`` above two minutes is not waited for;
* the wait: ``Retry-After-ms`` or ``Retry-After`` (seconds or an HTTP date) when it is in
  (0, 120] s, else 0.5 s doubling up to 8 s, minus up to 25% jitter;
* timeouts: ``judge_timeout`` to connect and between bytes read, as the SDK's aiohttp
  transport maps a float timeout;
* proxies: ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` are honoured as by the SDK, read
  once per endpoint (aiohttp's ``trust_env`` reads them again on every request);
* what still fails raises an `APIError` named as the SDK names it (``AuthenticationError``,
  ``RateLimitError``, ``InternalServerError``, ``APIConnectionError``, ``APITimeoutError``
  ...), with its message (``Error code: 401 - {...}``) and the endpoint it came from.

Several endpoints (replicas of one judge) share the load: each request and each retry goes
to the endpoint with the fewest requests in flight, below its own limit, and a retry avoids
the endpoint that just failed when another one has room.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import random
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

# The openai SDK's constants (openai/_constants.py).
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER_DELAY = 120.0


class APIError(Exception):
    """The endpoint's refusal, or why it could not be reached, after the retries."""

    status_code: int | None = None

    def __init__(self, message: str, endpoint: str = "") -> None:
        super().__init__(message)
        self.endpoint = endpoint  # the base URL (without credentials) that answered


class APIStatusError(APIError):
    def __init__(self, status_code: int, body: bytes, endpoint: str = "") -> None:
        try:
            shown: Any = json.loads(body)
        except ValueError:
            shown = body.decode("utf-8", "replace")
        super().__init__(f"Error code: {status_code} - {shown}", endpoint)
        self.status_code = status_code


class BadRequestError(APIStatusError): ...


class AuthenticationError(APIStatusError): ...


class PermissionDeniedError(APIStatusError): ...


class NotFoundError(APIStatusError): ...


class ConflictError(APIStatusError): ...


class UnprocessableEntityError(APIStatusError): ...


class RateLimitError(APIStatusError): ...


class InternalServerError(APIStatusError): ...


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


class APIConnectionError(APIError):
    def __init__(self, message: str = "Connection error.", endpoint: str = "") -> None:
        super().__init__(message, endpoint)


class APITimeoutError(APIConnectionError):
    def __init__(self, endpoint: str = "") -> None:
        super().__init__("Request timed out.", endpoint)


def status_error(status: int, body: bytes, endpoint: str) -> APIStatusError:
    kind = _STATUS_ERRORS.get(status, InternalServerError if status >= 500 else APIStatusError)
    return kind(status, body, endpoint)


@dataclass(eq=False)
class Endpoint:
    shown: str  # the base URL as logs and messages show it
    url: str  # its /chat/completions
    proxy: str | None = None  # from HTTP(S)_PROXY unless NO_PROXY names the host
    in_flight: int = 0


def environment_proxy(url: str) -> str | None:
    """The proxy the environment sets for ``url`` (``*_PROXY``, minus ``NO_PROXY``)."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy is None or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


class ChatClient:
    """One aiohttp session (opened in the running event loop on first use) for all endpoints.

    ``per_endpoint`` is the most requests one endpoint gets at once; the caller keeps the
    total at ``per_endpoint * len(endpoints)`` at most (`RatingSession` does).
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, str]],  # (base URL, as shown)
        api_key: str,
        timeout: float,
        max_retries: int,
        per_endpoint: int,
    ) -> None:
        self.endpoints = [
            Endpoint(shown, f"{url.rstrip('/')}/chat/completions", environment_proxy(url))
            for url, shown in endpoints
        ]
        self.max_retries = max_retries
        self.per_endpoint = per_endpoint
        self.http_requests = 0  # every attempt on the wire, retries included
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        # Sent by the openai SDK when set; OpenAI bills the organisation/project they name.
        for variable, header in (("OPENAI_ORG_ID", "OpenAI-Organization"),
                                 ("OPENAI_PROJECT_ID", "OpenAI-Project")):  # fmt: skip
            if os.environ.get(variable):
                self._headers[header] = os.environ[variable]
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=timeout, sock_read=timeout
        )
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        # No connection limit of its own: the caller bounds the requests in flight.
        connector = aiohttp.TCPConnector(limit=0)
        self._session = aiohttp.ClientSession(
            connector=connector, headers=self._headers, timeout=self._timeout
        )
        return self._session

    def pick(self, avoid: Endpoint | None = None) -> Endpoint:
        """The endpoint with the fewest requests in flight among those below the limit,
        other than ``avoid`` (the one that just failed) when another has room."""
        if len(self.endpoints) == 1:
            return self.endpoints[0]
        room = [e for e in self.endpoints if e.in_flight < self.per_endpoint] or self.endpoints
        others = [e for e in room if e is not avoid] or room
        return min(others, key=lambda endpoint: endpoint.in_flight)

    async def post(
        self, body: bytes, endpoint: Endpoint | None = None, retries: int | None = None
    ) -> Any:
        """The JSON of a 2xx answer to ``body`` (raises ValueError when it is not JSON).

        ``endpoint`` pins the request to one endpoint (the preflight checks each);
        ``retries`` overrides the client's retries. Raises `APIError` when retries are spent
        or the answer cannot be retried (401, 403, 404, ...).
        """
        session = self._session or self._open()
        retries = self.max_retries if retries is None else retries
        target: Endpoint | None = None
        for attempt in range(retries + 1):
            target = endpoint or self.pick(avoid=target)
            target.in_flight += 1
            self.http_requests += 1
            headers: Mapping[str, str] | None = None
            try:
                async with session.post(target.url, data=body, proxy=target.proxy) as response:
                    raw = await response.read()
                    status, headers = response.status, response.headers
            except TimeoutError as err:  # aiohttp's connect and read timeouts
                error: APIError = APITimeoutError(target.shown)
                cause: BaseException | None = err
            except aiohttp.ClientError as err:  # refused, reset, dropped, broken HTTP
                error, cause = APIConnectionError(endpoint=target.shown), err
            else:
                if status < 400:
                    return json.loads(raw)  # bad JSON or bytes: ValueError, for the caller
                error, cause = status_error(status, raw, target.shown), None
                if not should_retry(status, headers):
                    raise error
            finally:
                target.in_flight -= 1
            if attempt == retries:
                raise error from cause
            await asyncio.sleep(retry_delay(attempt, headers))
        raise AssertionError("unreachable")  # the loop returns or raises

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """The openai SDK's rule for an error status."""
    retry_after = retry_after_seconds(headers)
    if retry_after is not None and retry_after > MAX_RETRY_AFTER_DELAY:
        return False
    verdict = headers.get("x-should-retry")
    if verdict in ("true", "false"):
        return verdict == "true"
    return status in (408, 409, 429) or status >= 500


def retry_delay(attempt: int, headers: Mapping[str, str] | None) -> float:
    """Seconds before retry ``attempt + 1``: the server's Retry-After when sensible, else
    exponential backoff with jitter (the openai SDK's schedule)."""
    retry_after = retry_after_seconds(headers) if headers is not None else None
    if retry_after is not None and 0 < retry_after <= MAX_RETRY_AFTER_DELAY:
        return retry_after
    delay = min(INITIAL_RETRY_DELAY * 2.0 ** min(attempt, 1000), MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random.random())


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``Retry-After-ms``, else ``Retry-After`` in seconds or as an HTTP date; None if absent."""
    for header, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        return delay / divisor if math.isfinite(delay) else None
    try:
        when = email.utils.parsedate_tz(headers.get("retry-after") or "")
        return None if when is None else email.utils.mktime_tz(when) - time.time()
    except (TypeError, ValueError, OverflowError):
        return None

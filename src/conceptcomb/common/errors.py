"""Errors that tell the user what went wrong and what to do about it."""

from __future__ import annotations

import os
import sys
from types import TracebackType


class ConceptcombError(Exception):
    """Base class: the message is written for the person running the benchmark."""

    @property
    def message(self) -> str:
        """The one line, as Inspect records an error it catches (``message``, else repr)."""
        return str(self)


class DataUnavailableError(ConceptcombError):
    """A benchmark's files are neither in a named folder, nor cached, nor downloadable."""


class DataFormatError(ConceptcombError):
    """A data file is malformed: the message names the file and the field."""


class ChecksumError(ConceptcombError):
    """A data file differs from the pinned release."""


class ConfigError(ConceptcombError):
    """An option is missing or has a value we cannot use: the message names the option."""


class JudgeError(ConceptcombError):
    """The judge cannot be used (unreachable, refused key, unknown model) or failed on every
    question: the message names the endpoint and model and says what to do."""


class Interrupted(ConceptcombError):
    """Ctrl-C during work of ours, which says what it was doing ("interrupted while ...").
    An error, not a KeyboardInterrupt: the frameworks (inside an event loop, under click)
    then stop as for any error of ours, with one line; the exit status stays Ctrl-C's."""


class UnknownTaskError(ConfigError, KeyError):
    """A task name a benchmark does not have (a KeyError too: a lookup that failed)."""

    __str__ = Exception.__str__  # the message as written, not KeyError's quoted repr


def _ours(error: BaseException | None) -> ConceptcombError | None:
    """Our error, raised as such or inside a framework's exception group."""
    if isinstance(error, ConceptcombError):
        return error
    inner_errors = getattr(error, "exceptions", None)  # an exception group (3.11+, anyio)
    if isinstance(inner_errors, tuple | list):
        for inner in inner_errors:
            found = _ours(inner)
            if found is not None:
                return found
    return None


def install_excepthook() -> None:
    """Print an uncaught error of ours as one line, without the traceback above it.

    Our messages are written for the person running a benchmark (what is wrong, what to do);
    inside ``lm_eval`` or ``inspect eval`` they would otherwise end hundreds of lines of
    framework traceback. Other exceptions keep the previous hook. Set CONCEPTCOMB_TRACEBACK=1
    to see the traceback anyway.
    """
    previous = sys.excepthook
    if getattr(previous, "conceptcomb", False) or os.environ.get("CONCEPTCOMB_TRACEBACK"):
        return

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        ours = _ours(error)
        if ours is None:
            previous(kind, error, trace)
            return
        if isinstance(ours, Interrupted):
            print(f"conceptcomb: {ours}", file=sys.stderr, flush=True)
            sys.exit(130)  # a hook's SystemExit sets the exit status (as Ctrl-C's)
        print(f"conceptcomb: error: {ours}", file=sys.stderr, flush=True)

    hook.conceptcomb = True  # type: ignore[attr-defined]
    sys.excepthook = hook


def one_of(option: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; else a ConfigError naming the option."""
    if value not in choices:
        raise ConfigError(f"{option}={value!r}: use one of {', '.join(choices)}.")
    return value

"""Errors that tell the user what went wrong and what to do about it."""

from __future__ import annotations


class ConceptcombError(Exception):
    """Base class: the message is written for the person running the benchmark."""


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

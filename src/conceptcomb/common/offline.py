"""Make Inspect usable without internet: tiktoken's o200k_base file, rebuilt locally.

Inspect counts tokens with tiktoken's ``o200k_base`` (its ``mockllm`` model always does),
and tiktoken downloads that file on first use. Where it is not cached yet we rebuild it
from the ``quicktok-v1`` package, which ships the same vocabulary, and store it where
tiktoken looks, but only if it matches, byte for byte, the sha256 that tiktoken itself
expects: the result is exactly the file tiktoken would have downloaded.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import tempfile
import uuid
from pathlib import Path

log = logging.getLogger("conceptcomb")

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_RANKS = 199998  # ordinary tokens; 199999 and 200018 are special tokens


def tiktoken_cache_path(url: str = O200K_URL) -> Path | None:
    """Where tiktoken caches ``url`` (mirrors tiktoken.load.read_file_cached)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            folder = os.environ[variable]
            break
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if folder == "":  # caching disabled
        return None
    return Path(folder) / hashlib.sha1(url.encode()).hexdigest()


def rebuild_o200k_base() -> bytes | None:
    """o200k_base.tiktoken from quicktok's vocabulary, or None if it cannot be made exactly."""
    try:
        import quicktok
    except ImportError:
        return None
    encoding = quicktok.get_encoding("o200k_base")
    lines = [
        base64.b64encode(encoding.decode_single_token_bytes(rank)) + b" " + str(rank).encode()
        for rank in range(O200K_RANKS)
    ]
    data = b"\n".join(lines) + b"\n"
    return data if hashlib.sha256(data).hexdigest() == O200K_SHA256 else None


def prime_tiktoken_cache() -> None:
    """Put o200k_base into tiktoken's cache if it is missing. Never raises."""
    try:
        path = tiktoken_cache_path()
        if path is None or path.is_file():
            return
        data = rebuild_o200k_base()
        if data is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
        scratch.write_bytes(data)
        os.replace(scratch, path)
        log.debug("tiktoken o200k_base cached offline at %s", path)
    except Exception as err:  # an optimisation for offline use: never break a run
        log.debug("could not prime tiktoken's cache: %s", err)

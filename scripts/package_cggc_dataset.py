"""Put a full `conceptcomb cggc build` into the package (maintainers only).

    conceptcomb cggc build --out BUILD            # seed 0, CommonGen v1.1 train+valid, CN-100K
    python scripts/package_cggc_dataset.py BUILD

Writes into ``src/conceptcomb/cggc/packaged_data/``: the pool and test files gzipped
reproducibly (no name, mtime 0), ``SHA256SUMS`` (sha256 of the uncompressed files, the
dataset's identity) and ``build_info.json`` with input paths reduced to their last two parts
(no machine's folders in the package). Prints the manifest's sha256, which goes into
``conceptcomb.cggc.data.PACKAGED_SHA256``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path

from conceptcomb.cggc.data import PACKAGED_DIR, POOL_FILE, TEST_FILE, manifest


def gzip_reproducibly(content: bytes, target: Path) -> None:
    with target.open("wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as out:
        out.write(content)


def portable_build_info(info: dict) -> dict:
    inputs = {"/".join(Path(path).parts[-2:]): value for path, value in info["inputs"].items()}
    return {**info, "inputs": inputs}


def package(build: Path, out: Path = PACKAGED_DIR) -> str:
    digests = {}
    for stem in (POOL_FILE, TEST_FILE):
        content = (build / f"{stem}.jsonl").read_bytes()
        digests[f"{stem}.jsonl"] = hashlib.sha256(content).hexdigest()
        gzip_reproducibly(content, out / f"{stem}.jsonl.gz")
    listed = manifest(digests)
    (out / "SHA256SUMS").write_text(listed)
    info = json.loads((build / "build_info.json").read_text())
    (out / "build_info.json").write_text(json.dumps(portable_build_info(info), indent=2) + "\n")
    return hashlib.sha256(listed.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="folder written by `conceptcomb cggc build`")
    args = parser.parse_args()
    sha256 = package(args.build)
    print(f"wrote {PACKAGED_DIR}; set PACKAGED_SHA256 = {sha256!r} in conceptcomb/cggc/data.py")


if __name__ == "__main__":
    main()

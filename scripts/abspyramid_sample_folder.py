"""An AbsPyramid data folder in the hub's layout from what this machine has: the hand-made
fixture files of ``tests/fixtures/abspyramid`` with the 30 real detection records of
``../shared/data/abspyramid/sample_detection.jsonl`` (the authors' exemplar lists) first in
each detection test file, as the tests build it. A pipeline check's data, not the
benchmark (its files are on the Hugging Face Hub only).

    python scripts/abspyramid_sample_folder.py --out out/abspyramid-data
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "abspyramid"
SAMPLE = REPO.parent / "shared" / "data" / "abspyramid" / "sample_detection.jsonl"
DETECTION = "AbsPyramid_Detection"
FIELDS = ("event", "concept", "label", "type")  # the hub's schema (no 'instance')


def real_records(path: Path = SAMPLE) -> list[dict]:
    """The real detection records, as the hub stores them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{key: json.loads(line)[key] for key in FIELDS} for line in lines if line.strip()]


def _prepend(path: Path, records: list[dict]) -> None:
    lines = "".join(json.dumps(record) + "\n" for record in records)
    path.write_text(lines + path.read_text(encoding="utf-8"), encoding="utf-8")


def data_folder(folder: Path, sample: Path = SAMPLE) -> Path:
    """``folder``: the fixture files, the real detection records first in each test file."""
    shutil.copytree(FIXTURES, folder)
    real = real_records(sample)
    for kind in ("noun", "verb", "event"):
        records = [r for r in real if r["type"] == kind]
        _prepend(folder / DETECTION / f"{kind}_dataset" / "test.json", records)
    _prepend(folder / DETECTION / "merged_dataset" / "test.json", real)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="a folder not there yet")
    parser.add_argument("--sample", type=Path, default=SAMPLE, help="the real records")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"--out {args.out} exists: name a new folder")
    print(data_folder(args.out, args.sample))


if __name__ == "__main__":
    main()

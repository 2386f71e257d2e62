"""Pin a hub dataset like the others: its full commit and every file's sha256 (maintainers).

    python scripts/pin_hub_dataset.py abspyramid                 # from the hub (network)
    python scripts/pin_hub_dataset.py abspyramid --folder CLONE  # from a clone of the hub repo

From the hub, huggingface_hub resolves the commit the pins file names (a short hash is
enough: ``HfApi().dataset_info(repo, revision=...).sha``) and downloads every file at the
full commit. From a folder: a ``git clone`` of the hub repository with its LFS files pulled
(``git lfs pull``), checked out at the pinned commit; ``git rev-parse HEAD`` gives the full
commit, which must begin with the pinned one. Either way the script then writes the pins
file the benchmark reads (`conceptcomb.common.hubfiles.HubPins`; ``--pins`` another file)
with the full commit and each file's sha256, and prints them. Nothing is guessed: a file
that is missing, or an LFS pointer instead of the file, stops it with one line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from conceptcomb.common.datafiles import sha256_of
from conceptcomb.common.errors import ConceptcombError
from conceptcomb.common.hubfiles import HubDataset, HubPins
from conceptcomb.leaderboard.bundles.datasets import hub_dataset

LFS_POINTER = b"version https://git-lfs.github.com/spec/"


class PinError(Exception):
    """What stops the pinning, in one line."""


def from_folder(dataset: HubDataset, folder: Path) -> tuple[str, dict[str, Path]]:
    """The clone's full commit (it must be the pinned one) and its files."""
    done = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise PinError(f"{folder} is not a git clone of {dataset.repo_id}: {done.stderr.strip()}")
    commit = done.stdout.strip()
    if not commit.startswith(dataset.revision):
        raise PinError(
            f"{folder} is at commit {commit}, the pins name {dataset.revision}: "
            f"git -C {folder} checkout {dataset.revision}"
        )
    return commit, {name: folder / name for name in dataset.files}


def from_hub(dataset: HubDataset, cache: Path) -> tuple[str, dict[str, Path]]:
    """The full commit the pinned one names, and every file downloaded at it."""
    from huggingface_hub import HfApi, hf_hub_download

    info = HfApi().dataset_info(dataset.repo_id, revision=dataset.revision)
    commit = str(info.sha)
    files = {
        name: Path(hf_hub_download(dataset.repo_id, name, repo_type=dataset.repo_type,
                                   revision=commit, cache_dir=cache))
        for name in dataset.files
    }  # fmt: skip
    return commit, files


def digests(files: dict[str, Path]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, path in sorted(files.items()):
        if not path.is_file():
            raise PinError(f"{path}: missing; every file of the dataset is pinned")
        with path.open("rb") as handle:
            if handle.read(len(LFS_POINTER)) == LFS_POINTER:
                raise PinError(f"{path} is a Git LFS pointer, not the file: run git lfs pull")
        found[name] = sha256_of(path)
    return found


def write_pins(dataset: HubDataset, commit: str, sha256: dict[str, str], pins: Path) -> None:
    if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
        raise PinError(f"{commit!r} is not a full 40-hex commit")
    record = {"repo_id": dataset.repo_id, "revision": commit, "sha256": sha256}
    pins.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", help="a benchmark whose data is on the hub (abspyramid)")
    parser.add_argument("--folder", type=Path, help="a git clone of the hub repository")
    parser.add_argument("--pins", type=Path, help="the pins file to write (default: its own)")
    args = parser.parse_args(argv)
    try:
        dataset = hub_dataset(args.benchmark)
        if dataset is None:
            raise PinError(f"{args.benchmark} has no hub dataset (its files are pinned in data.py)")
        pins = args.pins or dataset.pins
        if pins is None:
            raise PinError(f"{dataset.key}'s pins are not read from a file: pass --pins")
        if args.pins and args.pins.is_file():  # the commit to pin is the one that file names
            dataset = HubPins(args.pins).dataset(dataset.key, dataset.title, dataset.files)
        with tempfile.TemporaryDirectory() as cache:
            commit, files = (
                from_folder(dataset, args.folder) if args.folder else from_hub(dataset, Path(cache))
            )
            sha256 = digests(files)
        write_pins(dataset, commit, sha256, pins)
    except (PinError, ConceptcombError) as err:
        print(f"pin_hub_dataset: {err}", file=sys.stderr)
        return 1
    print(f"{dataset.repo_id} at {commit}: {len(sha256)} files pinned in {pins}")
    for name, digest in sha256.items():
        print(f"  {digest}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

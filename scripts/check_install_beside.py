"""Installing conceptcomb beside what users already have downgrades nothing of theirs, except
what lm-eval or Inspect themselves cap (issue 52).

Makes a venv holding the newest releases of boto3, fsspec, datasets, transformers and
huggingface-hub (PyPI), then asks pip what installing this checkout would do (`pip install
--dry-run --report`, as a user would install: no lock), for `.` and `.[all]`; and the same in
a fresh venv; and whether `.` resolves beside boto3 >= 1.44 (uv's resolver: pip takes a
quarter of an hour to prove it cannot). Prints each planned downgrade with the requirement
that caps it and the chain from conceptcomb to that requirement's owner; exits 1 when a
downgrade is not owned by a framework (lm-eval, Inspect) or when pip cannot resolve. Needs
PyPI; about 2-4 minutes.

    python scripts/check_install_beside.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from collections import deque
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CURRENT = ["boto3>=1.44.5", "fsspec", "datasets", "transformers", "huggingface-hub"]
FRAMEWORKS = {"lm-eval", "inspect-ai"}
TARGETS = (".", ".[all]")
UV_VERSION = "0.13.9"  # as scripts/refresh_lock.sh


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


def make_venv(folder: Path, packages: list[str]) -> Path:
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    done = pip(python, "install", "--quiet", "--upgrade", "pip", *packages)
    if done.returncode != 0:
        sys.exit(f"could not install {packages}: {done.stderr.strip()[-2000:]}")
    return python


def installed(python: Path) -> dict[str, str]:
    listed = json.loads(pip(python, "list", "--format", "json").stdout)
    return {canonicalize_name(item["name"]): item["version"] for item in listed}


def plan(python: Path, target: str, extra: list[str], report: Path) -> dict:
    done = pip(python, "install", "--dry-run", "--quiet", "--report", str(report), target, *extra)
    if done.returncode != 0:
        sys.exit(f"pip cannot install {target} {' '.join(extra)}: {done.stderr.strip()[-3000:]}")
    return json.loads(report.read_text(encoding="utf-8"))


def requirements_of(metadata: dict) -> list[Requirement]:
    found = []
    for text in metadata.get("requires_dist") or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or marker.evaluate({"extra": "all"}) or marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


def graph(report: dict) -> dict[str, list[Requirement]]:
    return {
        canonicalize_name(item["metadata"]["name"]): requirements_of(item["metadata"])
        for item in report["install"]
    }


def chain(edges: dict[str, list[Requirement]], owner: str) -> list[str]:
    """The shortest chain of requirements from conceptcomb to ``owner``."""
    parents: dict[str, str] = {"conceptcomb": ""}
    queue = deque(["conceptcomb"])
    while queue:
        name = queue.popleft()
        if name == owner:
            path = [name]
            while parents[path[-1]]:
                path.append(parents[path[-1]])
            return path[::-1]
        for requirement in edges.get(name, []):
            child = canonicalize_name(requirement.name)
            if child not in parents:
                parents[child] = name
                queue.append(child)
    return [owner]


def downgrades(before: dict[str, str], report: dict) -> list[tuple[str, str, str, list[str]]]:
    """(name, had, planned, the caps that exclude what it had, each with its chain from
    conceptcomb) per downgrade. A package with no cap of its own follows another's (boto3
    follows botocore, which aiobotocore caps)."""
    edges = graph(report)
    found = []
    for item in report["install"]:
        name = canonicalize_name(item["metadata"]["name"])
        planned = item["metadata"]["version"]
        if name not in before or Version(planned) >= Version(before[name]):
            continue
        caps = [
            f"{owner} needs {requirement} ({' -> '.join(chain(edges, owner))})"
            for owner, requirements in edges.items()
            for requirement in requirements
            if canonicalize_name(requirement.name) == name
            and not requirement.specifier.contains(before[name], prereleases=True)
        ]
        found.append((name, before[name], planned, caps or ["no cap of its own: follows another"]))
    return found


def framework_owned(python: Path, before: dict[str, str], report: dict, work: Path) -> dict:
    """name -> the framework whose own install (at the version planned for us) makes the same
    downgrade: a cap that lm-eval or Inspect holds, which no metadata of ours can lift."""
    planned = {
        canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
        for i in report["install"]
    }
    owned: dict[str, str] = {}
    for framework in sorted(FRAMEWORKS & planned.keys()):
        alone = plan(python, f"{framework}=={planned[framework]}", [], work / "alone.json")
        for name, *_ in downgrades(before, alone):
            owned.setdefault(name, f"{framework}=={planned[framework]}")
    return owned


def uv_resolves(work: Path, requirements: list[str]) -> bool:
    """Whether uv's resolver finds versions for ``requirements`` (Python 3.11, PyPI). For the
    impossible cases: pip proves an impossibility by backtracking through every boto3 and
    aiobotocore release (over 15 minutes here); uv's resolver says it in seconds."""
    tools = work / "uv"
    if not (tools / "bin" / "uv").exists():
        pip(Path(sys.executable), "install", "--quiet", "--target", str(tools), f"uv=={UV_VERSION}")
    wanted = work / "wanted.in"
    wanted.write_text("\n".join(requirements) + "\n", encoding="utf-8")
    command = [str(tools / "bin" / "uv"), "pip", "compile", str(wanted), "--quiet",
               "--python-version", "3.11", "--index-url", "https://pypi.org/simple",
               "-o", str(work / "resolved.txt")]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True).returncode == 0


def beside_a_current_boto3(work: Path) -> bool:
    """`pip install . "boto3>=1.44"`: fine when it resolves, or when a framework alone cannot
    be installed beside that boto3 either (its cap, not ours)."""
    extra = "boto3>=1.44"
    if uv_resolves(work, [f"conceptcomb @ {ROOT.as_uri()}", extra]):
        print(f"conceptcomb beside {extra}: resolves")
        return True
    alone = [name for name in sorted(FRAMEWORKS) if not uv_resolves(work, [name, extra])]
    verdict = f"as for {', '.join(alone)} alone" if alone else "NOT ALLOWED: ours"
    print(f"conceptcomb beside {extra}: impossible; {verdict}")
    return bool(alone)


def check(label: str, python: Path, work: Path) -> bool:
    before = installed(python)
    watched = {canonicalize_name(Requirement(c).name) for c in CURRENT}
    shown = ", ".join(f"{n} {before[n]}" for n in sorted(watched & before.keys()))
    print(f"{label}: {shown or 'nothing but pip'}")
    fine = True
    for target in TARGETS:
        report = plan(python, target, [], work / "report.json")
        found = downgrades(before, report)
        plain = ", ".join(sorted(
            f"{canonicalize_name(i['metadata']['name'])} {i['metadata']['version']}"
            for i in report["install"] if canonicalize_name(i["metadata"]["name"]) in watched
        ))  # fmt: skip
        print(f"  pip install {target}: {len(report['install'])} to install"
              f" ({plain or 'none of the watched'}); {len(found)} downgrade(s)")  # fmt: skip
        owned = framework_owned(python, before, report, work) if found else {}
        for name, had, planned, caps in found:
            owner = owned.get(name)
            fine &= owner is not None
            verdict = f"as `pip install {owner}` alone does" if owner else "NOT ALLOWED: ours"
            print(f"    {name} {had} -> {planned}, {verdict}: {'; '.join(caps)}")
    return fine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress, in CI's log too
    with tempfile.TemporaryDirectory(prefix="beside-") as folder:
        work = Path(folder)
        fine = check("newest releases", make_venv(work / "current", CURRENT), work)
        fine &= check("fresh venv", make_venv(work / "fresh", []), work)
        fine &= beside_a_current_boto3(work)
    print("no downgrade but the frameworks' own caps" if fine else "FAILED: see NOT ALLOWED above")
    return 0 if fine else 1


if __name__ == "__main__":
    sys.exit(main())

"""Where the suite's time goes, from a JUnit XML report, as markdown (docs/layout.md's table).

    python -m pytest --junitxml=run.xml ...
    python scripts/ci_durations.py run.xml [--top 25]

Prints the slowest tests (setup and teardown included, as pytest's ``--durations`` counts
them once per test here) and the time per test file, both in seconds.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> list[tuple[str, str, float, str]]:
    """(file, test name, seconds, outcome) per test case of the report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "")
        file = module.replace(".", "/") + ".py" if module else "?"
        outcome = "passed"
        for child in case:
            if child.tag in {"failure", "error", "skipped"}:
                outcome = child.tag
        cases.append((file, case.get("name", "?"), float(case.get("time") or 0.0), outcome))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a JUnit XML file (pytest --junitxml)")
    parser.add_argument("--top", type=int, default=25, help="how many tests (default 25)")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"ci_durations: {args.report}: no such file (make one: pytest --junitxml=FILE)",
              file=sys.stderr)  # fmt: skip
        return 2
    cases = read(args.report)
    total = sum(seconds for _, _, seconds, _ in cases)
    print(f"{len(cases)} tests, {total:,.0f} s of test time (both workers together)\n")
    print("| test | seconds |\n|---|---|")
    for file, name, seconds, outcome in sorted(cases, key=lambda c: -c[2])[: args.top]:
        mark = "" if outcome == "passed" else f" ({outcome})"
        print(f"| `{file}::{name}`{mark} | {seconds:.0f} |")
    per_file: dict[str, float] = defaultdict(float)
    for file, _, seconds, _ in cases:
        per_file[file] += seconds
    print("\n| test file | seconds |\n|---|---|")
    for file, seconds in sorted(per_file.items(), key=lambda item: -item[1])[: args.top]:
        print(f"| `{file}` | {seconds:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

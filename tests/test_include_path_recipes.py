"""The benchmarks' recipes name no task twice (issue 54): ``--include_path "$(conceptcomb
tasks-path)"`` on a regular install, whose lm-eval holds our YAML already, printed one
"overrides existing task" warning per task (96). The recipes are a regular install's; the
prose says what an editable install adds (README.md, docs/running.md)."""

from __future__ import annotations

import re

from tests.conftest import REPO

TWICE = '--include_path "$(conceptcomb tasks-path)"'


def test_no_recipe_names_our_tasks_again() -> None:
    """No command block of a README or doc passes the include path itself (the prose may
    say when to: an editable install)."""
    pages = [*(REPO / "src" / "conceptcomb").glob("*/README.md"), REPO / "README.md"]
    for page in [*pages, *(REPO / "docs").glob("*.md")]:
        for block in re.findall(
            r"^```bash\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S
        ):
            assert TWICE not in block, f"{page}: {block}"

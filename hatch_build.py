"""Wheel build hook: copy each registered benchmark's ``task_yaml/`` under lm-eval's tasks.

lm-eval 0.4.13 finds task packages only under its own ``lm_eval/tasks/`` folder, so the
wheel puts each benchmark's YAML at ``lm_eval/tasks/conceptcomb/<benchmark>/``. The
benchmarks are read from the registry (`conceptcomb.benchmarks.REGISTRY`) without
importing the package, which the isolated build environment cannot do.

An editable install gets no copy: it would be the YAML of the day it was installed, and
the checkout's own (``--include_path "$(conceptcomb tasks-path)"``, what our commands pass
there) would then define every task a second time, lm-eval warning "overrides existing
task" for each, or a bare ``lm_eval`` would run the stale copy.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = Path("src") / "conceptcomb"


def registered_benchmarks(root: Path) -> list[str]:
    """The folder names of `REGISTRY` ("conceptcomb.ccpt.benchmark" -> "ccpt")."""
    tree = ast.parse((root / PACKAGE / "benchmarks.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "REGISTRY" and node.value is not None:
            modules = ast.literal_eval(node.value)
            return [module.split(".")[1] for module in modules]
    raise RuntimeError("src/conceptcomb/benchmarks.py: no REGISTRY tuple found")


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        for name in registered_benchmarks(root):
            folder = PACKAGE / name / "task_yaml"
            if (root / folder).is_dir():
                build_data["force_include"][str(folder)] = f"lm_eval/tasks/conceptcomb/{name}"

"""Where lm-eval finds this package's YAML tasks (``--include_path`` or its own copy).

Here, in the lowest layer, so that everything that starts lm-eval (``conceptcomb
tasks-path``, the demo, tests and benchmarks) asks one place without importing the
``conceptcomb`` command.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # conceptcomb/


def tasks_path() -> Path:
    """Folder holding every YAML task of this package (for ``lm_eval --include_path``)."""
    return PACKAGE_DIR


def lm_eval_has_our_tasks() -> bool:
    """True after a regular (non-editable) install, which copies our YAML into lm-eval.

    An editable install copies nothing (hatch_build.py): the checkout's YAML is used. One
    made by an older conceptcomb left a copy from install time, stale as the checkout
    changes: there too (the package is not beside lm-eval) the checkout's YAML is used.
    """
    import lm_eval  # here, not at the top: commands that never run lm-eval start faster

    lm_eval_dir = Path(lm_eval.__file__).resolve().parent
    installed_beside = PACKAGE_DIR.parent == lm_eval_dir.parent
    return installed_beside and (lm_eval_dir / "tasks" / "conceptcomb").is_dir()


def include_path_args() -> list[str]:
    """``--include_path`` for an editable install (a regular one puts our YAML in lm-eval)."""
    return [] if lm_eval_has_our_tasks() else ["--include_path", str(tasks_path())]

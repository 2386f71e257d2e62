"""conceptcomb: concept benchmarks as lm-evaluation-harness and Inspect tasks.

Layout: one folder per benchmark (``ccpt/``: data, prompts, metrics, scoring, the Inspect
tasks, the lm-eval hooks and their ``task_yaml/``); ``scorers/`` holds the judges shared by
benchmarks; ``common/`` the pinned-data loader and answer parsing.
"""

from conceptcomb.common.errors import install_excepthook

__version__ = "0.1.0"

# Under lm_eval and inspect an error of ours (bad option, missing data) is one line.
install_excepthook()

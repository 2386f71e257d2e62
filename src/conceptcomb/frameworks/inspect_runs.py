"""A task of ours whose model cannot start says so (issue 54).

Inspect starts a local model's server when the first sample generates (its ``vllm/``
provider runs ``vllm serve`` from PATH); when that fails every sample fails, the run ends
"Task interrupted (no samples completed)" and ``inspect eval`` exits 0 (by design: a task's
error during its run is in its log, `docs/running.md`). Two answers here:

- `check_model_server`, when a task of ours is built inside an eval (before any sample):
  ``--model vllm/...`` with no server given (``--model-base-url``, ``-M port``,
  ``VLLM_BASE_URL``) and no ``vllm`` command on PATH is refused in one line, exit 1.
- `NoSamplesReport`, a hook: a task of ours that ended with no sample completed prints one
  line naming the error that stopped it, whatever it was.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.model import get_model

from conceptcomb.common.errors import ConfigError
from conceptcomb.common.inspect_internals import in_eval, server_url_given

# The command an Inspect provider starts its server with, from PATH, where it starts one.
SERVER_COMMANDS = {"vllm": "vllm"}
# The model arguments (-M) and variables that name a running server instead.
SERVER_GIVEN = {"vllm": (("base_url", "port"), "VLLM_BASE_URL")}

# Names of our tasks built in this process (the hook reports on those only).
_BUILT: set[str] = set()


def task_built(name: str) -> None:
    """Called by `conceptcomb.frameworks.inspect_tasks.build_task` for each task of ours."""
    _BUILT.add(name)
    check_model_server()


def check_model_server() -> None:
    """Inside an eval: a model under test whose provider will start a server with a command
    PATH does not have is refused now, in one line, rather than failing every sample."""
    if not in_eval():
        return
    model = get_model()
    provider = str(model).split("/", 1)[0]
    command = SERVER_COMMANDS.get(provider)
    if command is None or shutil.which(command):
        return
    arguments, variable = SERVER_GIVEN[provider]
    given = any(model.model_args.get(name) for name in arguments) or os.environ.get(variable)
    if given or server_url_given(model):
        return  # a running server: nothing to start
    raise ConfigError(
        f"--model {model}: Inspect starts the model's server with the `{command}` command, "
        f"which is not on PATH (is vLLM's environment activated?): run with "
        f"PATH=/path/to/vllm-venv/bin:$PATH, or give a running server with "
        f"--model-base-url http://HOST:PORT/v1."
    )


_MARKUP = re.compile(r"\[/?(?:bold|italic|red|yellow|blue|green)\]")


def cause_line(message: str) -> str:
    """An error message (Inspect's may hold rich markup and several lines) as one line."""
    return " ".join(_MARKUP.sub("", message).split())


@hooks(name="conceptcomb_no_samples", description="Names why a task completed no sample.")
class NoSamplesReport(Hooks):
    """At the end of a task of ours that completed no sample: one line, the error that
    stopped it (a model that did not start, ...) and where its log is."""

    def enabled(self) -> bool:
        return bool(_BUILT)  # off while none of our tasks runs

    async def on_run_end(self, data: RunEnd) -> None:
        # Not on_task_end: Inspect emits it only for a task that ran to its end.
        for log in data.logs:
            name = log.eval.task.rsplit("/", 1)[-1]
            completed = log.results.completed_samples if log.results else 0
            if name not in _BUILT or log.status == "success" or completed:
                continue
            cause = cause_line(log.error.message) if log.error else log.status
            print(
                f"[conceptcomb] {name}: no sample completed ({log.status}): {cause}; "
                f"log: {log.location}",
                file=sys.stderr,
                flush=True,
            )

"""Checks of the offline judge (``judge=local``) made before any generation, in both
frameworks: the libraries it needs, its model found, then its model loaded.

`check_local_judge` is cheap (no import of torch): torch and transformers installed, and
``judge_model`` a transformers folder, a ``.gguf`` file, or a hub id (in the local cache
when ``HF_HUB_OFFLINE`` is set). `load_local_judge` then loads the model once per process
(the judge reuses it), turning a model transformers cannot load into one line naming
``judge_model``, and a Ctrl-C during the load into one line, at once: asyncio's own Ctrl-C
handler only cancels the event loop's main task, which a blocking load never yields to
(Inspect builds tasks inside its event loop).
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conceptcomb.common.errors import ConfigError, Interrupted
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import Placement, load_causal_lm, packaged_smollm2_gguf

LOCAL_INSTALL = "pip install 'conceptcomb[local]'"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_TRUE = {"1", "true", "yes", "on"}


def check_local_judge(settings: JudgeSettings) -> None:
    """``judge=local``: ConfigError (one line naming the option) unless torch and
    transformers are installed and ``judge_model`` names a model that can be found."""
    if settings.judge != "local":
        return
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"judge=local runs a transformers model, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {LOCAL_INSTALL}, or "
            "choose another judge (judge_base_url=... for a server, judge=off for none)."
        )
    Placement.of(settings)  # a device torch does not see, a dtype misspelt: one line, first
    if settings.judge_model is None:
        packaged_smollm2_gguf()  # ConfigError saying how to install it
        return
    _check_model_spec(settings.judge_model)


def _check_model_spec(spec: str) -> None:
    path = Path(spec).expanduser()
    option = f"judge_model={spec}"
    if spec.endswith(".gguf"):
        if not path.is_file():
            raise ConfigError(f"{option}: no such .gguf file. Give the path of a GGUF model file.")
        return
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ConfigError(
                f"{option} is a folder without config.json, not a transformers model folder "
                "(one written by save_pretrained, or a hub snapshot)."
            )
        return
    if _looks_like_path(spec) or not _HUB_ID.match(spec):
        raise ConfigError(
            f"{option}: no such folder. Give a transformers model folder, a .gguf file or a "
            "Hugging Face hub id (org/name); leave judge_model out for the packaged SmolLM2."
        )
    if _hub_offline() and not _in_hub_cache(spec):
        raise ConfigError(
            f"{option} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: "
            "download it once with internet (huggingface-cli download), or give its folder."
        )


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", ".", "~")) or "\\" in spec or spec.count("/") > 1


def _hub_offline() -> bool:
    names = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in names)


def _in_hub_cache(repo_id: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def load_local_judge(settings: JudgeSettings) -> None:
    """``judge=local``: the checks, then the model loaded now, once per process (the judge
    and the verifier reuse it): ConfigError when transformers cannot load it, `Interrupted`
    at once on Ctrl-C."""
    if settings.judge != "local":
        return
    check_local_judge(settings)
    placement = Placement.of(settings)  # the device and dtype the judge will ask on
    what = f"judge_model={settings.judge_model}" if settings.judge_model else "packaged SmolLM2"
    with interruptible(f"loading the local judge ({what})"):
        # Said once Ctrl-C is ours: a Ctrl-C right after the line is never the event loop's,
        # whose handler would wait for the load to end.
        if not is_loaded(settings.judge_model):
            print(f"conceptcomb: loading the local judge ({what})", file=sys.stderr, flush=True)
        try:
            load_causal_lm(settings.judge_model, placement)
        except (OSError, ValueError, RuntimeError, ImportError) as err:
            detail = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raise ConfigError(
                f"judge=local cannot load {what}: {type(err).__name__}: {detail[:300]}"
            ) from err


def is_loaded(spec: str | None) -> bool:
    """Whether this process holds the model already (`load_causal_lm` keeps it), for the
    line announcing the load; False where the loader keeps its models otherwise."""
    try:
        from conceptcomb.scorers.local_judge import _LOADED, _split_model_spec

        folder, gguf_file = _split_model_spec(spec)
        return f"{folder}|{gguf_file}" in _LOADED
    except (ImportError, TypeError, ValueError):
        return False


# After Ctrl-C, how long the blocking work may take to raise it before the process ends
# anyway: a KeyboardInterrupt raised inside a finalizer (``__del__``, run by the garbage
# collector in the middle of a model's load) is lost, "Exception ignored" (the unraisable
# hook ends the process then; this is for a library that catches it otherwise).
SWALLOWED_AFTER_S = 3.0


@contextmanager
def interruptible(doing: str) -> Iterator[None]:
    """Ctrl-C stops the blocking work inside at once, as `Interrupted` ("interrupted while
    DOING"), even under an event loop whose Ctrl-C handler would wait for it to finish. If
    the interrupt is swallowed on its way (see SWALLOWED_AFTER_S), the process says the same
    line and exits with Ctrl-C's status: the work inside (a model's load, before any item
    is asked) has nothing to save."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    line = f"interrupted while {doing}."
    watchdogs: list[threading.Timer] = []

    def interrupt(signum: int, frame: object) -> None:
        if not watchdogs:
            watchdogs.append(threading.Timer(SWALLOWED_AFTER_S, _exit_interrupted, [line]))
            watchdogs[0].daemon = True
            watchdogs[0].start()
        raise KeyboardInterrupt

    def unraisable(report: sys.UnraisableHookArgs) -> None:
        if report.exc_type is KeyboardInterrupt:  # ours, lost in a finalizer: end now
            _exit_interrupted(line)
        previous_hook(report)

    previous, previous_hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    signal.signal(signal.SIGINT, interrupt)
    sys.unraisablehook = unraisable
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(line) from None
    finally:
        for watchdog in watchdogs:
            watchdog.cancel()
        sys.unraisablehook = previous_hook
        # None: a handler not set from Python; the default one stands in
        signal.signal(signal.SIGINT, previous or signal.default_int_handler)
    if watchdogs:  # interrupted, the KeyboardInterrupt lost, the work done meanwhile
        raise Interrupted(line)


def _exit_interrupted(line: str) -> None:
    """The end of a Ctrl-C that the blocking work swallowed (from the watchdog's thread)."""
    print(f"conceptcomb: {line}", file=sys.stderr, flush=True)
    os._exit(130)

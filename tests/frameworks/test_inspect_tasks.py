"""The shared Inspect adapter: one @task function per task name, registered under its name;
the judge options reach a task through Inspect, and a misspelt option is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai._util.registry import registry_info

from conceptcomb.abspyramid.inspect_tasks import TASKS as ABSPYRAMID_TASKS
from conceptcomb.abspyramid.tasks import all_specs as abspyramid_specs
from conceptcomb.ccpt.inspect_tasks import TASKS as CCPT_TASKS
from conceptcomb.ccpt.tasks import all_specs as ccpt_specs
from conceptcomb.ccpt.tasks import method_specs
from conceptcomb.cggc.inspect_tasks import TASKS as CGGC_TASKS
from conceptcomb.cggc.tasks import all_specs as cggc_specs
from conceptcomb.cggc.tasks import verified_specs
from conceptcomb.common.errors import ConfigError
from conceptcomb.frameworks.inspect_tasks import JUDGE_OPTIONS, JudgeOptions, judge_settings
from conceptcomb.mcrae.inspect_tasks import TASKS as MCRAE_TASKS
from conceptcomb.mcrae.tasks import all_specs as mcrae_specs
from conceptcomb.scorers.judge_settings import JudgeSettings

SPECS = {
    "ccpt": (CCPT_TASKS, [*ccpt_specs(), *method_specs()]),
    "cggc": (CGGC_TASKS, [*cggc_specs(), *verified_specs()]),
    "abspyramid": (ABSPYRAMID_TASKS, abspyramid_specs()),
    "mcrae": (MCRAE_TASKS, mcrae_specs()),
}


@pytest.mark.parametrize("benchmark", sorted(SPECS))
def test_one_task_function_per_task_name(benchmark: str) -> None:
    tasks, specs = SPECS[benchmark]
    names = {spec.name for spec in specs} | ({"cggc"} if benchmark == "cggc" else set())
    assert set(tasks) == names
    for name, function in tasks.items():
        assert function.__name__ == name  # greppable: `def <name>(` in inspect_tasks.py
        assert registry_info(function).name == f"conceptcomb/{name}"


def test_judge_options_are_the_settings_options() -> None:
    assert set(JUDGE_OPTIONS) <= set(JudgeSettings.option_names())
    assert JUDGE_OPTIONS == (
        "judge",
        "judge_model",
        "judge_base_url",
        "judge_api_key_env",
        "judge_concurrency",
        "judge_cache",
        "judge_device",
        "judge_dtype",
        "judge_batch_size",
    )
    options: JudgeOptions = {"judge": "off", "judge_model": "m", "judge_concurrency": 3}
    settings = judge_settings({**options, "data_dir": "elsewhere"})
    assert (settings.judge, settings.judge_model, settings.judge_concurrency) == ("off", "m", 3)


@pytest.mark.shared_data
def test_inspect_passes_judge_options_and_refuses_unknown_ones(tmp_path: Path) -> None:
    """Through Inspect's registry (as ``-T`` options arrive): a judge option reaches the
    task, a misspelt one stops it with an error naming the option, before any sample."""
    log = inspect_eval(
        "conceptcomb/ccpt_pi_emergent",
        task_args={"judge": "off", "judge_model": "named-judge"},
        model="mockllm/model",
        limit=1,
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    assert log.eval.task_args["judge_model"] == "named-judge"
    with pytest.raises(ConfigError, match=r"has no option judge_modle .*Did you mean judge_model"):
        inspect_eval(
            "conceptcomb/ccpt_pi_emergent",
            task_args={"judge_modle": "typo"},
            model="mockllm/model",
            limit=1,
            display="none",
            log_dir=str(tmp_path),
        )


def test_the_inspect_entry_point_writes_nothing(tmp_path) -> None:
    """Inspect imports every package's entry point, whichever task runs: ours writes no
    file (tiktoken's offline copy is written when one of our tasks is built)."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "tiktoken"
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "HOME": str(tmp_path / "home")}
    code = "import conceptcomb._inspect_registry"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    assert not cache.exists() or not any(cache.iterdir())
    built = "from conceptcomb.cggc.inspect_tasks import TASKS; TASKS['cggc_ood'](k=4)"
    subprocess.run([sys.executable, "-c", built], env=env, check=True, timeout=300)
    assert any(cache.iterdir())  # primed when a task of ours is built

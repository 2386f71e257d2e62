"""Dump every task and group config as lm-eval 0.4.13 resolves our ``task_yaml/`` folders.

Run it before and after a change to the YAML renderer and diff the two files: they must be
equal (the test ``tests/test_lm_eval_yaml_resolved.py`` checks the declarations instead).

    PYTHONPATH=src python scripts/lm_eval_resolved_configs.py before.json
"""

from __future__ import annotations

import importlib
import json
import sys

from conceptcomb.benchmarks import benchmarks
from conceptcomb.frameworks.lm_eval_yaml import lm_eval_configs


def main(out: str) -> None:
    configs = {}
    for key in (benchmark.key for benchmark in benchmarks()):
        configs |= lm_eval_configs(
            importlib.import_module(f"conceptcomb.{key}.lm_eval_yaml").YAML_DIR
        )
    with open(out, "w", encoding="utf-8") as file:
        json.dump(configs, file, indent=1, sort_keys=True)
    print(f"{len(configs)} tasks and groups -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])

"""The toy's tasks: one `ToySpec` per task. A task variant is one more line in `SPECS`;
``python -m conceptcomb.frameworks.task_files`` then writes its lm-eval leaf and its Inspect
``@task`` function."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToySpec:
    times: int = 1  # how many times the model is asked to repeat the word

    @property
    def name(self) -> str:
        return "toy_echo" if self.times == 1 else f"toy_echo_x{self.times}"

    def describe(self) -> str:
        """One line: the Inspect task's docstring and the report's row label."""
        return "Toy: repeat a word" + (f" {self.times} times" if self.times > 1 else "")


SPECS = [
    ToySpec(),
]


def all_specs() -> list[ToySpec]:
    return list(SPECS)


def spec_by_name(name: str) -> ToySpec:
    for spec in SPECS:
        if spec.name == name:
            return spec
    known = ", ".join(spec.name for spec in SPECS)
    raise ValueError(f"{name!r} is not a toy task; the tasks are: {known}")

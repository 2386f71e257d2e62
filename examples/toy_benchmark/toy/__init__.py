"""A toy benchmark: the model repeats a word. A fifth benchmark to copy (../README.md)."""

# The @task functions, exported (written by `python -m conceptcomb.frameworks.task_files`):
# on first use, so that importing the benchmark does not import Inspect.
__all__ = [
    "toy_echo",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from conceptcomb.toy import inspect_tasks

        return getattr(inspect_tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

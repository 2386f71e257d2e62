# The @task functions, exported (written by `python -m conceptcomb.frameworks.task_files`):
# on first use, so that importing the benchmark does not import Inspect.
__all__ = [
    "mcrae_all",
    "mcrae_esslli44",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from conceptcomb.mcrae import inspect_tasks

        return getattr(inspect_tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

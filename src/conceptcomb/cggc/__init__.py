"""CGGC: compositional generalization in graph-based generative commonsense reasoning.

Fu and Frank, Findings of EMNLP 2024 (Heidelberg-NLP/CGGC). The tasks, demonstrations,
metrics and verification live here; the dataset builder in `dataset_build/` (the only
importer of torch and sentence-transformers), the analyses beyond the tables in `analysis/`.
"""

# The @task functions, exported (written by `python -m conceptcomb.frameworks.task_files`):
# on first use, so that importing the benchmark does not import Inspect.
__all__ = [
    "cggc",
    "cggc_id",
    "cggc_id_script",
    "cggc_id_test_typeA",
    "cggc_id_test_typeB",
    "cggc_id_test_typeC",
    "cggc_id_verified",
    "cggc_ood",
    "cggc_ood_d13",
    "cggc_ood_d22",
    "cggc_ood_easy2hard",
    "cggc_ood_easy2hard_verified",
    "cggc_ood_hard2easy",
    "cggc_ood_script",
    "cggc_ood_test_typeA",
    "cggc_ood_test_typeB",
    "cggc_ood_test_typeC",
    "cggc_ood_typeA",
    "cggc_ood_typeB",
    "cggc_ood_typeC",
    "cggc_ood_verified",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from conceptcomb.cggc import inspect_tasks

        return getattr(inspect_tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

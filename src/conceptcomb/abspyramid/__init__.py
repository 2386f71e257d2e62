"""AbsPyramid: abstraction detection and generation (Wang et al., NAACL 2024 Findings)."""

# The @task functions, exported (written by `python -m conceptcomb.frameworks.task_files`):
# on first use, so that importing the benchmark does not import Inspect.
__all__ = [
    "abspyramid_det_all",
    "abspyramid_det_all_cot",
    "abspyramid_det_all_icl",
    "abspyramid_det_all_icl_cot",
    "abspyramid_det_all_nli",
    "abspyramid_det_all_nli_cot",
    "abspyramid_det_all_zs",
    "abspyramid_det_event",
    "abspyramid_det_event_cot",
    "abspyramid_det_event_icl",
    "abspyramid_det_event_icl_cot",
    "abspyramid_det_event_nli",
    "abspyramid_det_event_nli_cot",
    "abspyramid_det_event_zs",
    "abspyramid_det_noun",
    "abspyramid_det_noun_cot",
    "abspyramid_det_noun_icl",
    "abspyramid_det_noun_icl_cot",
    "abspyramid_det_noun_nli",
    "abspyramid_det_noun_nli_cot",
    "abspyramid_det_noun_zs",
    "abspyramid_det_verb",
    "abspyramid_det_verb_cot",
    "abspyramid_det_verb_icl",
    "abspyramid_det_verb_icl_cot",
    "abspyramid_det_verb_nli",
    "abspyramid_det_verb_nli_cot",
    "abspyramid_det_verb_zs",
    "abspyramid_gen_all",
    "abspyramid_gen_event",
    "abspyramid_gen_noun",
    "abspyramid_gen_verb",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from conceptcomb.abspyramid import inspect_tasks

        return getattr(inspect_tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

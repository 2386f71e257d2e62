"""CGGC: compositional generalization in graph-based generative commonsense reasoning.

Fu and Frank, Findings of EMNLP 2024 (Heidelberg-NLP/CGGC). The tasks, demonstrations,
metrics and verification live here; the dataset builder in `dataset_build/` (the only
importer of torch and sentence-transformers), the analyses beyond the tables in `analysis/`.
"""

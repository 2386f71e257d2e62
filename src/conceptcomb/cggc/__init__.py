"""CGGC: compositional generalization in graph-based generative commonsense reasoning.

Fu and Frank, Findings of EMNLP 2024 (Heidelberg-NLP/CGGC). The builder, split, samplers
and metrics live here; torch and sentence-transformers are imported only by the builder.
"""

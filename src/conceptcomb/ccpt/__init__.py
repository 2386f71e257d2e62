"""CCPT: conceptual combination with property type (Song et al., NAACL 2025)."""

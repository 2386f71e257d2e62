"""A toy benchmark: the model repeats a word. A fifth benchmark to copy (../README.md)."""

"""The toy's items: three words (a real benchmark pins its data files and loads them)."""

WORDS = ("apple", "river", "stone")

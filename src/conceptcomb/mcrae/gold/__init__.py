"""The gold standard: each concept's top McRae features and its tie rule (`features`), and
the expansion sets of single words that count as naming a feature (`expansion_sets`)."""

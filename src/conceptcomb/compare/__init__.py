"""Comparing runs and each run's own intervals: `stats` (every interval, test and power
figure, with their formulas and sources), `corpus` (corpus metrics on bootstrap resamples)."""

"""The statistics every room calls: `stats` (every interval, test and power figure, with
their formulas and sources), `corpus` (corpus metrics on bootstrap resamples) and
`intervals` (each run's own 95% interval per metric, from its per-item evidence)."""

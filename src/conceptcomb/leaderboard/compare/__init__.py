"""``conceptcomb compare``: each run's per-item scores (`items`), paired and compared
(`comparison`), printed (`cli`); the statistics are `conceptcomb.leaderboard.statistics`'."""

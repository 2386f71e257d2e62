"""Leaderboard reports (tables, plots, HTML pages) and submission bundles."""

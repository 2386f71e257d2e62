"""Leaderboard bundles (``submit-bundle``): one per model run (`bundle`), read from anyone
within fixed limits (`safe_json`), with the data (`datasets`) and prompt templates
(`templates`) they record."""

"""Checking bundles (``validate-bundle``): the per-item evidence checked again (`verify`), a
bundle file or its Every Eval Ever export checked whole (`validate`), and verdicts
remembered (`verdicts`)."""

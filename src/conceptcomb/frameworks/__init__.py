"""Adapters every benchmark shares: the lm-eval YAML renderer (`lm_eval_yaml`) and the
Inspect task builder with the one definition of the judge options (`inspect_tasks`)."""

"""Adapters every benchmark shares: the lm-eval YAML renderer (`lm_eval_yaml`), the
Inspect task builder with the one definition of the judge options (`inspect_tasks`), and
the command that writes each benchmark's task files from its specs (`task_files`)."""

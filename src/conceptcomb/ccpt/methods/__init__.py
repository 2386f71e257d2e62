"""The paper's methods (section 4.1) beyond the base prompts: spreading activation
(`spreading`, its prompts in `spreading_prompts`) and multi-oracle (`oracle`, saved replies
re-judged by `oracle_rescore`), with their Inspect solvers (`inspect_solvers`) and lm-eval
hooks (`lm_eval_hooks`, the ``!function`` targets of the ``_oracle`` and
``_sa_conceptnet_nofilter`` leaves)."""

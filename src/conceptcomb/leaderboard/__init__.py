"""The leaderboard: what a submission is and everything done with it, one room each, each
importing only from the rooms listed before it (``tests/test_layers.py`` checks it):

* `statistics`: every interval, test and power figure (`stats`, formulas and sources),
  corpus metrics on resamples (`corpus`), a run's own intervals (`intervals`), two sets
  of ratings compared (`agreement`);
* `bundles`: ``submit-bundle``'s bundles (`bundle`), read within limits (`safe_json`),
  the data and prompts they record (`datasets`, `templates`);
* `exports`: Every Eval Ever files (`eee`, read back by `read_eee`), the Hugging Face Hub's
  eval results (`hf`);
* `checks`: ``validate-bundle``: the evidence checked again (`verify`), a bundle or its
  export checked (`validate`), verdicts remembered (`verdicts`), its judge asked again
  (`rejudge`); ``judge agree``: two judges' scorings compared (`agreement`); a bundle's
  replies for ``conceptcomb score`` (`replies`);
* `compare`: ``conceptcomb compare``: runs' per-item scores (`items`), paired
  (`comparison`), printed (`cli`);
* `report`: ``conceptcomb report``: the runs (`runs`), tables, ranking with confidence,
  pages (`build`);
* `cli`: the commands ``submit-bundle``, ``validate-bundle``, ``export``, ``report`` and
  ``compare``.
"""

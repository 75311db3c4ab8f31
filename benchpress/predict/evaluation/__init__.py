"""Yardsticks of a predictor: held-out folds, new models, the temporal split, backtests.

- :mod:`~benchpress.predict.evaluation.folds`: held-out cell sets (make, decode, encode);
- :mod:`~benchpress.predict.evaluation.metrics`: the error metrics;
- :mod:`~benchpress.predict.evaluation.heldout`: `evaluate`, the refit loop over folds;
- :mod:`~benchpress.predict.evaluation.new_models`: whole models held out and folded in;
- :mod:`~benchpress.predict.evaluation.temporal`: fit on the past, score later models;
- :mod:`~benchpress.predict.evaluation.backtest`: a probe set chosen before a cutoff,
  scored on the releases after it;
- :mod:`~benchpress.predict.evaluation.rank`: how many latent factors the matrix supports;
- :mod:`~benchpress.predict.evaluation.ranking`: pairwise ranking preservation and the
  comparison of two models;
- :mod:`~benchpress.predict.evaluation.coverage`: coverage and width of intervals on
  held-out folds.
"""

__all__: list[str] = []

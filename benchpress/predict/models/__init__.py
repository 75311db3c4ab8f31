"""The predictors: every estimator with ``fit(Y, scales)``, ``complete()`` and ``fold_in()``.

- :mod:`~benchpress.predict.models.als`, :mod:`~benchpress.predict.models.sparse_als`,
  :mod:`~benchpress.predict.models.ensemble`: the bias-ALS solver (dense and on observed
  cells) and its average over random starts;
- :mod:`~benchpress.predict.models.als_predictor`: `ALSPredictor`, scale transform + ALS
  ensemble (+ pairwise regression);
- :mod:`~benchpress.predict.models.side_info`: `SideInfoPredictor`, ALS with a covariate
  prior (:mod:`~benchpress.predict.models.covariate_prior`) on per-model covariates
  (:mod:`~benchpress.predict.models.covariates`);
- :mod:`~benchpress.predict.models.knn`: `KNNModels`, the nearest models;
- :mod:`~benchpress.predict.models.blend`: the blends of a low-rank half and the nearest
  models (the default);
- :mod:`~benchpress.predict.models.regression`, :mod:`~benchpress.predict.models.baselines`:
  benchmark-to-benchmark regression and the reference predictors.
"""

__all__: list[str] = []

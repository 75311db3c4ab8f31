"""Calibrated prediction intervals and trust probabilities.

- :mod:`~benchpress.predict.intervals.calibration`: the method; the functions that
  calibrate an `IntervalCalibrator` and apply it (`calibrate`, `complete_intervals`,
  `fold_in_intervals`);
- :mod:`~benchpress.predict.intervals.calibrator`: `IntervalCalibrator`, the risk model
  and split-conformal quantiles;
- :mod:`~benchpress.predict.intervals.features`: the risk features, names and formulas;
- :mod:`~benchpress.predict.intervals.support`: `MatrixSupport`, the risk features of a
  fitted predictor's cells;
- :mod:`~benchpress.predict.intervals.cells_support`: the risk features of a fit of the
  cells solver (a large registry), without (n_models, n_benchmarks) arrays.
"""

__all__: list[str] = []

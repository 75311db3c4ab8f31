"""Calibrated prediction intervals and trust probabilities.

- :mod:`~benchpress.predict.intervals.calibration`: the risk features of a fitted
  predictor's cells (`MatrixSupport`), the split-conformal `IntervalCalibrator` and the
  functions that calibrate and apply it;
- :mod:`~benchpress.predict.intervals.cells_support`: the risk features of a fit of the
  cells solver (a large registry), without (n_models, n_benchmarks) arrays.
"""

__all__: list[str] = []

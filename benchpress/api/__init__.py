"""The API layer: the facade every front end goes through, and the fits behind it.

- :mod:`~benchpress.api.facade`: `BenchPress` (`from benchpress import BenchPress`), the
  facade over a registry view, one unfitted estimator and a fit store;
- :mod:`~benchpress.api.fitted_model`: `FittedModel`, one predictor fitted on one matrix,
  with every answer built on it;
- :mod:`~benchpress.api.fit_store`: `FitStore`, the content-addressed cache of fits;
- :mod:`~benchpress.api.artifact`: a fit as a folder of open-format files, and back;
- :mod:`~benchpress.api.analyses`: `Analyses`, the evaluations, probe searches and
  backtests of one estimator on one matrix;
- :mod:`~benchpress.api.prediction_notes`: the one-line notes printed beside predictions;
- :mod:`~benchpress.api.next_steps`: which benchmark to run next, the nearest models;
- :mod:`~benchpress.api.typed_scores`: known scores as people type them;
- :mod:`~benchpress.api.models_file`: several new models from one file (`predict --file`);
- :mod:`~benchpress.api.drift_versions`: the matrix versions a drift run compares;
- :mod:`~benchpress.api.fold_files`: reading fold files;
- :mod:`~benchpress.api.suspect_report`: the registry's suspect values with their
  citations and reviewed verdicts (`benchpress suspects`).
"""

__all__ = ["BenchPress", "Prediction", "Predictions", "Comparison"]


def __getattr__(name):
    # the facade pulls in the store and the predictor: imported only when asked for, so
    # that a registry command importing e.g. `benchpress.api.typed_scores` stays light
    if name in __all__:
        from benchpress.api import facade

        return getattr(facade, name)
    raise AttributeError(name)

"""Score prediction: fill in missing cells of the (n_models, n_benchmarks) score matrix.

Typical use::

    from benchpress.folds_io import read_folds
    from benchpress.predict import BenchmarkScales, make_predictor, evaluate

    scales = BenchmarkScales.from_records(rows, benchmark_ids)
    pred = make_predictor("default", n_starts=60)        # one unfitted predictor object
    full = pred.fit(Y, scales).complete()                # Y: scores, NaN = missing
    row = pred.fold_in(new_scores)                       # a brand-new model's row
    result = evaluate(make_predictor("published"), Y, scales, read_folds(path))

Modules, one job each: ``transform`` (scales, logit/z space), ``als``/``ensemble``
(bias-ALS solver), ``base``/``predictor``/``baselines``/``regression`` (predictor objects),
``knn`` (nearest models), ``blend`` (the default: side information and nearest models by
known-score count), ``temporal`` (the temporal yardstick: fit on the past, score later models),
``folds`` (held-out cell sets), ``metrics`` (error metrics), ``evaluate`` (refit loop),
``new_models`` (whole models held out, folded in from a few scores),
``intervals`` (calibrated intervals), ``coverage`` (interval coverage on held-out data),
``probes``/``probe_select`` (probe sets), ``backtest``, ``ranking``, ``rank``, ``drift``.
"""

from benchpress.predict.als import ALSConfig, BiasALS
from benchpress.predict.baselines import (
    BenchmarkMean,
    BenchmarkRegression,
    ModelNormalizedMean,
    SoftImpute,
)
from benchpress.predict.base import BasePredictor, check_predictor, clone
from benchpress.predict.ensemble import ALSEnsemble
from benchpress.predict.knn import KNNModels
from benchpress.predict.evaluate import EvaluationResult, evaluate
from benchpress.predict.folds import Folds, folds_to_json, make_folds, parse_folds
from benchpress.predict.metrics import Metrics, compute_metrics
from benchpress.predict.new_models import NewModelEvaluation, evaluate_new_models
from benchpress.predict.predictor import (
    METHODS,
    PRESETS,
    SPREAD_PRIOR,
    Z_BOUND,
    ALSPredictor,
    available_methods,
    make_predictor,
    param_overrides,
    unknown_method_message,
)
from benchpress.predict.regression import PairwiseRegression
from benchpress.predict.blend import BlendPredictor, SideBlendPredictor
from benchpress.predict.rank import RankDiagnostics, complete_submatrices, rank_diagnostics
from benchpress.predict.transform import LOGIT_RULES, BenchmarkScales, ScaleTransform

from benchpress.predict.backtest import BacktestResult  # the function keeps its module's name
from benchpress.predict.drift import DriftReport, DriftThresholds
from benchpress.predict.intervals import (
    IntervalCalibrator, calibrate, complete_intervals, fold_in_intervals,
)
from benchpress.predict.probes import ProbeScore, ProbeSearch, ProbeSelection, refit_transcripts
from benchpress.predict.ranking import RankingPreservation, compare_models, ranking_preservation

from benchpress.predict.side import SideInfoPredictor

# Methods built on ALSPredictor register here, where their modules can import it (no
# import circle). The default since 2026-12-02 is side information under the nearest
# models; "blend" is the rank-4 ALS under them (the default of 2026-12-01) and "als4" that
# ALS alone (the default before); all chosen on the temporal yardstick, README "Forecasts
# that hold up".
# Side information, the default and blend share a z space with each benchmark's spread
# given a prior and a bound on how far one score reaches (README, "Forecasts that hold up").
_ROBUST_Z = {"spread_prior": SPREAD_PRIOR, "z_bound": Z_BOUND}
METHODS["side"] = (SideInfoPredictor, {**PRESETS["default"], **_ROBUST_Z, "method": "side"})
METHODS["default"] = (SideBlendPredictor, {**PRESETS["default"], **_ROBUST_Z,
                                           "method": "default"})
METHODS["blend"] = (BlendPredictor, {**PRESETS["default"], **_ROBUST_Z, "method": "blend"})
METHODS["als4"] = (ALSPredictor, {**PRESETS["default"], "method": "als4"})

__all__ = [
    "BlendPredictor",
    "SideBlendPredictor",
    "SideInfoPredictor",
    "ALSConfig",
    "ALSEnsemble",
    "ALSPredictor",
    "BasePredictor",
    "BenchmarkMean",
    "BenchmarkRegression",
    "BenchmarkScales",
    "BiasALS",
    "EvaluationResult",
    "Folds",
    "KNNModels",
    "LOGIT_RULES",
    "METHODS",
    "Metrics",
    "ModelNormalizedMean",
    "PRESETS",
    "PairwiseRegression",
    "RankDiagnostics",
    "ScaleTransform",
    "SoftImpute",
    "available_methods",
    "unknown_method_message",
    "complete_submatrices",
    "compute_metrics",
    "evaluate",
    "evaluate_new_models",
    "NewModelEvaluation",
    "folds_to_json",
    "make_folds",
    "make_predictor",
    "parse_folds",
    "rank_diagnostics",
    "param_overrides",
    "clone",
    "check_predictor",
    "BacktestResult",
    "ProbeScore",
    "ProbeSearch",
    "ProbeSelection",
    "RankingPreservation",
    "compare_models",
    "ranking_preservation",
    "refit_transcripts",
    "DriftReport",
    "DriftThresholds",
    "IntervalCalibrator",
    "calibrate",
    "complete_intervals",
    "fold_in_intervals",
]

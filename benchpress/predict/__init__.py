"""Score prediction: fill in missing cells of the (n_models, n_benchmarks) score matrix.

Typical use::

    from benchpress.predict import BenchmarkScales, make_predictor, evaluate, read_folds

    scales = BenchmarkScales.from_records(rows, benchmark_ids)
    pred = make_predictor("default").fit(Y, scales)      # Y: scores, NaN = missing
    full = pred.complete()                               # (n_models, n_benchmarks)
    row = pred.fold_in(new_scores)                       # a brand-new model's row
    result = evaluate("published", Y, scales, read_folds(path))
"""

from benchpress.predict.als import BiasALS
from benchpress.predict.baselines import (
    BenchmarkMean,
    BenchmarkRegression,
    KNNModels,
    ModelNormalizedMean,
    SoftImpute,
)
from benchpress.predict.base import BasePredictor
from benchpress.predict.ensemble import ALSEnsemble
from benchpress.predict.evaluate import (
    EvaluationResult,
    Folds,
    Metrics,
    compute_metrics,
    evaluate,
    folds_to_json,
    make_folds,
    parse_folds,
    read_folds,
)
from benchpress.predict.predictor import (
    METHODS,
    PRESETS,
    ALSPredictor,
    available_methods,
    make_predictor,
)
from benchpress.predict.regression import PairwiseRegression
from benchpress.predict.rank import RankDiagnostics, complete_submatrices, rank_diagnostics
from benchpress.predict.transform import LOGIT_RULES, BenchmarkScales, ScaleTransform

from benchpress.predict.backtest import BacktestResult  # the function keeps its module's name
from benchpress.predict.drift import DriftReport, DriftThresholds, MatrixVersion
from benchpress.predict.intervals import (
    IntervalCalibrator, calibrate, complete_intervals, fold_in_intervals,
)
from benchpress.predict.probes import ProbeScore, ProbeSearch, ProbeSelection, refit_transcripts
from benchpress.predict.ranking import RankingPreservation, compare_models, ranking_preservation

__all__ = [
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
    "complete_submatrices",
    "compute_metrics",
    "evaluate",
    "folds_to_json",
    "make_folds",
    "make_predictor",
    "parse_folds",
    "rank_diagnostics",
    "read_folds",
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
    "MatrixVersion",
    "calibrate",
    "complete_intervals",
    "fold_in_intervals",
]

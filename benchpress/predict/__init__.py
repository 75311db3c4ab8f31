"""Score prediction: fill in missing cells of the (n_models, n_benchmarks) score matrix.

Typical use::

    from benchpress.api.fold_files import read_folds
    from benchpress.predict import BenchmarkScales, make_predictor, evaluate

    scales = BenchmarkScales.from_records(rows, benchmark_ids)
    pred = make_predictor("default", n_starts=60)        # one unfitted predictor object
    full = pred.fit(Y, scales).complete()                # Y: scores, NaN = missing
    row = pred.fold_in(new_scores)                       # a brand-new model's row
    result = evaluate(make_predictor("published"), Y, scales, read_folds(path))

Subpackages, one concept each: ``models`` (the predictors: bias-ALS and its solvers, side
information, nearest models, the blends, regression, baselines), ``evaluation`` (held-out
folds, new models, the temporal yardstick, backtests, rank and ranking diagnostics,
interval coverage), ``intervals`` (calibrated intervals and their risk features) and
``probes`` (probe sets). Beside them: ``transform`` (scales, logit/z space), ``estimator`` (the
predictor interface), ``consistency`` (a given score its siblings contradict), ``drift``
(the low-rank structure across versions), ``state`` (a fit as arrays and back),
``factory`` (every predictor by name, ``make_predictor``) and ``size_limits`` (every size
threshold).
"""

from benchpress.predict.models.als import ALSConfig, BiasALS
from benchpress.predict.models.baselines import (
    BenchmarkMean,
    BenchmarkRegression,
    ModelNormalizedMean,
    SoftImpute,
)
from benchpress.predict.estimator import BasePredictor, check_predictor, clone
from benchpress.predict.models.ensemble import ALSEnsemble
from benchpress.predict.models.knn import KNNModels
from benchpress.predict.evaluation.heldout import EvaluationResult, evaluate
from benchpress.predict.evaluation.folds import Folds, folds_to_json, make_folds, parse_folds
from benchpress.predict.evaluation.metrics import Metrics, compute_metrics
from benchpress.predict.evaluation.new_models import NewModelEvaluation, evaluate_new_models
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.factory import (
    METHODS,
    PRESETS,
    SPREAD_PRIOR,
    Z_BOUND,
    available_methods,
    make_predictor,
    param_overrides,
    unknown_method_message,
)
from benchpress.predict.models.regression import PairwiseRegression
from benchpress.predict.models.blend import NeighbourBlend, NeighbourMix
from benchpress.predict.models.gate import Gate
from benchpress.predict.evaluation.rank import RankDiagnostics, complete_submatrices, rank_diagnostics
from benchpress.predict.transform import LOGIT_RULES, BenchmarkScales, ScaleTransform

from benchpress.predict.evaluation.backtest import BacktestResult  # the function keeps its module's name
from benchpress.predict.drift import DriftReport, DriftThresholds
from benchpress.predict.intervals.calibration import (
    calibrate, complete_intervals, fold_in_intervals,
)
from benchpress.predict.intervals.calibrator import IntervalCalibrator
from benchpress.predict.probes.search import ProbeScore, ProbeSearch, ProbeSelection, refit_transcripts
from benchpress.predict.evaluation.ranking import RankingPreservation, compare_models, ranking_preservation

from benchpress.predict.models.side_info import SideInfoPredictor

__all__ = [
    "NeighbourBlend",
    "NeighbourMix",
    "Gate",
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

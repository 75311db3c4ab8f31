"""A fitted predictor's state as plain arrays and JSON, and back (no pickle).

:func:`fitted_state` turns a fitted :class:`~benchpress.predict.models.als_predictor.ALSPredictor`
(or a :class:`~benchpress.predict.models.side_info.SideInfoPredictor` without ``extra_ranks``), its
:class:`~benchpress.predict.intervals.calibration.MatrixSupport` and its interval calibrators into
``(arrays, meta)``: a flat dict of numpy arrays (for ``np.savez``) and a JSON-ready dict;
:func:`restore_state` rebuilds the same objects from them and the training matrix ``Y``
(n_models, n_benchmarks) with its scales. Nothing is refitted or recomputed: every fitted
array is restored as saved, so the restored objects give bit-identical predictions and
intervals. Writing the files (NPZ, JSON, Parquet) is :mod:`benchpress.api.artifact`'s job.

>>> import numpy as np
>>> from benchpress.predict import BenchmarkScales, make_predictor
>>> Y = np.array([[50., 60, 70], [55, 65, np.nan], [40, np.nan, 66], [45, 52, 61]])
>>> sc = BenchmarkScales(np.array(["percent"] * 3), np.zeros(3), np.full(3, 100.0))
>>> pred = make_predictor("published", n_starts=2).fit(Y, sc)
>>> arrays, meta = fitted_state(pred)
>>> twin = restore_state(arrays, meta, Y, sc)["predictor"]
>>> bool((twin.complete() == pred.complete()).all())
True
"""

from __future__ import annotations

import numpy as np

from benchpress.errors import BadInputError, UsageError, import_extra
from benchpress.predict.base import clone, flat_params
from benchpress.predict.models.blend import NeighbourBlend
from benchpress.predict.models.ensemble import ALSEnsemble
from benchpress.predict.intervals.calibration import (
    EPS, KNOWN_BUCKETS, LOGIT_RULE, IntervalCalibrator, MatrixSupport,
)
from benchpress.predict.methods import make_predictor
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.models.regression import PairwiseRegression
from benchpress.predict.models.side_info import SideInfoPredictor
from benchpress.predict.transform import LOGIT_RULES, BenchmarkScales, ScaleTransform

__all__ = ["fitted_state", "restore_state", "make_estimator", "storable", "check_shapes",
           "SUPPORT_ARRAYS",
           "SPARSE_SUPPORT_ARRAYS", "ROW_ARRAYS", "SIDE_ARRAYS"]

#: Fitted arrays of a MatrixSupport kept in an artifact (``obs`` comes from ``Y``).
SUPPORT_ARRAYS = ("Z", "P", "Zhat", "spread_z", "row_count", "col_count", "row_rms",
                  "col_rms", "near")
#: The same for a predictor fitted on the sparse path: per-model and per-benchmark
#: features and the candidate sample of the nearest-model feature (bounded size).
SPARSE_SUPPORT_ARRAYS = ("row_count", "col_count", "row_rms", "col_rms", "cand", "Zc",
                         "points")
#: The per-model arrays of a sparse-path fit (stored apart: predicting a new model needs
#: none of them, see ``restore_state(..., Y=None)``).
ROW_ARRAYS = ("ensemble_U", "ensemble_model_bias", "support_row_count", "support_row_rms")
_TRANSFORM = ("mean_", "std_", "n_observed_")
_ENSEMBLE = ("mu_", "model_bias_", "benchmark_bias_", "U_", "V_")
_REGRESSION = ("slope_", "intercept_", "r2_", "weight_")
_CALIBRATOR = ("x_mean_", "x_std_", "coef_", "ratios_")
#: Fitted arrays of a side fit with covariates (each kept when the fit made it).
SIDE_ARRAYS = ("covariates_", "x_mean_", "x_scale_", "x_min_", "x_max_", "x_weight_",
               "theta_mean_", "theta_coef_", "prior_precision_", "noise_var_", "base_z_",
               "effects_")


def storable(predictor) -> bool:
    """Whether :func:`fitted_state` can store ``predictor`` (fitted or not): an
    ALSPredictor, a side predictor without ``extra_ranks`` (its members are not stored),
    or a blend of either (its nearest models are its Y)."""
    if type(predictor) is NeighbourBlend:
        return predictor.low_rank is not None and storable(predictor.low_rank)
    if type(predictor) is ALSPredictor:
        return True
    return type(predictor) is SideInfoPredictor and not predictor.extra_ranks


def rows_apart(manifest: dict) -> bool:
    """Whether the artifact (its manifest, or the ``meta`` of :func:`fitted_state`) holds a
    fit of the cells solver: its per-model arrays (:data:`ROW_ARRAYS`) are then stored
    apart, and it can load without them and without its training rows (a predict of a
    new model needs neither)."""
    return bool(manifest.get("sparse"))


#: Parameters added to a method after artifacts of it were stored, each with the value that
#: gives what the code did before it (an artifact stored without it predicts as it did then,
#: not with the new default): ``reg_noise``, ``spread_prior`` and ``z_bound`` (2026-12-05)
#: were, in effect, 0.
PARAMS_SINCE = {"spread_prior": 0.0, "z_bound": 0.0}


def make_estimator(method: str, params: dict):
    """An unfitted predictor of ``method`` with all its parameters ``params`` (as
    ``get_params()`` returned them, ``method`` included), through the one factory
    `make_predictor`; a method or parameter this version does not know is BadInputError.
    A parameter of :data:`PARAMS_SINCE` that ``params`` lacks takes its old value there."""
    given = {k: v for k, v in params.items() if k != "method"}
    try:
        takes = flat_params(make_predictor(method))
        given = {**{k: v for k, v in PARAMS_SINCE.items() if k in takes}, **given}
        made = make_predictor(method, **{k: _tuples(v) for k, v in given.items()})
    except UsageError as exc:
        raise BadInputError(f"artifact: {exc}") from None
    return made


def _tuples(value):
    """A JSON list (of lists) as the tuple (of tuples) a parameter holds, so that a restored
    parameter compares equal to the default it was stored from."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _put(arrays: dict, prefix: str, obj, names) -> None:
    for n in names:
        arrays[prefix + n.rstrip("_")] = np.asarray(getattr(obj, n))


def _get(arrays, prefix: str, obj, names) -> None:
    for n in names:
        key = prefix + n.rstrip("_")
        if key not in arrays:
            raise BadInputError(f"artifact arrays lack {key!r}")
        setattr(obj, n, np.asarray(arrays[key]))


def fitted_state(predictor, *, support: MatrixSupport | None = None,
                 calibrators: dict | None = None) -> tuple[dict, dict]:
    """``(arrays, meta)`` of a fitted ALS predictor, its interval support and calibrators.

    Parameters
    ----------
    predictor : ALSPredictor or SideInfoPredictor
        Fitted (methods "published", "default", "blend", "als", "side"; see :func:`storable`);
        other predictors have no fold-in without refit and cannot be stored (UsageError).
    support : MatrixSupport, optional
        Risk features of ``predictor``'s cells (made here when not given).
    calibrators : dict, optional
        ``{regime: IntervalCalibrator}`` (fitted), for "cells" and/or "new_models".

    Returns
    -------
    arrays : dict of str -> ndarray
    meta : dict (JSON-ready): class, method, params, calibrator settings.
    """
    if not storable(predictor):
        raise UsageError(f"only the ALS and side predictors (without extra_ranks) can be "
                         f"stored as an artifact, not {type(predictor).__name__} "
                         f"({predictor.method!r})")
    predictor._fitted()
    blend = isinstance(predictor, NeighbourBlend)
    low = predictor.low_rank_ if blend else predictor  # the arrays are the low-rank half's
    arrays: dict[str, np.ndarray] = {}
    _put(arrays, "transform_", low.transform_, _TRANSFORM)
    _put(arrays, "ensemble_", low.ensemble_, _ENSEMBLE)
    arrays["ensemble_seeds"] = np.asarray(low.ensemble_.seeds_, dtype=np.int64)
    sparse = predictor.uses_cells()
    if low.regression_ is not None:
        _put(arrays, "regression_", low.regression_, _REGRESSION)
        if not sparse:
            arrays["regression_z"] = np.asarray(low.regression_z_)
    if blend and predictor.neighbours_.dates_ is not None:
        arrays["blend_dates"] = np.asarray(predictor.neighbours_.dates_, dtype=float)
    support = support if support is not None else MatrixSupport(predictor)
    _put(arrays, "support_transform_", support.transform, _TRANSFORM)
    for n in SPARSE_SUPPORT_ARRAYS if sparse else SUPPORT_ARRAYS:
        arrays["support_" + n] = np.asarray(getattr(support, n))
    cal_meta = {}
    for regime, cal in (calibrators or {}).items():
        cal._fitted()
        _put(arrays, f"calibrator_{regime}_", cal, _CALIBRATOR)
        if getattr(cal, "col_factor_", None) is not None:  # per benchmark (new-model regime)
            arrays[f"calibrator_{regime}_col_factor_"] = np.asarray(cal.col_factor_)
        if getattr(cal, "q_out_", None) is not None:  # out of source reach (cells regime)
            arrays[f"calibrator_{regime}_reach"] = np.asarray(cal.reach_, dtype=bool)
        cal_meta[regime] = {**cal.to_json(), "ridge": cal.ridge, "regime": cal.regime}
    meta = {"class": type(predictor).__name__, "method": predictor.method,
            "params": flat_params(predictor), "regression": low.regression_ is not None,
            "calibrators": cal_meta}
    if blend:
        meta["low_rank_class"] = type(low).__name__
    if sparse:  # only then, so that the artifacts of small matrices stay as they were
        meta["sparse"] = True
    if isinstance(low, SideInfoPredictor):  # (so do the default's artifacts)
        _put_side(arrays, meta, low, support)
    return arrays, meta


def _put_side(arrays: dict, meta: dict, predictor, support: MatrixSupport) -> None:
    """A side fit's own arrays (those it made) and its interval space."""
    names = [n for n in SIDE_ARRAYS
             if predictor.covariates_ is not None and getattr(predictor, n, None) is not None]
    _put(arrays, "side_", predictor, names)
    if names:
        arrays["side_raw_covariates"] = np.asarray(predictor._raw_covariates)
    meta["side_arrays"] = names
    meta["support_space"] = {"logit_rule": getattr(predictor, "interval_logit_rule_", None)
                             or LOGIT_RULE, "eps": support.transform.eps}


def _restore_side(pred, arrays, meta: dict) -> None:
    names = meta.get("side_arrays", [])
    if not isinstance(names, list) or not set(names) <= set(SIDE_ARRAYS):
        raise BadInputError(f"artifact names unknown side arrays: {names!r}")
    for n in SIDE_ARRAYS:
        setattr(pred, n, None)
    _get(arrays, "side_", pred, names)
    with_covariates = bool(names)
    pred._raw_covariates = (np.asarray(arrays["side_raw_covariates"]) if with_covariates
                            else None)
    if with_covariates:
        _check_side_shapes(pred)
    pred.members_, pred.base_postvar_ = [], None  # (the posterior variance: made on demand)
    pred.interval_logit_rule_ = pred.interval_logit_rule if with_covariates else None
    pred.interval_eps_ = float(pred.interval_eps) if with_covariates else None


def _check_side_shapes(pred) -> None:
    """Every restored side array has the shape the fit would have given it."""
    S, n_m, r = pred.ensemble_.U_.shape
    n_b, p = pred.ensemble_.V_.shape[1], np.shape(pred.covariates_)[-1]
    want = {"covariates_": (n_m, p), "_raw_covariates": (n_m, p), "x_mean_": (p,),
            "x_scale_": (p,), "x_min_": (p,), "x_max_": (p,), "x_weight_": (p,),
            "theta_mean_": (S * (r + 1),), "theta_coef_": (p, S * (r + 1)),
            "prior_precision_": (S, r + 1, r + 1), "noise_var_": (S,),
            "base_z_": (S, n_m, n_b), "effects_": (p, n_b)}
    for n, shape in want.items():
        a = getattr(pred, n)
        if a is not None and (a.shape != shape or a.dtype.kind != "f"):
            raise BadInputError(f"artifact array side_{n.strip('_')} has shape {a.shape}, "
                                f"expected {shape}")


def _support_space(meta: dict) -> tuple[str, float]:
    """The interval space (logit rule, margin) an artifact's support was made in."""
    space = meta.get("support_space") or {}
    rule, eps = space.get("logit_rule", LOGIT_RULE), space.get("eps", EPS)
    if (rule not in LOGIT_RULES or isinstance(eps, bool) or not isinstance(eps, (int, float))
            or not 0.0 < eps < 50.0):
        raise BadInputError(f"artifact has an unknown interval space: {space!r}")
    return rule, float(eps)


def _transform(arrays, prefix: str, scales: BenchmarkScales, rule: str, eps: float):
    t = ScaleTransform.from_scales(scales, logit_rule=rule, eps=eps)
    _get(arrays, prefix, t, _TRANSFORM)
    return t


#: The shape of each array with a model or benchmark axis: "m" models, "b" benchmarks;
#: "S" (ensemble members) and "r" (rank) are the same in every array that has them.
_SHAPES = {
    **{f"{p}{n}": ("b",) for p in ("transform_", "support_transform_")
       for n in ("mean", "std", "n_observed")},
    "ensemble_mu": ("S",), "ensemble_seeds": ("S",), "ensemble_model_bias": ("S", "m"),
    "ensemble_benchmark_bias": ("S", "b"), "ensemble_U": ("S", "m", "r"),
    "ensemble_V": ("S", "b", "r"),
    **{f"regression_{n}": ("b", "b") for n in ("slope", "intercept", "r2", "weight")},
    "regression_z": ("m", "b"),
    **{f"support_{n}": ("m", "b") for n in ("Z", "P", "Zhat", "spread_z", "near")},
    "support_row_count": ("m",), "support_row_rms": ("m",), "support_col_count": ("b",),
    "support_col_rms": ("b",), "support_C": ("m", "m"),
    **{f"calibrator_{r}_reach": ("s", "b") for r in ("cells", "new_models")},
}


def check_shapes(arrays: dict, n_models: int, n_benchmarks: int) -> None:
    """BadInputError (one line) naming the first array of `arrays` whose shape does not
    fit a matrix of (n_models, n_benchmarks) (see :data:`_SHAPES`)."""
    dims = {"m": n_models, "b": n_benchmarks}
    for name, axes in _SHAPES.items():
        if name not in arrays:
            continue
        shape = np.shape(arrays[name])
        ok = len(shape) == len(axes)
        for axis, n in zip(axes, shape) if ok else ():
            ok = ok and dims.setdefault(axis, n) == n
        if not ok:
            want = "(" + ", ".join(str(dims.get(a, a)) for a in axes) + ")"
            raise BadInputError(f"artifact array {name} has shape {shape}, not {want} as its "
                                f"manifest's {n_models} models and {n_benchmarks} benchmarks "
                                "say; remake it with `benchpress fit`")


def _without_rows(arrays: dict, n_benchmarks: int) -> dict:
    """``arrays`` with the per-model ones (:data:`ROW_ARRAYS`) replaced by empty ones."""
    S, _, rank = np.shape(arrays["ensemble_V"])
    empty = {"ensemble_U": np.zeros((S, 0, rank)), "ensemble_model_bias": np.zeros((S, 0)),
             "support_row_count": np.zeros(0, dtype=np.int64), "support_row_rms": np.zeros(0)}
    return {**arrays, **empty}


def restore_state(arrays, meta: dict, Y, scales: BenchmarkScales) -> dict:
    """The fitted objects of :func:`fitted_state` rebuilt on the training matrix ``Y``
    (n_models, n_benchmarks) and ``scales``: a dict with ``predictor`` (fitted),
    ``support`` (its MatrixSupport) and ``calibrators`` ({regime: IntervalCalibrator}).

    ``Y=None`` (a fit of the sparse path only) restores what predicting new models needs,
    without the training matrix and the per-model arrays (:data:`ROW_ARRAYS`, which
    ``arrays`` may then lack): the predictor then has no training rows (``Y_`` is (0,
    n_benchmarks)), so it folds in new models but completes no registered one."""
    try:
        now = type(make_predictor(meta["method"])).__name__
    except UsageError as exc:
        raise BadInputError(f"artifact: {exc}") from None
    if meta.get("class") != now:
        raise BadInputError(f"artifact holds a {meta.get('class')} fit of method "
                            f"'{meta['method']}', which is now a {now} (the default changed "
                            "in 2026-12): fit it again with `benchpress fit`")
    made = make_estimator(meta["method"], meta["params"])
    if not storable(made):
        raise BadInputError(f"artifact holds a {meta.get('class')!r}; only ALS, side and "
                            "blended artifacts can be loaded")
    blend = made if isinstance(made, NeighbourBlend) else None
    pred = made if blend is None else _low_rank_of(blend, meta)
    if Y is None:
        if not meta.get("sparse"):
            raise BadInputError("only a fit of the sparse path loads without its matrix")
        Y = np.zeros((0, scales.n_benchmarks))
        arrays = _without_rows(arrays, scales.n_benchmarks)
    Y = np.array(Y, dtype=float, copy=True)
    check_shapes(arrays, *Y.shape)
    pred.Y_, pred.scales_ = Y, scales
    pred.transform_ = pred.make_transform(scales)  # its own z space, with the stored moments
    _get(arrays, "transform_", pred.transform_, _TRANSFORM)
    pred.ensemble_ = ALSEnsemble(pred.als_config())
    _get(arrays, "ensemble_", pred.ensemble_, _ENSEMBLE)
    pred.ensemble_.seeds_ = [int(s) for s in arrays["ensemble_seeds"]]
    pred.regression_ = None
    if meta.get("regression"):
        pred.regression_ = PairwiseRegression(power=pred.regression_power)
        _get(arrays, "regression_", pred.regression_, _REGRESSION)
        pred.regression_z_ = None if meta.get("sparse") else np.asarray(arrays["regression_z"])
    pred.solver_ = "cells" if meta.get("sparse") else "dense"
    pred.train_z_ = None  # without training rows (Y=None), nothing to hold
    if pred.uses_cells() and Y.shape[0]:
        sp = import_extra("scipy.sparse")  # here: slow to import, and not in the core

        r, c = np.nonzero(~np.isnan(Y))
        pred.train_z_ = sp.csr_matrix((pred.transform_.transform(Y[r, c], cols=c), (r, c)),
                                      shape=Y.shape)
    if pred.ensemble_.V_.shape[1] != Y.shape[1] or pred.ensemble_.U_.shape[1] != Y.shape[0]:
        raise BadInputError("artifact arrays do not match its matrix's shape "
                            f"{Y.shape}")
    if isinstance(pred, SideInfoPredictor):
        _restore_side(pred, arrays, meta)
    if blend is not None:  # its nearest models are Y, in the low-rank half's z space
        dates = arrays.get("blend_dates")
        if dates is not None and np.shape(dates) != (Y.shape[0],):
            raise BadInputError(f"artifact array blend_dates has shape {np.shape(dates)}, not "
                                f"({Y.shape[0]},)")
        pred = NeighbourBlend.from_fitted_half(
            blend, pred, Y, scales, dates=None if dates is None else np.asarray(dates, float),
            covariates=getattr(pred, "_raw_covariates", None))
    support = object.__new__(MatrixSupport)  # restored as saved, not recomputed
    support.predictor = pred
    support.transform = _transform(arrays, "support_transform_", scales,
                                   *_support_space(meta))
    if pred.uses_cells():
        support.sparse = True
        for n in SPARSE_SUPPORT_ARRAYS:
            setattr(support, n, np.asarray(arrays["support_" + n]))
        support.train_z = None if getattr(pred, "low_rank_", pred).train_z_ is None else sp.csr_matrix(
            (support.transform.transform(Y[r, c], cols=c), (r, c)), shape=Y.shape)
        return {"predictor": pred, "support": support, "calibrators": _calibrators(arrays, meta)}
    support.obs = ~np.isnan(Y)
    if "support_near" not in arrays and "support_C" in arrays:  # saved before `near`
        C = np.asarray(arrays["support_C"])  # (n_models, n_models), diagonal 0
        arrays = {**arrays, "support_near": np.stack(
            [np.max(C[:, support.obs[:, j]], axis=1, initial=0.0)
             for j in range(Y.shape[1])], axis=1).reshape(Y.shape)}
    for n in SUPPORT_ARRAYS:
        setattr(support, n, np.asarray(arrays["support_" + n]))
    return {"predictor": pred, "support": support, "calibrators": _calibrators(arrays, meta)}


def _low_rank_of(blend: NeighbourBlend, meta: dict):
    """The unfitted low-rank half a stored blend's arrays restore into: its own, or (a fit
    of the cells solver, which side information has not) the same ALS."""
    low = clone(blend.low_rank)
    kind = meta.get("low_rank_class", type(low).__name__)
    if kind == type(low).__name__:
        return low
    if kind == "ALSPredictor":
        return ALSPredictor(**{k: v for k, v in low.get_params().items()
                               if k in ALSPredictor._param_names()})
    raise BadInputError(f"artifact's blend has a {kind!r} low-rank half; this version makes "
                        f"a {type(low).__name__}: fit it again with `benchpress fit`")


def _calibrators(arrays, meta: dict) -> dict:
    calibrators = {}
    for regime, cm in meta.get("calibrators", {}).items():
        cal = IntervalCalibrator(cm["alpha"], ridge=cm["ridge"], regime=cm["regime"])
        _get(arrays, f"calibrator_{regime}_", cal, _CALIBRATOR)
        cal.q_, cal.n_cal_ = float(cm["q"]), int(cm["n_cal"])
        if "q_known" in cm:  # per known-score bucket (new-model regime, since 2026-12)
            q_known = np.asarray(cm["q_known"], dtype=float)
            if q_known.shape != (len(KNOWN_BUCKETS) + 1,) or not np.isfinite(q_known).all():
                raise BadInputError("artifact calibrator's q_known is malformed")
            cal.q_known_ = q_known
        factor = arrays.get(f"calibrator_{regime}_col_factor_")
        if factor is not None:
            factor = np.asarray(factor, dtype=float)
            if factor.ndim != 1 or not (np.isfinite(factor).all() and (factor > 0).all()):
                raise BadInputError("artifact calibrator's col_factor is malformed")
            cal.col_factor_ = factor
        if "q_out" in cm:  # cells out of the model's source reach (since 2026-12-03)
            reach = arrays.get(f"calibrator_{regime}_reach")
            q_out = float(cm["q_out"])
            if reach is None or reach.dtype != bool or not (np.isfinite(q_out) and q_out > 0):
                raise BadInputError("artifact calibrator's q_out or reach is malformed")
            cal.q_out_, cal.n_out_, cal.reach_ = q_out, int(cm.get("n_out", 0)), reach
        calibrators[regime] = cal
    return calibrators

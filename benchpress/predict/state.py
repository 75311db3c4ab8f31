"""A fitted predictor's state as plain arrays and JSON, and back (no pickle).

:func:`fitted_state` turns a fitted :class:`~benchpress.predict.models.als_predictor.ALSPredictor`
(or a :class:`~benchpress.predict.models.side_info.SideInfoPredictor` without ``extra_ranks``,
or a blend of either), its :class:`~benchpress.predict.intervals.support.MatrixSupport` and
its interval calibrators into ``(arrays, meta)``: a flat dict of numpy arrays (for
``np.savez``) and a JSON-ready dict; :func:`restore_state` rebuilds the same objects from
them and the training matrix ``Y`` (n_models, n_benchmarks) with its scales. Each object
gives its own state (``state()``) and is rebuilt by its class (``from_state``); this module
files them under their prefixes and checks what a file may not be trusted with (shapes,
names). Nothing is refitted or recomputed: every fitted array is restored as saved, so the
restored objects give bit-identical predictions and intervals. Writing the files (NPZ, JSON,
Parquet) is :mod:`benchpress.api.artifact`'s job.

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

from benchpress.errors import BadInputError, UsageError
from benchpress.predict.estimator import flat_params, prefixed, state_part
from benchpress.predict.intervals.calibrator import IntervalCalibrator
from benchpress.predict.intervals.cells_support import STATE_ARRAYS as SPARSE_SUPPORT_ARRAYS
from benchpress.predict.intervals.features import LOGIT_RULE
from benchpress.predict.intervals.support import STATE_ARRAYS as SUPPORT_ARRAYS
from benchpress.predict.intervals.support import MatrixSupport
from benchpress.predict.factory import make_predictor
from benchpress.predict.models.als_predictor import ALSPredictor
from benchpress.predict.models.blend import NeighbourBlend
from benchpress.predict.models.side_info import SIDE_ARRAYS, SideInfoPredictor
from benchpress.predict.transform import STATE_ARRAYS as TRANSFORM_ARRAYS
from benchpress.predict.transform import LOGIT_RULES, BenchmarkScales, ScaleTransform

__all__ = ["fitted_state", "restore_state", "make_estimator", "storable", "check_shapes",
           "rows_apart", "SUPPORT_ARRAYS", "SPARSE_SUPPORT_ARRAYS", "ROW_ARRAYS", "SIDE_ARRAYS"]

#: The predictor classes an artifact may hold, by the name its manifest gives.
_STORED_CLASSES = {cls.__name__: cls for cls in (ALSPredictor, SideInfoPredictor, NeighbourBlend)}

#: The per-model arrays of a sparse-path fit (stored apart: predicting a new model needs
#: none of them, see ``restore_state(..., Y=None)``).
ROW_ARRAYS = ("ensemble_U", "ensemble_model_bias", "support_row_count", "support_row_rms")


def storable(predictor) -> bool:
    """Whether :func:`fitted_state` can store ``predictor`` (fitted or not): an
    ALSPredictor or a blend of one (the nearest-models half is its Y), or a side
    predictor (alone or blended) without ``extra_ranks`` (its members are not stored)."""
    if type(predictor) is NeighbourBlend:
        return predictor.low_rank is not None and storable(predictor.low_rank)
    if type(predictor) is ALSPredictor:
        return True
    return type(predictor) is SideInfoPredictor and not predictor.extra_ranks


def rows_apart(manifest: dict) -> bool:
    """Whether the artifact (its manifest, or the ``meta`` of :func:`fitted_state`) holds a
    fit of the cells solver whose predictions of a new model need no registered row: its
    per-model arrays (:data:`ROW_ARRAYS`) are then stored apart, and it can load without
    them and without its training rows. A predictor whose fold-in reads its training rows
    (``fold_in_reads_rows``: a blend's nearest models) is stored and loaded whole."""
    kind = _STORED_CLASSES.get(manifest.get("class"))
    return bool(manifest.get("sparse")) and not getattr(kind, "fold_in_reads_rows", False)


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
        return make_predictor(method, **{k: _tuples(v) for k, v in given.items()})
    except UsageError as exc:
        raise BadInputError(f"artifact: {exc}") from None


def _tuples(value):
    """A JSON list (of lists) as the tuple (of tuples) a parameter holds, so that a restored
    parameter compares equal to the default it was stored from."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


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
        In the order the files have always held them: the predictor's, the support's
        (``support_``), the calibrators' (``calibrator_<regime>_``), the side fit's
        (``side_``).
    meta : dict (JSON-ready): class, method, params, calibrator settings.
    """
    if not storable(predictor):
        raise UsageError(f"only the ALS and side predictors (without extra_ranks) can be "
                         f"stored as an artifact, not {type(predictor).__name__} "
                         f"({predictor.method!r})")
    own, meta = predictor.state()
    side = {k: v for k, v in own.items() if k.startswith("side_")}
    arrays = {k: v for k, v in own.items() if k not in side}
    support = support if support is not None else MatrixSupport(predictor)
    arrays.update(prefixed("support_transform_", support.transform.state()))
    arrays.update(prefixed("support_", support.state()))
    cal_meta = {}
    for regime, cal in (calibrators or {}).items():
        cal_arrays, cal_meta[regime] = cal.state()
        arrays.update(prefixed(f"calibrator_{regime}_", cal_arrays))
    meta["calibrators"] = cal_meta
    arrays.update(side)
    meta["support_space"] = {"logit_rule": getattr(predictor, "interval_logit_rule_", None)
                             or LOGIT_RULE, "eps": support.transform.eps}
    return arrays, meta


#: The margin an artifact without a ``support_space`` loads in. Until 2026-12-07 only side
#: fits recorded their interval space, and every other fit was made with a margin of 0.05
#: (:data:`~benchpress.predict.intervals.features.EPS` is 0.5 since): such an artifact loads
#: in the space its calibrators were fitted in, not today's.
LEGACY_EPS = 0.05


def _support_space(meta: dict) -> tuple[str, float]:
    """The interval space (logit rule, margin) an artifact's support was made in."""
    space = meta.get("support_space") or {}
    rule, eps = space.get("logit_rule", LOGIT_RULE), space.get("eps", LEGACY_EPS)
    if (rule not in LOGIT_RULES or isinstance(eps, bool) or not isinstance(eps, (int, float))
            or not 0.0 < eps < 50.0):
        raise BadInputError(f"artifact has an unknown interval space: {space!r}")
    return rule, float(eps)


#: The shape of each array with a model or benchmark axis: "m" models, "b" benchmarks;
#: "S" (ensemble members) and "r" (rank) are the same in every array that has them.
_SHAPES = {
    **{f"{p}{n}": ("b",) for p in ("transform_", "support_transform_")
       for n in ("mean", "std", "n_observed", "floor")},
    "ensemble_mu": ("S",), "ensemble_seeds": ("S",), "ensemble_model_bias": ("S", "m"),
    "ensemble_benchmark_bias": ("S", "b"), "ensemble_U": ("S", "m", "r"),
    "ensemble_V": ("S", "b", "r"),
    **{f"regression_{n}": ("b", "b") for n in ("slope", "intercept", "r2", "weight")},
    "regression_z": ("m", "b"),
    **{f"support_{n}": ("m", "b") for n in ("Z", "P", "Zhat", "spread_z", "near")},
    "support_row_count": ("m",), "support_row_rms": ("m",), "support_col_count": ("b",),
    "support_col_rms": ("b",), "support_C": ("m", "m"),
    "blend_dates": ("m",),
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


def _near_from_correlations(arrays, Y) -> dict:
    """``arrays`` of an artifact saved before ``support_near`` existed, with it made from
    the saved model-by-model correlations ``support_C`` (n_models, n_models, diagonal 0)."""
    C, obs = np.asarray(arrays["support_C"]), ~np.isnan(Y)
    near = np.stack([np.max(C[:, obs[:, j]], axis=1, initial=0.0) for j in range(Y.shape[1])],
                    axis=1).reshape(Y.shape)
    return {**arrays, "support_near": near}


def restore_state(arrays, meta: dict, Y, scales: BenchmarkScales) -> dict:
    """The fitted objects of :func:`fitted_state` rebuilt on the training matrix ``Y``
    (n_models, n_benchmarks) and ``scales``: a dict with ``predictor`` (fitted),
    ``support`` (its MatrixSupport) and ``calibrators`` ({regime: IntervalCalibrator}).

    ``Y=None`` (a fit of the sparse path only) restores what predicting new models needs,
    without the training matrix and the per-model arrays (:data:`ROW_ARRAYS`, which
    ``arrays`` may then lack): the predictor then has no training rows (``Y_`` is (0,
    n_benchmarks)), so it folds in new models but completes no registered one."""
    estimator = make_estimator(meta["method"], meta["params"])
    if not storable(estimator):
        raise BadInputError(f"artifact holds a {meta.get('class')!r}; only ALS, side and "
                            "blended artifacts can be loaded")
    if meta.get("class") != type(estimator).__name__:
        raise BadInputError(f"artifact holds a {meta.get('class')} fit of method "
                            f"'{meta['method']}', which is now a {type(estimator).__name__} "
                            "(the default changed in 2026-12): fit it again with `benchpress fit`")
    if Y is None:
        if not rows_apart(meta):
            raise BadInputError("only a fit of the sparse path whose fold-in reads no "
                                "registered row (not a blend) loads without its matrix")
        Y = np.zeros((0, scales.n_benchmarks))
        arrays = _without_rows(arrays, scales.n_benchmarks)
    Y = np.array(Y, dtype=float, copy=True)
    check_shapes(arrays, *Y.shape)
    pred = type(estimator).from_state(estimator.get_params(), arrays, meta, Y, scales)
    space = _support_space(meta)
    transform = ScaleTransform.from_state(
        state_part(arrays, "support_transform_", TRANSFORM_ARRAYS), scales,
        logit_rule=space[0], eps=space[1])
    if not pred.uses_cells() and "support_near" not in arrays and "support_C" in arrays:
        arrays = _near_from_correlations(arrays, Y)
    names = SPARSE_SUPPORT_ARRAYS if pred.uses_cells() else SUPPORT_ARRAYS
    support = MatrixSupport.from_state(pred, transform, state_part(arrays, "support_", names))
    calibrators = {regime: IntervalCalibrator.from_state(
        {k[len(f"calibrator_{regime}_"):]: v for k, v in arrays.items()
         if k.startswith(f"calibrator_{regime}_")}, cm)
        for regime, cm in meta.get("calibrators", {}).items()}
    return {"predictor": pred, "support": support, "calibrators": calibrators}

"""Drift of the low-rank structure from one matrix version (snapshot) to the next.

Each version is profiled (:func:`profile`):

* size and fill of the (n_models, n_benchmarks) matrix;
* variance explained by the first factors on the largest complete submatrices
  (:func:`~benchpress.predict.evaluation.rank.complete_submatrices`; ``var2`` is the mean
  two-factor share over the ``n_submatrices`` largest);
* held-out MedAE of soft-impute by rank (the winning rank) and of the tracked predictor
  (the unfitted object passed in, ``--method``/``--param``), on one per-model 3-fold
  partition; per-benchmark held-out MedAE in *points* (1% of
  the benchmark's range);
* the completed z matrix of the published rank-2 predictor (a fixed measuring
  instrument, not the tracked predictor: ``--param`` does not change it), whose
  column-centred top two right singular vectors span the benchmark factor subspace;
* the probe set (:class:`~benchpress.predict.probes.search.ProbeSearch` of the probe predictor,
  greedy, ``probes_k``).

A version is a :class:`~benchpress.store.matrix.ScoreMatrix` (its ``label``, ``values``,
ids and ``scales``).

Consecutive versions are compared (:func:`compare`): principal angles between the two
versions' benchmark subspaces, each computed on the benchmarks both share, probes that changed, the benchmarks
whose held-out error moved most, and the models of the newer version that the older
version's fit predicts worst (each new or changed row is split into 3 parts; each part
is predicted by folding the other two into the older fit; error in points).

A transition raises an alarm (:class:`DriftThresholds`) when two-factor variance falls
below ``var2_min`` or drops by more than ``var2_drop_max``, the winning rank exceeds
``best_rank_max``, the largest principal angle exceeds both ``angle_max_deg`` and its own
noise level (95th percentile of the angle between the newer version and ``n_boot``
bootstrap resamples of its models: the second factor of real matrices is weakly
determined, so a fixed bound alone would fire on noise), or more than
``probe_changes_max`` probes change *and* the old probe set (its benchmarks still present)
recovers the new matrix more than ``probe_regret_max`` (relative MedAE) worse than the new
set - greedy selection among near-equivalent benchmarks reshuffles probes without any
structural change, so a reshuffle that costs nothing is not an alarm.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from benchpress.errors import BadInputError
from benchpress.executor import get_executor
from benchpress.predict.estimator import BasePredictor, check_scores, clone
from benchpress.predict.models.side_info import covariate_kwargs, model_covariates
from benchpress.predict.evaluation.heldout import evaluate
from benchpress.predict.evaluation.folds import make_folds
from benchpress.predict.intervals.features import point_size
from benchpress.predict.size_limits import LIMITS
from benchpress.predict.factory import make_predictor
from benchpress.predict.probes.search import ProbeSearch, probe_set_change, sample_cap
from benchpress.predict.evaluation.rank import (
    best_rank, complete_submatrices, rank_errors, submatrix_variance,
)
from benchpress.predict.transform import ScaleTransform

if TYPE_CHECKING:  # the store hands matrices over; predict does not import it at run time
    from benchpress.store.matrix import ScoreMatrix

__all__ = ["DriftThresholds", "VersionProfile", "Transition", "DriftReport",
           "profile", "compare", "drift", "alarm_rule", "benchmark_subspace", "drift_predictors"]


@dataclass(frozen=True)
class DriftThresholds:
    """Alarm bounds and profiling settings (the ``drift:`` section of params.yaml)."""

    var2_min: float = 0.80
    var2_drop_max: float = 0.10
    best_rank_max: int = 3
    angle_max_deg: float = 30.0
    n_boot: int = 20
    probe_changes_max: int = 2
    probe_regret_max: float = 0.20
    probes_k: int = 5
    probe_method: str = "default"
    # the probe search's sample (`benchpress probes --max-models`; 0: every model)
    probe_max_models: int = LIMITS.probe_max_models
    method: str = "default"
    max_rank: int = 6
    n_submatrices: int = 3
    seed: int = 42

    def predictors(self, **params) -> tuple[BasePredictor, BasePredictor]:
        """The tracked and the probe predictor objects (``method``, ``probe_method``), with
        ``params`` overriding both (UsageError when one does not take them)."""
        return make_predictor(self.method, **params), make_predictor(self.probe_method, **params)

    @classmethod
    def from_dict(cls, d: dict | None) -> "DriftThresholds":
        """Build from a mapping; unknown keys raise BadInputError."""
        d = dict(d or {})
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise BadInputError(f"unknown drift settings: {sorted(unknown)}")
        return cls(**d)


@dataclass
class VersionProfile:
    """Structure of one version (see module doc); ``Zc_`` is the completed z matrix."""

    label: str
    n_models: int
    n_benchmarks: int
    n_cells: int
    fill: float
    var1: float | None
    var2: float | None
    var3: float | None
    best_rank: int
    rank_medae: dict
    medae: float
    per_benchmark: dict                      # benchmark_id -> held-out MedAE (points)
    probes: list | None
    probes_medae: float | None = None
    probes_note: str = ""
    search_: object = field(default=None, repr=False)
    Zc_: np.ndarray = field(default=None, repr=False)
    benchmark_ids_: list = field(default_factory=list, repr=False)
    predictor_: object = field(default=None, repr=False)

    def to_json(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if not k.endswith("_")}
        d["rank_medae"] = {str(k): v for k, v in self.rank_medae.items()}
        return d


@dataclass
class Transition:
    """Comparison of two consecutive versions (see module doc)."""

    from_label: str
    to_label: str
    n_shared_benchmarks: int
    angles_deg: list
    angle_noise_deg: float | None             # 95% bootstrap level of the largest angle
    probes_changed: int | None
    probe_regret: float | None                # old set's MedAE on the new matrix / new set's - 1
    probes_added: list
    probes_removed: list
    moved_benchmarks: list                    # {benchmark_id, medae_from, medae_to, change}
    worst_models: list                        # {model_id, medae, n_cells, new}
    var2_change: float | None
    alarms: list

    @property
    def max_angle_deg(self) -> float | None:
        return max(self.angles_deg) if self.angles_deg else None

    def to_json(self) -> dict:
        return {**asdict(self), "max_angle_deg": self.max_angle_deg, "alarm": bool(self.alarms)}


@dataclass
class DriftReport:
    """Profiles of every version and the transitions between consecutive ones."""

    profiles: list
    transitions: list
    thresholds: DriftThresholds

    @property
    def alarm(self) -> bool:
        return any(t.alarms for t in self.transitions)

    def to_json(self) -> dict:
        return {"alarm": self.alarm, "thresholds": asdict(self.thresholds),
                "snapshots": [p.to_json() for p in self.profiles],
                "transitions": [t.to_json() for t in self.transitions]}

    def metrics(self) -> dict:
        """Flat numbers of the newest version and transition, for ``dvc metrics diff``."""
        p = self.profiles[-1]
        out = {"snapshot": p.label, "n_models": p.n_models, "n_benchmarks": p.n_benchmarks,
               "n_cells": p.n_cells, "fill": p.fill, "var2": p.var2, "best_rank": p.best_rank,
               "medae": p.medae, "alarm": int(self.alarm)}
        if self.transitions:
            t = self.transitions[-1]
            out.update(max_angle_deg=t.max_angle_deg, angle_noise_deg=t.angle_noise_deg,
                       probes_changed=t.probes_changed,
                       probe_regret=t.probe_regret,
                       var2_change=t.var2_change, n_alarms=len(t.alarms))
        return out


def _variance(Y, scales, n_sub: int) -> tuple:
    subs = complete_submatrices(~np.isnan(Y))[:n_sub]
    if not subs:
        return None, None, None
    v = np.mean([submatrix_variance(Y, scales, r, c) for r, c in subs], axis=0)
    return float(v[0]), float(v[1]), float(v[2])


def _completed_z(Y, scales) -> np.ndarray:
    """Completion of the published rank-2 predictor, z units, (n_models, n_benchmarks)."""
    pred = make_predictor("published").fit(Y, scales)
    tr = ScaleTransform.from_scales(scales).fit(Y)
    return np.nan_to_num(tr.transform(pred.complete(keep_observed=False)))


def _angle_noise(version: "ScoreMatrix", base, cols, cfg: "DriftThresholds") -> float:
    """95th percentile of the largest angle between the subspace ``base`` of ``version``
    (:func:`benchmark_subspace` on ``cols``) and those of ``cfg.n_boot`` bootstrap
    resamples of its models (same columns)."""
    from scipy.linalg import subspace_angles

    if cfg.n_boot < 1:
        return 0.0
    rng = np.random.default_rng(cfg.seed)
    n = version.values.shape[0]
    angles = [np.degrees(subspace_angles(base, benchmark_subspace(
        _completed_z(version.values[rng.integers(0, n, n)], version.scales), cols))).max()
        for _ in range(cfg.n_boot)]  # a loop over resamples, each fit vectorised
    return float(np.quantile(angles, 0.95))


def benchmark_subspace(Zc, cols) -> np.ndarray:
    """Top two right singular vectors of the column-centred ``Zc[:, cols]``, (n_cols, 2)."""
    Z = Zc[:, cols]
    _, _, vt = np.linalg.svd(Z - Z.mean(axis=0), full_matrices=False)
    return vt[:2].T


def _probes(Y, scales, ids, cfg: DriftThresholds, probe_predictor: BasePredictor,
            covariates=None) -> tuple:
    if Y.shape[0] < 3 or Y.shape[1] <= cfg.probes_k:
        return None, None, "matrix too small for probe selection", None
    cap = sample_cap(cfg.probe_max_models, "probe_max_models")
    search = ProbeSearch(probe_predictor, max_models=cap).fit(
        Y, scales, benchmark_ids=ids, **covariate_kwargs(probe_predictor, covariates))
    final = search.select(cfg.probes_k).final
    return list(final.probes), float(final.medae), "", search


def drift_predictors(cfg: DriftThresholds, predictor: BasePredictor | None,
                     probe_predictor: BasePredictor | None) -> tuple:
    """The given predictor objects, or ``cfg``'s methods with their defaults."""
    return (predictor or make_predictor(cfg.method),
            probe_predictor or make_predictor(cfg.probe_method))


def _version_covariates(version, *predictors):
    """The version's model covariates when one of ``predictors`` accepts them, else None."""
    if not any(getattr(p, "accepts_covariates", False) for p in predictors):
        return None
    models = getattr(version, "models", None)
    return None if models is None else model_covariates(models)


def profile(version: "ScoreMatrix", cfg: DriftThresholds | None = None, *,
            predictor: BasePredictor | None = None,
            probe_predictor: BasePredictor | None = None) -> VersionProfile:
    """Profile one matrix version (see module doc). ``predictor`` (tracked) and
    ``probe_predictor`` are unfitted objects, ``cfg.method``/``cfg.probe_method`` with
    their defaults when not given; every fit is a clone."""
    cfg = cfg or DriftThresholds()
    predictor, probe_predictor = drift_predictors(cfg, predictor, probe_predictor)
    Y = check_scores(version.values, version.scales)
    sc, ids = version.scales, list(version.benchmark_ids)
    obs = ~np.isnan(Y)
    folds = make_folds(obs, n_folds=3, seed=cfg.seed, min_scores=3)
    errs = rank_errors(Y, sc, folds, ranks=range(1, cfg.max_rank + 1))
    X = _version_covariates(version, predictor, probe_predictor)
    res = evaluate(predictor, Y, sc, folds, benchmark_ids=ids,
                   **covariate_kwargs(predictor, X))
    pts = dict(zip(ids, point_size(sc, Y).tolist()))
    per_b = {b: m / pts[b] for b, m in zip(res.per_benchmark["benchmark_id"].to_list(),
                                           res.per_benchmark["medae"].to_list()) if m is not None}
    Zc = _completed_z(Y, sc)
    pred = clone(predictor).fit(Y, sc, **covariate_kwargs(predictor, X))
    probes, probes_medae, note, search = _probes(Y, sc, ids, cfg, probe_predictor, X)
    var1, var2, var3 = _variance(Y, sc, cfg.n_submatrices)
    return VersionProfile(
        label=version.label, n_models=int(Y.shape[0]), n_benchmarks=int(Y.shape[1]),
        n_cells=int(obs.sum()), fill=float(obs.mean()), var1=var1, var2=var2, var3=var3,
        best_rank=best_rank(errs),
        rank_medae=dict(zip(errs["rank"].to_list(), errs["medae"].to_list())),
        medae=float(res.overall.medae), per_benchmark=per_b, probes=probes,
        probes_medae=probes_medae, probes_note=note, search_=search,
        Zc_=Zc, benchmark_ids_=ids, predictor_=pred)


def _worst_models(old: VersionProfile, old_v: "ScoreMatrix", new_v: "ScoreMatrix",
                  cfg: DriftThresholds, top: int = 10) -> list:
    """Models of ``new_v`` whose (new or changed) rows the old fit predicts worst."""
    col = {b: k for k, b in enumerate(old_v.benchmark_ids)}
    shared = [(col[b], j) for j, b in enumerate(new_v.benchmark_ids) if b in col]
    if not shared:
        return []
    a_cols, b_cols = np.array(shared).T
    S = np.full((len(new_v.model_ids), len(col)), np.nan)
    S[:, a_cols] = np.asarray(new_v.values, dtype=float)[:, b_cols]
    row_old = {m: k for k, m in enumerate(old_v.model_ids)}
    known = np.array([m in row_old for m in new_v.model_ids])
    prev = np.full_like(S, np.nan)
    if known.any():
        prev[known] = np.asarray(old_v.values)[[row_old[m] for m in np.array(new_v.model_ids)[known]]]
    same = (np.isnan(S) & np.isnan(prev)) | (S == prev)
    obs = ~np.isnan(S)
    rows = np.flatnonzero(~same.all(axis=1) & (obs.sum(axis=1) >= 3))
    if rows.size == 0:
        return []
    S = S[rows]
    rng = np.random.default_rng(cfg.seed)
    part = np.argsort(rng.random(S.shape) + np.where(~np.isnan(S), 0.0, 2.0), axis=1)
    rank_in_row = np.argsort(part, axis=1) % 3
    pred = np.full_like(S, np.nan)
    for f in range(3):
        hide = ~np.isnan(S) & (rank_in_row == f)
        P = old.predictor_.fold_in(np.where(hide, np.nan, S))
        pred[hide] = P[hide]
    pts = point_size(old_v.scales, old_v.values)
    err = np.abs(pred - S) / pts
    n = (~np.isnan(err)).sum(axis=1)
    with np.errstate(all="ignore"):
        med = np.nanmedian(np.where(n[:, None] > 0, err, 0.0), axis=1)
    order = np.argsort(-med)[:top]
    ids = np.array(new_v.model_ids, dtype=object)[rows]
    return [{"model_id": str(ids[k]), "medae": float(med[k]), "n_cells": int(n[k]),
             "new": bool(not known[rows[k]])} for k in order]


def alarm_rule(cfg: DriftThresholds, *, var2: float | None = None,
               var2_change: float | None = None, best_rank: int | None = None,
               angle: float | None = None, angle_noise: float | None = None,
               probes_changed: int | None = None, probe_regret: float | None = None) -> list[str]:
    """The alarms a transition raises under ``cfg`` (see the module doc), one line each;
    a figure that was not measured (None) raises none. The one definition of the rule:
    `compare` and `benchpress.timeline.replay` both call it.

    Parameters
    ----------
    var2 : float, optional
        Two-factor variance of the newer version.
    var2_change : float, optional
        Newer minus older two-factor variance.
    best_rank : int, optional
        The rank with the lowest held-out error on the newer version.
    angle, angle_noise : float, optional
        The largest principal angle between the versions' benchmark subspaces (degrees)
        and its resampling noise level.
    probes_changed : int, optional
        Probes of the newer set not in the older one.
    probe_regret : float, optional
        The older set's MedAE on the newer matrix over the newer set's, minus 1 (None:
        not measured, so a large change counts).
    """
    alarms = []
    if var2 is not None and var2 < cfg.var2_min:
        alarms.append(f"two-factor variance {var2:.3f} < {cfg.var2_min}")
    if var2_change is not None and -var2_change > cfg.var2_drop_max:
        alarms.append(f"two-factor variance fell by {-var2_change:.3f} > {cfg.var2_drop_max}")
    if best_rank is not None and best_rank > cfg.best_rank_max:
        alarms.append(f"held-out error is lowest at rank {best_rank} > {cfg.best_rank_max}")
    if angle is not None and angle > max(cfg.angle_max_deg, angle_noise or 0.0):
        alarms.append(f"benchmark subspace turned {angle:.1f} deg > {cfg.angle_max_deg} "
                      f"and > its resampling noise {angle_noise or 0.0:.1f}")
    if (probes_changed is not None and probes_changed > cfg.probe_changes_max
            and (probe_regret is None or probe_regret > cfg.probe_regret_max)):
        alarms.append(f"{probes_changed} probes changed > {cfg.probe_changes_max}"
                      + ("" if probe_regret is None else
                         f" and the old set is {100 * probe_regret:.0f}% worse"))
    return alarms


def compare(old: VersionProfile, new: VersionProfile, old_v: "ScoreMatrix",
            new_v: "ScoreMatrix", cfg: DriftThresholds | None = None) -> Transition:
    """Compare two consecutive profiles and raise the alarms of ``cfg``."""
    from scipy.linalg import subspace_angles  # here, not at the top: slow to import

    cfg = cfg or DriftThresholds()
    idx_old = {b: k for k, b in enumerate(old.benchmark_ids_)}
    shared = [b for b in new.benchmark_ids_ if b in idx_old]
    angles, noise = [], None
    if len(shared) >= 3:
        idx_new = {b: k for k, b in enumerate(new.benchmark_ids_)}
        cols_new = [idx_new[b] for b in shared]
        A = benchmark_subspace(old.Zc_, [idx_old[b] for b in shared])
        B = benchmark_subspace(new.Zc_, cols_new)
        angles = sorted(np.degrees(subspace_angles(A, B)).tolist(), reverse=True)
        noise = _angle_noise(new_v, B, cols_new, cfg)
    added = removed = []
    changed = regret = None
    if old.probes is not None and new.probes is not None:
        change = probe_set_change(old.probes, new.probes)
        added, removed = change["added"], change["dropped"]
        changed = len(added)
        kept = [b for b in old.probes if b in set(new.benchmark_ids_)]
        if kept and new.search_ is not None and new.probes_medae:
            regret = new.search_.score(kept).medae / new.probes_medae - 1.0
    moved = [{"benchmark_id": b, "medae_from": old.per_benchmark[b],
              "medae_to": new.per_benchmark[b],
              "change": new.per_benchmark[b] - old.per_benchmark[b]}
             for b in shared if b in old.per_benchmark and b in new.per_benchmark]
    moved = sorted(moved, key=lambda d: -abs(d["change"]))[:10]
    dvar = (new.var2 - old.var2) if new.var2 is not None and old.var2 is not None else None
    alarms = alarm_rule(cfg, var2=new.var2, var2_change=dvar, best_rank=new.best_rank,
                        angle=angles[0] if angles else None, angle_noise=noise,
                        probes_changed=changed, probe_regret=regret)
    return Transition(old.label, new.label, len(shared), angles, noise, changed, regret, added,
                      removed, moved,
                      _worst_models(old, old_v, new_v, cfg), dvar, alarms)


def _profile_version(version, cfg, predictor, probe_predictor) -> VersionProfile:
    """:func:`profile` of one version, as an executor's call (module level: it travels to
    worker processes by reference)."""
    return profile(version, cfg, predictor=predictor, probe_predictor=probe_predictor)


def drift(versions, cfg: DriftThresholds | None = None, *,
          predictor: BasePredictor | None = None,
          probe_predictor: BasePredictor | None = None, progress=None,
          executor=None) -> DriftReport:
    """Profile every version (oldest first, :class:`~benchpress.store.matrix.ScoreMatrix`
    each with its ``label``) and compare each with the one before; the predictors as in
    :func:`profile`. ``progress(k, n, label)``, when given, is called as versions are
    profiled (it only reports: the figures are the same without it). ``executor`` (see
    :func:`benchpress.executor.get_executor`; None: this process) profiles the versions,
    each on its own: the same figures wherever they run."""
    cfg = cfg or DriftThresholds()
    versions = list(versions)
    if not versions:
        raise BadInputError("drift needs at least one matrix version")
    predictor, probe_predictor = drift_predictors(cfg, predictor, probe_predictor)
    def told(done, n):  # (in input order when local; a count of those done elsewhere)
        progress(done, n, f"profiled {getattr(versions[done - 1], 'label', None) or ''}")

    profiles = get_executor(executor).map(_profile_version, versions,
                                          progress=None if progress is None else told, cfg=cfg,
                                          predictor=predictor, probe_predictor=probe_predictor)
    transitions = [compare(profiles[k - 1], profiles[k], versions[k - 1], versions[k], cfg)
                   for k in range(1, len(versions))]
    return DriftReport(profiles, transitions, cfg)

"""Drift of the rank-2 structure: synthetic alarms and the two shared matrices as snapshots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.precision import rounded
from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.predict import BenchmarkScales
from benchpress.predict.drift import DriftThresholds, compare, profile
from benchpress.store.matrix import ScoreMatrix

from conftest import BP_2026_05, MATRIX_2026_02, make_home

# about 13 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=13)

N_MODELS, N_BENCH = 80, 30
CFG = DriftThresholds(probe_method="published", max_rank=5)
IDS_M = [f"m{i}" for i in range(N_MODELS)]
IDS_B = [f"b{j}" for j in range(N_BENCH)]
SCALES = BenchmarkScales(np.array(["percent"] * N_BENCH), np.zeros(N_BENCH),
                         np.full(N_BENCH, 100.0))


def synthetic(sample_seed: int, third: float = 0.0, structure_seed: int = 1) -> ScoreMatrix:
    """Logit-scale scores: benchmark bias + a general and a second factor (+ an optional
    third factor of strength ``third``), per-benchmark noise, 85% of cells observed.
    The structure is fixed by ``structure_seed``; noise and mask by ``sample_seed``."""
    g = np.random.default_rng(structure_seed)
    U = g.normal(size=(N_MODELS, 3))
    V = g.normal(size=(N_BENCH, 3)) * [0.4, 0.7, 1.0]
    V[:, 0] += 1.0
    b = 0.5 * g.normal(size=N_BENCH)
    noise = 0.15 * g.uniform(0.5, 3.0, N_BENCH)
    L = b + U[:, :2] @ V[:, :2].T + third * np.outer(U[:, 2], V[:, 2])
    s = np.random.default_rng(sample_seed)
    Y = 100.0 / (1.0 + np.exp(-0.8 * (L + noise * s.normal(size=L.shape))))
    Y[s.random(Y.shape) > 0.85] = np.nan
    return ScoreMatrix.from_arrays(Y, IDS_M, IDS_B, SCALES, label=f"s{sample_seed}-t{third}")


@pytest.fixture(scope="module")
def base():
    v = synthetic(2)
    return v, profile(v, CFG)


def test_resampled_copy_stays_quiet(base):
    v0, p0 = base
    v1 = synthetic(3)
    t = compare(p0, profile(v1, CFG), v0, v1, CFG)
    assert t.alarms == []
    assert t.max_angle_deg < 15
    assert t.n_shared_benchmarks == N_BENCH
    assert p0.best_rank <= 3 and p0.var2 > 0.9


def test_third_factor_fires_the_alarm(base):
    v0, p0 = base
    v1 = synthetic(3, third=1.5)
    p1 = profile(v1, CFG)
    t = compare(p0, p1, v0, v1, CFG)
    assert t.alarms
    assert any("subspace" in a for a in t.alarms)
    assert t.max_angle_deg > max(CFG.angle_max_deg, t.angle_noise_deg)
    assert p1.var2 < p0.var2
    assert len(t.worst_models) == 10 and all(not w["new"] for w in t.worst_models)


def test_thresholds_from_dict():
    assert DriftThresholds.from_dict({"var2_min": 0.7}).var2_min == 0.7
    with pytest.raises(BadInputError, match="unknown drift settings"):
        DriftThresholds.from_dict({"var_min": 0.7})


@pytest.fixture(scope="module")
def two_snapshots(tmp_path_factory, shared_data):
    """The 2026-02 matrix, snapshotted; then the 2026-05 matrix added, snapshotted."""
    from benchpress.store.ingest import ingest
    from benchpress.store.snapshot import create_snapshot

    home = make_home(tmp_path_factory.mktemp("drift") / "ws")
    ingest(home, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    create_snapshot(home, tag="feb")
    ingest(home, str(BP_2026_05), source_id="benchpress-2026-05")
    create_snapshot(home, tag="may")
    return home


@pytest.mark.slow(seconds=11)  # several seconds of fits; `make test` runs it
def test_drift_on_the_shared_matrices(two_snapshots, tmp_path):
    runner = CliRunner()
    metrics, full = tmp_path / "metrics" / "drift.json", tmp_path / "drift_report.json"
    # probe searches on a sample of 20 models (10 held-out fits, not 83 and 100)
    r = runner.invoke(main, ["drift", "--home", str(two_snapshots.root), "--probe-method",
                             "published", "--probe-max-models", "20", "--max-rank", "4",
                             "--out", str(metrics), "--report", str(full)])
    assert r.exit_code == 0, r.output
    assert "feb -> may: principal angles" in r.stdout
    assert r.stdout.rstrip().endswith("drift alarm")
    doc = json.loads(full.read_text())
    feb, may = doc["snapshots"]
    assert (feb["label"], may["label"]) == ("feb", "may")
    assert feb["n_models"] == 83 and may["n_models"] > feb["n_models"]
    assert feb["best_rank"] <= 3 and 0.8 < feb["var2"] < 1
    assert len(feb["probes"]) == 5 and doc["thresholds"]["probe_max_models"] == 20
    (t,) = doc["transitions"]
    assert t["n_shared_benchmarks"] >= 40 and len(t["angles_deg"]) == 2
    # the resampling noise is a real spread, and the angle alarm fires exactly when the
    # largest angle beats both the fixed bound and that noise (README: no alarm here)
    assert 0 < t["angle_noise_deg"] < 90
    turned = any(a.startswith("benchmark subspace turned") for a in t["alarms"])
    assert turned == (t["max_angle_deg"] > max(30.0, t["angle_noise_deg"]))
    assert not doc["alarm"] and r.stdout.rstrip().endswith("no drift alarm")
    assert t["probes_changed"] is not None and t["moved_benchmarks"]
    assert t["worst_models"] and any(w["new"] for w in t["worst_models"])
    m = json.loads(metrics.read_text())
    assert m["snapshot"] == "may" and m["alarm"] == int(doc["alarm"])
    assert all(isinstance(m[k], (int, float)) for k in ("var2", "fill", "medae", "max_angle_deg"))
    r = runner.invoke(main, ["drift", "--home", str(two_snapshots.root), "--from", "nosuch"])
    assert r.exit_code == 1 and "Error: snapshot 'nosuch' not found" in r.output
    r = runner.invoke(main, ["drift", "--home", str(two_snapshots.root), "--param", "n_startz=3"])
    assert r.exit_code == 2 and "Error: unknown parameter 'n_startz' for method 'default'" in r.output


@pytest.mark.slow(seconds=9)  # two snapshots' fits with covariates; `make test` runs it
def test_drift_with_side_information_tracks_that_predictor(two_snapshots, tmp_path):
    common = ["drift", "--home", str(two_snapshots.root), "--max-rank", "2", "--n-boot", "2",
              "--probes-k", "1", "--probe-max-models", "20"]
    # one run of side shows both forms: its table on stdout, its JSON document in --report
    side = CliRunner().invoke(main, [*common, "--method", "side", "--probe-method", "side",
                                     "--param", "n_starts=4",
                                     "--report", str(tmp_path / "side.json")])
    # the default beside it, for the structure only (its probe set is not read: the paper's
    # published predictor searches it in a fraction of the default's time)
    plain = CliRunner().invoke(main, [*common, "--param", "n_starts=4", "--probe-method",
                                      "published", "--format", "json"])
    assert side.exit_code == 0 and plain.exit_code == 0, (side.output, plain.output)
    doc, base = json.loads((tmp_path / "side.json").read_text()), json.loads(plain.stdout)
    assert (doc["method"], doc["probe_method"]) == ("side", "side")
    # the structure is the matrix's own; the held-out error is the tracked predictor's
    # (the --report file holds the figures rounded, `benchpress.precision`; stdout in full)
    assert [s["var2"] for s in doc["snapshots"]] == [rounded(s["var2"]) for s in base["snapshots"]]
    assert all(np.isfinite(s["medae"]) for s in doc["snapshots"])
    # each snapshot's medae: side's 3-fold held-out error there, with the models' covariates
    from benchpress.predict import evaluate, make_folds, make_predictor
    from benchpress.predict.models.covariates import model_covariates
    from benchpress.api.drift_versions import load_versions

    cfg = DriftThresholds()
    want = []
    for version in load_versions(two_snapshots):
        folds = make_folds(~np.isnan(version.values), n_folds=3, seed=cfg.seed, min_scores=3)
        want.append(evaluate(make_predictor("side", n_starts=4), version.values, version.scales,
                             folds, covariates=model_covariates(version.models)).overall.medae)
    assert [s["medae"] for s in doc["snapshots"]] == pytest.approx([rounded(w) for w in want],
                                                                   abs=1e-9)
    assert "medae: held-out, side predictor" in " ".join(side.stdout.split())


def test_sources_take_the_snapshots_that_hold_them(two_snapshots):
    """Without --from/--to, `drift --sources S` compares the snapshots that hold S (a
    registry built through time has months from before S's first version: the first
    snapshot here holds only the February matrix); a version named by --from must hold
    it, and the error says which version does not. An unknown name lists each source
    once (the sources table has a row per version)."""
    from benchpress.api.drift_versions import load_versions
    from benchpress.errors import UsageError
    from benchpress.store.matrix import match_sources

    (may,) = load_versions(two_snapshots, sources=["benchpress-2026-05"])
    assert may.label == "may" and may.values.shape[0] > 80
    assert [v.label for v in load_versions(two_snapshots, sources=["llm-benchmark-matrix"])] \
        == ["feb", "may"]
    with pytest.raises(UsageError) as err:
        load_versions(two_snapshots, sources=["nope"])
    assert str(err.value) == ("--sources: no source matches 'nope'; known: "
                              "llm-benchmark-matrix-2026-02, benchpress-2026-05")
    with pytest.raises(UsageError, match="^feb: --sources: no source matches 'benchpress-2026-05'"):
        load_versions(two_snapshots, "feb", "may", sources=["benchpress-2026-05"])
    with pytest.raises(UsageError) as err:
        match_sources(["a", "a", "b", "a"], ["c"])
    assert str(err.value).endswith("known: a, b")

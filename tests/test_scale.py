"""Scale checks on small synthetic data: the blockwise nearest-model feature equals the dense
one, `matrix_of` equals the `matrix` view's columns, a large registry's `matrix` is refused
with a pointer to `matrix_of`, and the scale ladder runs end to end on a tiny rung."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchpress.errors import BadInputError
from benchpress.predict.intervals.features import nearest_similarity
from benchpress.predict.intervals.features import pair_corr as _pair_corr
from benchpress.predict.size_limits import LIMITS
from benchpress.store import sql
from tests.conftest import CLI, load_script

ROOT = Path(__file__).resolve().parents[1]


def _ladder():
    return load_script(ROOT / "benchmarks" / "scale_ladder.py")


class _Stub:
    """The nearest-model feature of a support on `Z` under the given size limits."""

    def __init__(self, Z, **kw):
        self.Z, self.obs = Z, ~np.isnan(Z)
        self.limits = dataclasses.replace(LIMITS, **{
            f"support_{k}": v for k, v in kw.items()})

    def near_of(self, Zr, *, exclude_self=False):
        return nearest_similarity(Zr, self.Z, self.obs, exclude_self=exclude_self,
                                  limits=self.limits)


def _dense_near(Z, Zr=None):
    """Today's formula: full correlation matrix, then max over models observed on j."""
    obs = ~np.isnan(Z)
    C = _pair_corr(Z if Zr is None else Zr, Z)
    if Zr is None:
        np.fill_diagonal(C, 0.0)
    n_r, n_b = C.shape[0], Z.shape[1]
    i, j = np.repeat(np.arange(n_r), n_b), np.tile(np.arange(n_b), n_r)
    return np.max(C[i] * obs[:, j].T, axis=1, initial=0.0).reshape(n_r, n_b)


@pytest.fixture(scope="module")
def Z():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(70, 12)) + rng.normal(size=(70, 1)) * rng.normal(size=(1, 12))
    Z[rng.random(Z.shape) < 0.4] = np.nan
    Z[0, 2:] = np.nan  # too few scores to correlate: its feature is 0
    return Z


def test_near_feature_equals_the_dense_formula_exactly(Z):
    got = _Stub(Z).near_of(Z, exclude_self=True)
    assert np.array_equal(got, _dense_near(Z))
    assert (got > 0).any() and (got == 0).any()  # a real mix, not a trivial matrix


def test_blockwise_near_feature_matches_dense(Z):
    dense = _dense_near(Z)
    for block in (1, 7, 64):
        got = _Stub(Z, block_rows=block, exact_max_models=10).near_of(Z, exclude_self=True)
        np.testing.assert_allclose(got, dense, rtol=1e-12, atol=1e-12)
    new = Z[:9] + 0.1
    got = _Stub(Z, block_rows=4, exact_max_models=10).near_of(new)
    np.testing.assert_allclose(got, _dense_near(Z, new), rtol=1e-12, atol=1e-12)


def test_bounded_candidates_search_a_seeded_sample(Z):
    exact = _Stub(Z).near_of(Z, exclude_self=True)
    got = _Stub(Z, max_candidates=20, block_rows=16, exact_max_models=10).near_of(
        Z, exclude_self=True)
    assert np.all(got <= exact + 1e-12) and not np.allclose(got, exact)
    again = _Stub(Z, max_candidates=20, block_rows=5, exact_max_models=10).near_of(
        Z, exclude_self=True)
    np.testing.assert_allclose(got, again, rtol=1e-12, atol=1e-12)  # same sample each time
    cand = np.sort(np.random.default_rng(0).choice(Z.shape[0], 20, replace=False))
    obs, C = ~np.isnan(Z), _pair_corr(Z, Z)
    np.fill_diagonal(C, 0.0)
    want = np.stack([np.max(C[:, cand[obs[cand, j]]], axis=1, initial=0.0)
                     for j in range(Z.shape[1])], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def tiny_home(tmp_path_factory):
    mod = _ladder()
    work = tmp_path_factory.mktemp("tiny")
    rows, cols, scores = mod.make_scores(60, 8, 0.3, 1)
    mod.write_json(work / "d.json", 60, 8, rows, cols, scores)
    home = work / "home"
    subprocess.run([*CLI, "init", str(home), "--no-git"], check=True, capture_output=True)
    subprocess.run([*CLI, "ingest", str(work / "d.json"), "--id", "syn", "--home",
                    str(home)], check=True, capture_output=True)
    return home / "registry"


def test_matrix_of_equals_the_matrix_columns(tiny_home):
    wide = sql.query(tiny_home, "SELECT model_id, b0005, b0002 FROM matrix")
    sub = sql.query(tiny_home, "SELECT * FROM matrix_of(['b0005','b0002'])")
    assert sub.columns == ["model_id", "b0005", "b0002"]
    assert sub.equals(wide) and sub.height == 60 and sub["b0005"].null_count() < 60


@pytest.mark.parametrize("bad, says", [
    ("SELECT * FROM matrix_of(['b0001','nope'])", "unknown benchmark 'nope'"),
    ("SELECT * FROM matrix_of('b0001')", "one constant list"),
    ("SELECT * FROM matrix_of(['b0001']) a, matrix_of(['b0002']) b", "one list"),
])
def test_matrix_of_refuses_bad_arguments_in_one_line(tiny_home, bad, says):
    with pytest.raises(BadInputError, match=says):
        sql.query(tiny_home, bad)


def test_a_large_matrix_is_refused_with_a_pointer(tiny_home, monkeypatch):
    monkeypatch.setenv("BENCHPRESS_MATRIX_MAX_CELLS", "100")  # read by the query's process
    # one scan streams (no size limit); two scans need the whole pivot, refused above it
    assert sql.query(tiny_home, "SELECT * FROM matrix LIMIT 5").shape == (5, 9)
    with pytest.raises(BadInputError, match="matrix_of"):
        sql.query(tiny_home, "SELECT * FROM matrix a JOIN matrix b USING (model_id) LIMIT 5")
    got = sql.query(tiny_home, "SELECT * FROM matrix_of(['b0001']) LIMIT 5")
    assert got.shape == (5, 2)
    # a query that does not name the matrix does not pay for it
    assert sql.query(tiny_home, "SELECT count(*) AS n FROM cells")["n"][0] > 0


def test_a_matrix_past_the_fit_caps_is_refused_in_one_line_before_it_is_made(tiny_home, tmp_path,
                                                                            monkeypatch):
    """Issue 27, Medium 8 (ii): a million single-score models asked 7.5 GB for the dense
    matrix alone (1,000 benchmarks), or 4.25 GB for one product in the fit (100), and
    ran past 600 s at 19.3 GB. Scaled down: the 60 x 8 registry against caps of 59
    models and 479 cells (and of 60 and 480, which it fits)."""
    from click.testing import CliRunner

    from benchpress.cli import main
    from benchpress.store.matrix import load_matrix

    monkeypatch.setenv("BENCHPRESS_MAX_FIT_MODELS", str(60))
    monkeypatch.setenv("BENCHPRESS_MAX_FIT_CELLS", str(480))
    assert load_matrix(tiny_home).values.shape == (60, 8)
    monkeypatch.setenv("BENCHPRESS_MAX_FIT_CELLS", str(479))
    with pytest.raises(BadInputError, match=r"^the score matrix \(current\) has 60 models x 8 "
                                            r"benchmarks \(480 cells\), more than the 479 cells "
                                            r".*BENCHPRESS_MAX_FIT_CELLS$"):
        load_matrix(tiny_home, label="current")
    monkeypatch.setenv("BENCHPRESS_MAX_FIT_CELLS", str(480))
    monkeypatch.setenv("BENCHPRESS_MAX_FIT_MODELS", str(59))
    with pytest.raises(BadInputError, match=r"more than the 59 models .*BENCHPRESS_MAX_FIT_MODELS$"):
        load_matrix(tiny_home, label="current")
    home = str(tiny_home.parent)
    for args in (["predict", "--scores", "b0000=50"], ["complete", "--out", str(tmp_path / "x.parquet")],
                 ["evaluate", "--make-folds", "3"]):
        result = CliRunner().invoke(main, [*args, "--home", home])
        assert result.exit_code == 1 and result.stdout == "", (args, result.output)
        assert result.stderr.startswith("Error: the score matrix (current) has 60 models")
        assert len(result.stderr.splitlines()) == 1 and "--sources" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow(seconds=11)  # seconds-long end to end: `make test` runs it, test-quick not
def test_ladder_runs_a_tiny_rung(tmp_path):
    out = tmp_path / "ladder.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale_ladder.py"),
                          "--rungs", "60x10,120x12", "--fill", "0.3", "--timeout", "120",
                          "--steps", "ingest,sql,sql_of", "--workdir", str(tmp_path),
                          "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    for rung in doc["results"]:
        assert all(rung[s]["status"] == "ok" and rung[s]["peak_mb"] > 10
                   for s in ("ingest", "sql", "sql_of"))
    assert "| sql_of | 120x12" in res.stdout and "x" in res.stdout.split("| sql_of | 120x12")[1]

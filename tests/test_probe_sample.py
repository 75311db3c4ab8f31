"""The probe search's bounded sample of left-out models (`ProbeSearch(max_models=...)`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import UsageError
from benchpress.predict import make_predictor
from benchpress.predict.probes import ProbeSearch
from tests.test_probes import FAST, synthetic


def _search(Y, scales, ids, calls=None, **kw):
    report = None if calls is None else (lambda k, n, label: calls.append((k, n)))
    return ProbeSearch(make_predictor("published", **FAST), **kw).fit(
        Y, scales, benchmark_ids=ids, progress=report)


@pytest.fixture(scope="module")
def data():
    return synthetic(seed=1, n_models=16, n_bench=8)


def test_exact_when_the_models_fit_under_the_cap(data):
    Y, scales, ids = data
    exact = _search(Y, scales, ids, max_models=None)
    assert not exact.sampled_ and exact.scored_.tolist() == list(range(Y.shape[0]))
    masks = np.eye(Y.shape[1], dtype=bool)
    for cap in (Y.shape[0], Y.shape[0] + 50):
        capped = _search(Y, scales, ids, max_models=cap)
        assert not capped.sampled_
        np.testing.assert_array_equal(capped.predict_cells(masks), exact.predict_cells(masks))
        a, b = capped.select(3), exact.select(3)
        assert [s.to_json() for s in a.steps] == [s.to_json() for s in b.steps]
        assert a.swaps == b.swaps and a.n_sets_scored == b.n_sets_scored


def test_sampled_search_is_deterministic_and_fits_exactly_max_models(data):
    Y, scales, ids = data
    calls = []
    one = _search(Y, scales, ids, calls, max_models=6, seed=3)
    two = _search(Y, scales, ids, max_models=6, seed=3)
    assert one.sampled_ and one.scored_.size == 6 and len(set(one.scored_.tolist())) == 6
    assert calls == [(k, 6) for k in range(1, 7)]                 # six fits, no more
    assert sum(p is not None for p in one.predictors_) == 6
    np.testing.assert_array_equal(one.scored_, two.scored_)
    a, b = one.select(3), two.select(3)
    assert [s.to_json() for s in a.steps] == [s.to_json() for s in b.steps]
    assert a.final.n_models == 6                                  # only the sample is scored
    assert set(np.unique(one.cell_model_).tolist()) == set(one.scored_.tolist())
    # each sampled model's fit saw every other model, sampled or not
    i = int(one.scored_[0])
    row = np.where(one.mask([0, 1]), Y[i], np.nan)
    full = _search(Y, scales, ids, max_models=None)
    np.testing.assert_allclose(one.predictors_[i].fold_in(row[None]),
                               full.predictors_[i].fold_in(row[None]))
    other = _search(Y, scales, ids, max_models=6, seed=4)
    assert other.scored_.size == 6 and other.scored_.tolist() != one.scored_.tolist()


def test_max_models_below_three_is_refused(data):
    Y, scales, ids = data
    with pytest.raises(UsageError):
        _search(Y, scales, ids, max_models=2)


def test_cli_json_records_the_sample_size(built_2026_05):
    def run(*extra):
        result = CliRunner().invoke(main, ["probes", "--k", "1", "--no-paper-sets", "--swap",
                                           "none", *extra, "--home", str(built_2026_05.root)],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        return result

    doc = json.loads(run("--max-models", "10", "--format", "json").stdout)
    assert doc["sample_size"] == 10 and doc["models_scored"] == 10
    assert doc["n_models_with_scores"] == doc["n_models"] == 84
    assert doc["selection"]["n_models"] == 10
    exact = json.loads(run("--format", "json").stdout)
    assert exact["sample_size"] is None and exact["models_scored"] == 84
    assert exact["selection"]["n_models"] == 84
    table = run("--max-models", "10")
    assert "sampled: 10 of 84 models" in table.stderr
    assert "sampled:" not in run("--max-models", "0").stderr


def test_objective_models_outside_the_sample_are_refused(data):
    from benchpress.errors import BadInputError

    Y, scales, ids = data
    search = _search(Y, scales, ids, max_models=6)
    outside = ~np.isin(np.arange(Y.shape[0]), search.scored_)
    with pytest.raises(BadInputError, match="sample"):
        search.select(2, models=outside)
    assert search.select(1, models=~outside).final.n_models == 6

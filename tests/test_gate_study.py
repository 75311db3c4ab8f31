"""benchmarks/gate_study.py's offset-only fit and its learning newness: the coefficients
held where they were, the offset found where the cells put it, and the paper matrix's
random splits kept out of the trend of newer models when asked."""

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from benchpress.errors import UsageError
from benchpress.predict.models.gate import FEATURES, GATE_COEF, PARTS, TREND
from tests.conftest import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gate_study.py"


@pytest.fixture(scope="module")
def study():
    return load_script(SCRIPT)


def _cells(split: str, meta: bool, t_model: float, n: int = 4) -> pl.DataFrame:
    """``n`` percent cells of one later model (3 known scores), every part at z = 0."""
    return pl.DataFrame({
        "split": [split] * n, "k": [3] * n, "d1": [0.2] * n, "n03": [1] * n, "n06": [3] * n,
        "meta": [meta] * n, "dated": [meta] * n, "reg_noise_t": [0.05] * n, "pop": [100.0] * n,
        "n_train": [500] * n, "t_model": [t_model] * n, "t_newest": [2025.5] * n,
        **{f"z_{p}": [0.0] * n for p in PARTS},
        "tf_mean": [0.0] * n, "tf_std": [1.0] * n, "actual": [50.0] * n})


def test_learning_newness_keeps_paper_splits_out_of_the_trend(study):
    # a paper-split model of 2024 given without metadata, and a yardstick one
    d = pl.concat([_cells("paper", False, 2024.0), _cells("yardstick", False, 2025.6)])
    new_predicted = study.arrays(d)[1][:, TREND.index("new")]
    new_learned = study.arrays(d, learning=True)[1][:, TREND.index("new")]
    assert new_predicted.tolist() == [1.0] * 8  # no date given: a forecast counts it new
    assert new_learned.tolist() == [0.0] * 4 + [1.0] * 4  # its true date says it is not


def test_offset_only_keeps_the_coefficients_and_finds_the_shift(study):
    rng = np.random.default_rng(0)
    n = 400
    F = np.column_stack([np.ones(n), rng.normal(size=(n, len(FEATURES) - 1))])
    T = np.column_stack([np.ones(n), np.zeros((n, len(TREND) - 1))])  # every cell new, k > 3
    Z = np.zeros((n, len(PARTS)))
    available = np.ones_like(Z, dtype=bool)
    mean, std = np.zeros(n), np.ones(n)
    y = np.full(n, 100.0 / (1.0 + np.exp(-0.3)))  # every part says 50, the truth sits 0.3 z up
    gate = study.fit_gate(F, T, Z, available, mean, std, y, l2=0.0, coef=GATE_COEF)
    assert np.array_equal(np.asarray(gate.coef), np.asarray(GATE_COEF, dtype=float))
    assert gate.shift[0] == pytest.approx(0.3, abs=1e-3)


def test_a_registry_of_the_cells_solver_has_no_metadata_half_but_keeps_the_date(study,
                                                                                tmp_path):
    """On the whole registry (the cells solver) the low-rank half takes no metadata, as in
    NeighbourBlend: the gate sees no metadata and no plain half there, while the model's
    date still makes its newness (the offset) and its regression."""
    parts = {"z_side_meta": 0.1, "z_side_nometa": 0.2, "z_kshift": 0.3, "z_regt_meta": 0.4,
             "z_regt_none": 0.5, "regt_noise_meta": 0.01, "regt_noise_none": 0.02,
             "default_meta": 50.0, "default_nometa": 51.0, "side_meta": 52.0,
             "side_nometa": 53.0, "tf_mean": 0.0, "tf_std": 1.0}
    rows = pl.DataFrame({"split": ["yardstick", "wyardstick"], "cutoff": ["2025-06-01"] * 2,
                         "scale": ["percent"] * 2, "has_meta": [True, True],
                         **{c: [v, v] for c, v in parts.items()}})
    path = tmp_path / "parts.parquet"
    rows.write_parquet(path)
    given = study.cells_of([str(path)], "2025-12-01").filter(pl.col("metadata") == "given")
    dense, cells = given.row(0, named=True), given.row(1, named=True)
    assert dense["meta"] and dense["z_low_rank_plain"] == 0.2
    assert not cells["meta"] and np.isnan(cells["z_low_rank_plain"])
    assert dense["dated"] and cells["dated"]
    assert cells["z_regression"] == 0.4 and cells["choose"]


def test_offset_besides_spares_only_dated_models_by_the_named_parts_weights(study):
    """``--offset-besides regression``: a dated model's offset shrinks by the regression's
    weight (a registry where only the regression answers: no offset at all), an undated
    model keeps the whole offset."""
    d = pl.concat([_cells("wpairs", True, 2025.6), _cells("wpairs", False, 2025.6)])
    F, T, Z, available, mean, std, _ = study.arrays(d)
    available[:, :] = False
    available[:, PARTS.index("regression")] = True
    shipped = study.variant_scores(d, F, T, Z, available, mean, std)
    spared = study.variant_scores(d, F, T, Z, available, mean, std,
                                  offset_besides=["regression"])
    assert (shipped > 50.0).all()                       # the offset raises every row
    assert spared[:4].tolist() == [50.0] * 4            # dated: the regression's weight is 1
    assert spared[4:].tolist() == shipped[4:].tolist()  # undated: untouched


def test_beyond_mixes_only_where_the_nearest_models_and_the_regression_disagree(study):
    """``--nearest-share 1 --beyond 1``: a cell whose two parts differ by more than 1 (z)
    takes the nearest models alone; one where they agree keeps the shipped gate."""
    d = pl.concat([_cells("wpairs", False, 2025.6, n=2)] * 2)
    d = d.with_columns(pl.Series("z_neighbours", [2.0, 2.0, 0.5, 0.5]))
    F, T, Z, available, mean, std, _ = study.arrays(d)
    available[:, :] = False
    available[:, [PARTS.index("neighbours"), PARTS.index("regression")]] = True
    shipped = study.variant_scores(d, F, T, Z, available, mean, std)
    mixed = study.variant_scores(d, F, T, Z, available, mean, std, nearest_share=1.0,
                                 beyond=1.0)
    nearest = study.variant_scores(d, F, T, Z, available, mean, std, nearest_share=1.0)
    assert mixed[:2].tolist() == nearest[:2].tolist() != shipped[:2].tolist()
    assert mixed[2:].tolist() == shipped[2:].tolist() != nearest[2:].tolist()
    with pytest.raises(UsageError, match="--beyond needs --nearest-share"):
        study.main(["x.parquet", "--beyond", "1"])  # before any file is read


def test_a_wrong_parts_file_or_date_is_one_line(study, tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet" * 1000)
    other = tmp_path / "other.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(other)
    for argv, said in [([str(tmp_path / "none.parquet")], "none.parquet: not a readable parts file"),
                       ([str(junk)], "junk.parquet: not a readable parts file (parquet"),
                       ([str(other)], "not a parts file of benchmarks/forecast_parts.py (no "
                                      "scale, split column)"),
                       ([str(other), "--split", "2025-13-01"],
                        "--split: '2025-13-01' is not an ISO date")]:
        with pytest.raises(UsageError) as info:
            study.main(argv)
        assert said in str(info.value) and "\n" not in str(info.value)


def test_parts_without_learning_cells_are_one_line(study, monkeypatch):
    """Parts files that hold only check splits (here the AA pairs beside the whole
    registry) give the learning nothing: one line naming the splits they hold, not a
    NumPy broadcast error."""
    monkeypatch.setattr(study, "cells_of", lambda paths, split_at: pl.DataFrame(
        {"split": ["wpairs", "wpairs"], "choose": [False, False]}))
    with pytest.raises(UsageError) as info:
        study.main(["parts.parquet"])
    assert str(info.value) == ("--learn-on yardstick,paper: no learning cells of those "
                               "splits in the parts files (their splits: wpairs)")

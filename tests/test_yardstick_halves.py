"""benchmarks/yardstick_halves.py's tails table: the level-removed MedAE takes each model
reveal's median signed error out of its own cells, and nothing else."""

from pathlib import Path

import polars as pl
import pytest

from tests.conftest import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "yardstick_halves.py"


@pytest.fixture(scope="module")
def halves_module():
    return load_script(SCRIPT)


def _cells(errors: dict, scale="percent") -> pl.DataFrame:
    rows = [{"cutoff": "2025-06-01", "order": "random", "k": 3, "model_id": m,
             "scale": scale, "actual": 50.0, "predicted": 50.0 + e, "abs_error": abs(e)}
            for m, errs in errors.items() for e in errs]
    return pl.DataFrame(rows)


def test_level_removed_takes_out_each_reveal_level(halves_module):
    # model a sits 10 points high, b 10 low; around that level each is off by 1-3 points
    cells = _cells({"a": [9.0, 10.0, 11.0, 13.0], "b": [-12.0, -10.0, -9.0, -8.0]})
    row = halves_module.tails(cells).row(0, named=True)
    assert row["mean"] == pytest.approx(10.25)
    assert row["pct_over_30"] == 0
    # residuals after each reveal's median (a: 10.5, b: -9.5): a -1.5 -0.5 0.5 2.5, b -2.5 -0.5 0.5 1.5
    assert row["level_removed"] == pytest.approx(1.0)


def test_tails_read_percent_cells_only(halves_module):
    cells = pl.concat([_cells({"a": [1.0, 2.0]}), _cells({"a": [400.0]}, scale="elo")])
    row = halves_module.tails(cells).row(0, named=True)
    assert row["mean"] == pytest.approx(1.5) and row["pct_over_30"] == 0


def test_scripts_fail_in_one_line(capsys):
    """`run_script`, which the benchmark scripts end with: one line and the exit code."""
    from benchpress.errors import BadInputError, run_script

    def bad():
        raise BadInputError("snapshot 'latest' not found")

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exc:
        run_script(bad, "yardstick_halves")
    assert exc.value.code == "yardstick_halves: snapshot 'latest' not found"  # exit 1
    with pytest.raises(SystemExit) as exc:
        run_script(interrupted, "yardstick_halves")
    assert exc.value.code == 130
    assert capsys.readouterr().err == "yardstick_halves: interrupted; nothing was written\n"


def test_given_score_check_refuses_bad_thresholds_in_one_line():
    from benchpress.errors import UsageError

    module = load_script(SCRIPT.parent / "given_score_check.py")
    assert module.thresholds_of("2.5,3") == (2.5, 3.0)
    for bad in ("3,x", "-1", "0", ""):
        with pytest.raises(UsageError, match="expected positive numbers"):
            module.thresholds_of(bad)

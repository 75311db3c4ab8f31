"""How far two measurements of one cell fall apart: each benchmark's measurement noise.

Two sources that give a (model, benchmark) value either copy one published number (they
agree exactly) or each measured it (another harness, prompt, sample or run: they differ).
Among the cells whose observations disagree, the spread (max - min; for the usual two
observations, their difference) is the difference of two independent measurements, so a
benchmark's noise, the standard deviation of one measurement, is read from the median
spread as a normal's: ``median / (sqrt(2) * 0.6745)`` (cells that agree are copies and say
nothing about it). A benchmark with few such cells borrows from all the others: its
variance is shrunk towards the pooled one, measured in units of each benchmark's range
(``upper - lower``), with the weight ``n / (n + PRIOR_CELLS)``. A benchmark with neither
(no disagreement of its own and no finite range) has no noise estimate (null).

`compare` counts it for observed scores (`p_ahead`), so that two observed scores 0.6 points
apart are not called 100% sure.

>>> cells = pl.DataFrame({"benchmark_id": ["a", "a", "a", "b"], "n_disagreeing": [1, 1, 0, 0],
...                       "min_score": [70.0, 40.0, 50.0, 10.0], "max_score": [74.0, 42.0, 50.0, 10.0]})
>>> bench = pl.DataFrame({"benchmark_id": ["a", "b", "elo"], "lower": [0.0, 0.0, None],
...                       "upper": [100.0, 10.0, None]})
>>> measurement_noise(cells, bench).with_columns(pl.col("noise").round(3)).rows()
[('a', 3.145, 2), ('b', 0.315, 0), ('elo', None, 0)]
"""

from __future__ import annotations

import math

import polars as pl

__all__ = ["measurement_noise", "PRIOR_CELLS", "SPREAD_TO_SIGMA"]

#: weight of the pooled estimate, in disagreeing cells: a benchmark with this many of its own
#: is half its own estimate, half the pool's
PRIOR_CELLS = 5
#: the median |difference| of two draws of N(0, s^2) is ``s * sqrt(2) * 0.6745``
SPREAD_TO_SIGMA = 1.0 / (math.sqrt(2.0) * 0.6744897501960817)


def measurement_noise(cells: pl.DataFrame, benchmarks: pl.DataFrame) -> pl.DataFrame:
    """Each benchmark's measurement noise (see the module docstring).

    Parameters
    ----------
    cells : polars.DataFrame
        The resolved cells (``benchmark_id``, ``n_disagreeing``, ``min_score``,
        ``max_score``; the registry's `cells` table).
    benchmarks : polars.DataFrame
        ``benchmark_id``, ``lower``, ``upper`` (score units; null when unbounded).

    Returns
    -------
    polars.DataFrame
        One row per benchmark of `benchmarks`, in its order: ``benchmark_id``, ``noise``
        (score units, null when unknown) and ``noise_cells`` (its disagreeing cells).
    """
    spread = (cells.filter(pl.col("n_disagreeing") > 0)
              .select("benchmark_id", (pl.col("max_score") - pl.col("min_score")).alias("d")))
    ranges = benchmarks.select(
        "benchmark_id", (pl.col("upper").cast(pl.Float64) - pl.col("lower").cast(pl.Float64))
        .alias("range"))
    # the pool: every disagreement in units of its benchmark's range (bounded benchmarks)
    relative = spread.join(ranges, on="benchmark_id").filter(pl.col("range") > 0)
    pooled = (relative.select((pl.col("d") / pl.col("range")).median()).item()
              if relative.height else None)
    own = spread.group_by("benchmark_id").agg(
        (pl.col("d").median() * SPREAD_TO_SIGMA).alias("own"), pl.len().alias("n"))
    n = pl.col("n").fill_null(0).cast(pl.Float64)
    prior = (pl.col("range") * (pooled * SPREAD_TO_SIGMA) if pooled is not None
             else pl.lit(None, dtype=pl.Float64))
    prior = pl.when(pl.col("range") > 0).then(prior).otherwise(None)
    shrunk = ((n * pl.col("own").fill_null(0.0) ** 2 + PRIOR_CELLS * prior ** 2)
              / (n + PRIOR_CELLS)).sqrt()
    return (ranges.join(own, on="benchmark_id", how="left", maintain_order="left")
            .select("benchmark_id",
                    pl.when(prior.is_not_null()).then(shrunk).otherwise(pl.col("own"))
                    .alias("noise"),
                    n.cast(pl.Int64).alias("noise_cells")))

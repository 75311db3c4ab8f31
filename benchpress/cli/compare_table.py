"""`compare` for people: the benchmarks where the models differ most, first, in a table that
fits the terminal, and one line that sums every benchmark up.

The table's key comes first: the benchmark, the gap (leader minus runner-up) and
`p_ahead`, then one column per model whose score cells are never wrapped nor cut: "75.6"
observed, "93.6 ±8.1" predicted with half its 90% interval's width, the leader's marked
" *".
When the models' columns do not fit beside the key (three or more models at 80 columns),
each benchmark takes one row per model instead, the leader's first. Rows are ordered by
`relative_gap` (the gap as a share of the benchmark's range: 10 points mean more on a
benchmark that spans 20 than on one that spans 100), and the table stops after `limit`
of them; csv and json hold every benchmark in the registry's order.
"""

from __future__ import annotations

import polars as pl

from benchpress.cli.common import natural_width, terminal_width
from benchpress.cli.scores import score_text, score_with_interval

__all__ = ["compare_view", "compare_summary", "LEADER_MARK", "DEFAULT_LIMIT", "BENCHMARK_WIDTH"]

LEADER_MARK = " *"
DEFAULT_LIMIT = 20  # benchmarks the table shows unless --all or --limit
BENCHMARK_WIDTH = 16  # the side-by-side table may wrap longer benchmark ids, not narrower


def _ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """The benchmarks, biggest gaps (as a share of the range) first; none last."""
    return frame.sort(pl.col("relative_gap").fill_null(-1.0), pl.col("gap").fill_null(-1.0),
                      descending=True, maintain_order=True)


def _cell(frame: pl.DataFrame, name: str) -> pl.Expr:
    """One model's score as text, the leader's marked."""
    bounds = (f"{name}_lower", f"{name}_upper") if f"{name}_lower" in frame.columns else ()
    text = score_with_interval(name, pl.col(f"{name}_src") == "observed", "", *bounds,
                               plus_minus=True)
    return (pl.when(pl.col(name).is_null()).then(pl.lit(""))
            .when(pl.col("leader") == name).then(text + pl.lit(LEADER_MARK))
            .otherwise(text).alias(name))


def compare_view(frame: pl.DataFrame, names: list[str], *, limit: int | None,
                 width: int | None = None) -> tuple[pl.DataFrame, tuple, tuple]:
    """The rows `render` prints for a `compare` frame, with its key and whole columns.

    Parameters
    ----------
    frame : polars.DataFrame
        `Comparison.frame` (one row per benchmark).
    names : list of str
        The models, in the order given.
    limit : int or None
        Benchmarks shown, biggest gaps first (None: all).
    width : int, optional
        The terminal's width (default: `terminal_width()`).

    Returns
    -------
    (rows, key, whole)
        For `render(rows, "table", key=key, whole=whole)`.
    """
    width = width or terminal_width()
    shown = _ordered(frame)
    if limit is not None:
        shown = shown.head(limit)
    wide = shown.select("benchmark_id", score_text(pl.col("gap")).fill_null("").alias("gap"),
                        pl.col("p_ahead").round(2), *[_cell(shown, n) for n in names])
    whole = ("gap", "p_ahead", *names)
    # the benchmark column may wrap its longest ids, not below BENCHMARK_WIDTH
    bench = min(BENCHMARK_WIDTH, max([len("benchmark_id"), *wide["benchmark_id"].str.len_chars()]))
    if natural_width(wide.drop("benchmark_id")) + bench + 3 <= width:
        return wide, ("benchmark_id", *whole), whole
    long = wide.with_row_index("_b").unpivot(
        index=["_b", "benchmark_id", "gap", "p_ahead"], on=names, variable_name="model",
        value_name="score")
    lead = pl.col("score").str.ends_with(LEADER_MARK)
    long = (long.with_columns(pl.col("model").replace_strict(
        {n: k for k, n in enumerate(names)}, return_dtype=pl.Int64).alias("_m"))
        .sort("_b", ~lead, "_m")
        .with_columns(pl.when(pl.col("_b") != pl.col("_b").shift()).then(pl.col("benchmark_id"))
                      .otherwise(pl.lit("")).fill_null(pl.col("benchmark_id")),
                      *(pl.when(lead).then(pl.col(c)).otherwise(None).alias(c)
                        for c in ("gap", "p_ahead")))  # said once, on the first (leader's) row
        .select("benchmark_id", "model", "score", "gap", "p_ahead"))
    return long, ("benchmark_id", "model", "score", "gap", "p_ahead"), ("score", "gap",
                                                                       "p_ahead")


def compare_summary(frame: pl.DataFrame, names: list[str], *, shown: int,
                    sure: float = 0.9) -> str:
    """One line over every benchmark: how many each model leads (and of those, how many
    with `p_ahead` at least `sure`), and what the table shows.

    >>> f = pl.DataFrame({"benchmark_id": ["a", "b", "c"], "leader": ["x", "y", None],
    ...                   "p_ahead": [0.95, 0.6, None]})
    >>> compare_summary(f, ["x", "y"], shown=2)
    'x leads on 1 of 3 benchmarks (1 with p_ahead >= 0.9), y on 1 (0); 1 without both scores; shown: the 2 biggest gaps (--all: every benchmark)'
    """
    n = frame.height
    lead = {m: frame.filter(pl.col("leader") == m) for m in names}
    rated = frame["p_ahead"].null_count() < n  # not on the core install (no scipy)
    parts = [f"{m} {'leads on' if k == 0 else 'on'} {lead[m].height}"
             + (f" of {n} benchmarks" if k == 0 else "")
             + ((f" ({lead[m].filter(pl.col('p_ahead') >= sure).height}"
                 + (f" with p_ahead >= {sure:g})" if k == 0 else ")")) if rated else "")
             for k, m in enumerate(names)]
    open_ = frame.filter(pl.col("leader").is_null()).height
    line = ", ".join(parts) + (f"; {open_} without both scores" if open_ else "")
    if shown < n:
        line += f"; shown: the {shown} biggest gaps (--all: every benchmark)"
    return line

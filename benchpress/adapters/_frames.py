"""Polars helpers of the adapters that reshape whole tables at once."""

from __future__ import annotations

import polars as pl

__all__ = ["conform", "json_object", "open_weights"]


def conform(df: pl.DataFrame, columns: dict[str, pl.DataType]) -> pl.DataFrame:
    """`df` with exactly `columns` (the `base.*_COLUMNS` contracts), in their order and types;
    a column `df` lacks is null."""
    return df.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in columns.items()
                           if c not in df.columns).select(
        pl.col(c).cast(t) for c, t in columns.items())


def json_object(**fields: pl.Expr) -> pl.Expr:
    """Compact JSON text of each row's non-null `fields`, keys sorted (null when every field
    is null): the settings columns' JSON, one expression for the whole table.

    >>> df = pl.DataFrame({"a": ["x", None], "b": [1, None]})
    >>> df.select(json_object(mode=pl.col("a"), n=pl.col("b"))).to_series().to_list()
    ['{"mode":"x","n":1}', None]
    """
    text = (pl.struct(**{k: fields[k] for k in sorted(fields)}).struct.json_encode()
            .str.replace_all(r'"[^"]*":null,?', "").str.replace(r",\}$", "}"))
    return pl.when(text == "{}").then(None).otherwise(text)


def open_weights(licence: pl.Expr) -> pl.Expr:
    """Whether a leaderboard's licence text means open weights: ``Proprietary`` no, a named
    licence (``Apache 2.0``, ``Llama 3 Community``) yes, blank or ``N/A`` unknown (null).

    >>> pl.select(open_weights(pl.Series(["Proprietary", "MIT", "N/A", None]))).to_series().to_list()
    [False, True, None, None]
    """
    low = licence.str.strip_chars().str.to_lowercase()
    return (pl.when(low.is_null() | low.is_in(["", "n/a", "na", "unknown", "-"])).then(None)
            .when(low.str.contains("proprietary")).then(False).otherwise(True))

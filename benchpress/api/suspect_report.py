"""The suspect-cell report of a registry or snapshot: `benchpress suspects`, run by
`benchpress build` too, and `BenchPress.suspects()`.

It joins the check (:class:`benchpress.predict.checks.suspects.SuspectCheck`, fitted on the
folder's cells) with what a reviewer needs: every observation that takes part in cells
(each source's newest version; a cell's winner and the other sources' values for it) is
judged, and each suspect one is listed with its citation (source, version, reference URL,
the source's row) and the reviewed verdict where `schemas/cell_reviews.csv` has one.
Observations a verdict took out of the cells (in the quarantine, field ``review``) are
listed too, judged against the cells without them. Nothing here changes the registry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from benchpress.predict.checks.suspects import SLIPS, SuspectCheck
from benchpress.store.matrix import ScoreMatrix, load_matrix
from benchpress.store.resolve import NOT_OBSERVED, latest_versions
from benchpress.store.verdicts import REVIEW_FIELD
from benchpress.store.tables import read_table
from benchpress.validate.reviews import empty_reviews, read_reviews

__all__ = ["SuspectReport", "find_suspects", "citation_groups", "higher_is_better",
           "REPORT_COLUMNS"]

#: The report's columns, in order (the table format shows the first ones).
REPORT_COLUMNS = ["model_id", "benchmark_id", "score", "expected", "z", "status", "slip",
                  "fits_as", "source_id", "source_version", "reference_url", "verdict",
                  "reviewer", "note", "is_cell", "source_type", "row"]
_CITED = ["model_id", "benchmark_id", "score", "source_id", "source_version",
          "reference_url", "source_type", "row"]


@dataclass(frozen=True)
class SuspectReport:
    """What the check found.

    ``frame`` holds one row per suspect or reviewed observation (:data:`REPORT_COLUMNS`):
    ``expected`` is the cell's prediction from the rest of its row and column (score
    units), ``z`` the value's distance from it in standard deviations, ``status`` is
    ``open`` (suspect, not reviewed), ``reviewed`` (a verdict ``ok`` on a suspect value) or
    ``excluded`` (a verdict took it out of the cells), ``slip`` names the slip that fits
    the value far better (``fits_as`` its value undone; :data:`SLIPS`) or
    ``reversed_group`` (its citation's values for the benchmark read as their complement),
    ``is_cell`` says whether it is the value the cell shows.
    """

    frame: pl.DataFrame
    threshold: float
    n_observations: int    # observations judged (of cells whose row and column are checked)
    n_cells: int           # cells of the matrix
    reversed_groups: list[dict] = field(default_factory=list)

    @property
    def n_open(self) -> int:
        return int((self.frame["status"] == "open").sum())

    def summary(self) -> str:
        """One line for `build`."""
        counts = self.frame["status"].value_counts()
        of = dict(zip(counts["status"].to_list(), counts["count"].to_list()))
        return (f"suspects: {of.get('open', 0)} open of {self.n_observations:,} values "
                f"checked (more than {self.threshold:g} standard deviations from their row "
                f"and column, or a slip), {of.get('reviewed', 0)} reviewed ok, "
                f"{of.get('excluded', 0)} excluded by review: `benchpress suspects`")

    def to_json(self) -> dict:
        return {"threshold": self.threshold, "n_observations": self.n_observations,
                "n_cells": self.n_cells, "n_open": self.n_open,
                "reversed_groups": self.reversed_groups, "suspects": self.frame.to_dicts()}


def _observations(folder: Path) -> pl.DataFrame:
    """The observations that take part in cells, one per (model, benchmark, source): the
    source's earlier row (as `source_values` does), with the cell's winner marked."""
    scores = latest_versions(read_table(folder, "scores")).filter(
        ~pl.col("audit_status").fill_null("").is_in(NOT_OBSERVED))
    if "source_version" not in scores.columns:
        scores = scores.with_columns(pl.lit(None, dtype=pl.String).alias("source_version"))
    cells = read_table(folder, "cells").select("model_id", "benchmark_id",
                                               pl.col("score").alias("_cell"),
                                               pl.col("source_id").alias("_cell_source"))
    return (scores.sort("audit_status", nulls_last=False).with_columns(
                (pl.col("audit_status").fill_null("") == "dropped").alias("_dropped"))
            .sort("_dropped", maintain_order=True)
            .unique(["model_id", "benchmark_id", "source_id"], keep="first", maintain_order=True)
            .join(cells, on=["model_id", "benchmark_id"], how="left")
            .with_columns(((pl.col("source_id") == pl.col("_cell_source"))
                           & ((pl.col("score") - pl.col("_cell")).abs() <= 1e-9))
                          .fill_null(False).alias("is_cell"))
            .select(*_CITED, "is_cell"))


def _excluded(folder: Path) -> pl.DataFrame:
    """The observations a review took out (the quarantine's ``review`` rows)."""
    q = read_table(folder, "quarantine").filter(pl.col("field") == REVIEW_FIELD)
    if q.height == 0:
        return pl.DataFrame(schema={**{c: pl.String for c in _CITED}, "score": pl.Float64,
                                    "is_cell": pl.Boolean}).select(*_CITED, "is_cell")
    records = [json.loads(r) for r in q["record"].to_list()]
    return pl.DataFrame([{c: r.get(c) for c in _CITED} for r in records],
                        schema={**{c: pl.String for c in _CITED}, "score": pl.Float64}
                        ).with_columns(pl.lit(False).alias("is_cell")).select(*_CITED, "is_cell")


def citation_groups(folder: Path, matrix: ScoreMatrix):
    """Each cell's citation (its winner's source and reference URL) as a code: (the cells
    table with the matrix's ``i``, ``j``, the code of each of its rows, the (n_models,
    n_benchmarks) array of codes, -1 where no cell)."""
    model_at = {m: i for i, m in enumerate(matrix.model_ids)}
    bench_at = {b: j for j, b in enumerate(matrix.benchmark_ids)}
    cells = read_table(folder, "cells").with_columns(
        pl.col("model_id").replace_strict(model_at, default=None).alias("i"),
        pl.col("benchmark_id").replace_strict(bench_at, default=None).alias("j"),
        pl.concat_str("source_id", pl.col("reference_url").fill_null(""), separator=" ")
        .alias("citation")).drop_nulls(["i", "j"])
    code = np.unique(cells["citation"].to_numpy().astype(str), return_inverse=True)[1]
    groups = np.full(matrix.values.shape, -1, dtype=np.int64)
    groups[cells["i"].to_numpy(), cells["j"].to_numpy()] = code
    return cells, code, groups


def higher_is_better(matrix: ScoreMatrix) -> np.ndarray:
    """Each benchmark column's direction, (n_benchmarks,) bool (unstated: higher)."""
    return matrix.benchmarks["higher_is_better"].fill_null(True).to_numpy().astype(bool)


def find_suspects(folder: Path, *, schemas_dir: Path | None = None,
                  check: SuspectCheck | None = None,
                  matrix: ScoreMatrix | None = None) -> SuspectReport:
    """The suspect-cell report of the registry or snapshot in ``folder``; verdicts from
    ``schemas_dir/cell_reviews.csv`` (None: none); ``check`` an unfitted
    :class:`SuspectCheck` (default: its defaults); ``matrix`` the folder's whole matrix
    when read already (`load_matrix(folder)`, no `sources`)."""
    check = check if check is not None else SuspectCheck()
    matrix = matrix if matrix is not None else load_matrix(folder)
    model_at = {m: i for i, m in enumerate(matrix.model_ids)}
    bench_at = {b: j for j, b in enumerate(matrix.benchmark_ids)}
    cells, code, groups = citation_groups(folder, matrix)
    hib = higher_is_better(matrix)
    check.fit(matrix.values, matrix.scales, hib, groups)

    observed = pl.concat([_observations(folder).with_columns(pl.lit(False).alias("_out")),
                          _excluded(folder).with_columns(pl.lit(True).alias("_out"))])
    observed = observed.with_columns(
        pl.col("model_id").replace_strict(model_at, default=None).alias("i"),
        pl.col("benchmark_id").replace_strict(bench_at, default=None).alias("j"),
    ).drop_nulls(["i", "j"])
    rows, cols = observed["i"].to_numpy(), observed["j"].to_numpy()
    judged = check.judge(rows, cols, observed["score"].to_numpy())
    slip_names = np.array([s.name for s in SLIPS] + ["reversed_group", ""], dtype=object)
    slip = np.where(judged["in_reversed_group"], len(SLIPS),
                    np.where(judged["slip"] >= 0, judged["slip"], len(SLIPS) + 1))
    observed = observed.with_columns(
        pl.Series("expected", judged["expected"]), pl.Series("z", judged["z"]),
        pl.Series("slip", slip_names[slip].astype(str)).replace("", None),
        pl.Series("fits_as", np.where(judged["in_reversed_group"], judged["complement"],
                                      judged["fits_as"])),
        pl.Series("_suspect", judged["suspect"]),
        pl.Series("_checked", check.checked_[rows, cols]),
    )
    reviews = read_reviews(schemas_dir) if schemas_dir is not None else empty_reviews()
    verdicts = (observed.select("model_id", "benchmark_id", "source_id", "score", "_out")
                .with_row_index("_pos")
                .join(reviews.rename({"score": "_reviewed"}),
                      on=["model_id", "benchmark_id", "source_id"])
                .filter(pl.col("_reviewed").is_null()
                        | ((pl.col("score") - pl.col("_reviewed")).abs() <= 1e-6))
                .unique("_pos", keep="first")
                .select("_pos", "verdict", "reviewer", "note"))
    report = (observed.with_row_index("_pos").join(verdicts, on="_pos", how="left")
              .with_columns(pl.when(pl.col("_out")).then(pl.lit("excluded"))
                            .when(pl.col("verdict") == "ok").then(pl.lit("reviewed"))
                            .otherwise(pl.lit("open")).alias("status"))
              .filter(pl.col("_out") | (pl.col("_suspect") & pl.col("_checked"))
                      | pl.col("verdict").is_not_null())
              .with_columns(pl.col("z").abs().fill_nan(None).alias("_az"))
              .sort(pl.col("status") != "open", "_az", "model_id", "benchmark_id", "source_id",
                    descending=[False, True, False, False, False], nulls_last=True)
              .select(REPORT_COLUMNS))
    rms = {(int(c), int(j)): (g, r) for c, j, g, r in check.group_rms_}
    groups_json = []
    for c, j in check.reversed_groups_.tolist():
        mine = cells.filter((pl.col("j") == j) & (pl.Series(code) == c))
        first = mine.row(0, named=True)
        groups_json.append({
            "benchmark_id": first["benchmark_id"], "source_id": first["source_id"],
            "reference_url": first["reference_url"], "n_cells": mine.height,
            "models": sorted(mine["model_id"].to_list()),
            "rms_z_as_given": float(rms[(c, j)][0]), "rms_z_reversed": float(rms[(c, j)][1])})
    return SuspectReport(report, float(check.threshold),
                         int((check.checked_[rows, cols] & ~observed["_out"].to_numpy()).sum()),
                         int((~np.isnan(matrix.values)).sum()), groups_json)

"""The DVC pipeline's predictor stages end to end (fit -> pretrained -> evaluate ->
new_models -> intervals -> probes -> drift, forecasts -> plot_data), with real DVC in a workspace
assembled from this checkout (see tests/test_pipeline_dvc.py): every stage runs, writes its
metrics and plot data, a second `dvc repro` does nothing, one new score re-runs the data's
stages and the drift plot's and leaves `dvc status` naming every other stage below the data,
and `dvc metrics diff` / `dvc plots diff` compare the revisions.

The pipeline runs on params.yaml with the predictor stages' values shrunk (TINY: fewer
folds, seeds, resamples, known counts and baselines, a probe set of one, and probe searches
on a sample of 20 models): the same wiring; most of a repro was the probe searches
(pretrained, probes, drift; seven in all, ~5 s each with the default exact on the 85 models:
each step of a greedy search scores every candidate on every left-out model, so one probe
costs half of two: 106 s -> 82 s for the whole test, alone on a quiet machine; the sample
(`probes.max_models`, 10 held-out fits) makes each about a second) and process start-up.
Since then: the later_releases stage runs its CLI commands in one process (16 -> 11 s), and
the second repro runs only the stages the drift plot needs, `dvc status` naming the rest
(141 s -> see the README's test-time table).
"""

from __future__ import annotations

import csv
import json
import shutil
import sys

import numpy as np
import polars as pl
import pytest
import yaml

from tests.conftest import REPO
from tests.test_pipeline_dvc import (
    ALL, FEB, MAY, PLOTS, PREDICTOR, RELEASE, commit, dvc, make_workspace, metrics_diff, plots,
    ran, run,
)

# params.yaml's values shrunk for the predictor's stages: the wiring under test is the same
# (every stage runs, reads its params and writes its metrics), with fewer folds, seeds,
# resamples and probes (a greedy search of one probe on a sample of 20 models: its curve and
# set are checked the same way)
TINY = {"evaluate": {"n_folds": 2, "known": "3,5", "new_model_seeds": 2},
        # the counts and baselines the assertions below read (the paper's matrix: the
        # whole registry holds Artificial Analysis's history here)
        # (its 12 months: the release below is dated months after the paper's models)
        "temporal": {"sources": "benchpress,releases", "known": "3", "baselines": "als4,knn",
                     "months": 12},
        "probes": {"k": 1, "max_models": 20},
        "drift": {"n-boot": 3, "max-rank": 3, "n-submatrices": 1},
        # drift and the forecast ledger month by month on Artificial Analysis's history
        "timeline": {"sources": "artificial-analysis", "probe_method": "als4"},
        # one pair of Artificial Analysis versions a month apart
        "later_releases": {"baselines": "als4,knn", "histories": {"artificial-analysis": {
            "source": "artificial-analysis", "pairs": ["2026-04-24>2026-05-22"]}}}}
AA = "artificial-analysis"


def _reviewed_out(source_id: str) -> int:
    """How many of `source_id`'s values a reviewed verdict takes out of the cells."""
    with open(REPO / "schemas" / "cell_reviews.csv", newline="", encoding="utf-8") as f:
        return sum(r["source_id"] == source_id and r["verdict"] != "ok"
                   for r in csv.DictReader(f))


# the paper's 2,604 cells and the release's one, less the values reviewed out of the paper's
EVALUATED_CELLS = 2604 + 1 - _reviewed_out(MAY)


@pytest.mark.slow(seconds=100)
@pytest.mark.usefixtures("shared_data")
def test_full_pipeline_fits_the_predictor_and_reruns_only_what_changed(tmp_path):
    ws = tmp_path / "ws"
    make_workspace(ws, tmp_path / "remote", overrides=TINY)
    (ws / "sources" / f"{FEB}.yaml").unlink()
    for sid in (MAY, AA):  # AA's four versions: two months, April and May
        shutil.copyfile(REPO / "sources" / f"{sid}.yaml", ws / "sources" / f"{sid}.yaml")

    assert ran(dvc(ws, "repro")) == ALL | PREDICTOR
    predictor = json.loads((ws / "metrics" / "predictor.json").read_text())
    # `overall` counts the percent cells where higher is better (each scale apart; 2,462 of
    # them here), never another scale's cells pooled in
    assert 0.9 * EVALUATED_CELLS < predictor["n_cells"] < EVALUATED_CELLS
    assert 3.0 < predictor["medae"] < 5.5
    # drift month by month on AA's history: April (two versions), May (two more)
    drift = json.loads((ws / "metrics" / "drift.json").read_text())
    report = json.loads((ws / "drift" / "report.json").read_text())
    assert [v["label"] for v in report["snapshots"]] == ["2026-04", "2026-05"]
    assert len(report["transitions"]) == 1 and drift["var2"] == report["snapshots"][-1]["var2"]
    assert 0.0 < drift["var2"] <= 1.0 and drift["n_models"] > 300
    # the forecast ledger: April's forecasts scored on what May observed first
    ledger = json.loads((ws / "metrics" / "forecasts.json").read_text())
    assert ledger["months"] == ["2026-04", "2026-05"] and ledger["n_pairs"] == 1
    pair = ledger["per_pair"]["2026-04>2026-05"]
    assert pair["n_cells"] == ledger["n_cells"] > 0 and 0.0 < ledger["medae"] < 20.0
    assert list((ws / "forecasts").glob("*/*.parquet"))  # the ledger itself, a DVC output
    new = json.loads((ws / "metrics" / "new_models.json").read_text())
    assert new["regime"] == "new_models"
    assert len(new["seeds"]) == TINY["evaluate"]["new_model_seeds"]
    assert 3.0 < new["k5_medae"] < new["k3_medae"] < 7.0 and new["k3_n_cells"] > new["k5_n_cells"]
    temporal = json.loads((ws / "metrics" / "temporal.json").read_text())
    months = yaml.safe_load((ws / "params.yaml").read_text())["temporal"]["months"]
    assert len(temporal["cutoffs"]) == months and temporal["method"] == "default"
    assert {"default_k3_medae", "knn_k3_medae", "als4_k3_medae"} <= set(temporal)
    assert all(0.0 < temporal[f"{m}_k3_medae"] < 20.0 for m in ("default", "knn", "als4"))
    assert 0.0 < temporal["default_k3_coverage90"] <= 100.0  # measured (88-92% is the whole
    # registry's figure; the paper matrix alone is too small to calibrate on its own months)
    later = json.loads((ws / "metrics" / "later_releases.json").read_text())
    (pair,) = {r["pair"] for r in later["per_pair"]}
    assert pair == "artificial-analysis 2026-04-24>2026-05-22"
    assert all(0.0 < later[f"{m}_k3_medae"] < 10.0 for m in ("default", "knn", "als4"))
    assert 50.0 < later["default_k5_coverage90"] <= 100.0
    probes = json.loads((ws / "probes" / "probes.json").read_text())
    assert probes["sample_size"] == TINY["probes"]["max_models"] == probes["selection"]["n_models"]
    assert json.loads((ws / "drift" / "report.json").read_text())["thresholds"][
        "probe_max_models"] == TINY["probes"]["max_models"]
    completed = (ws / "fit" / "completed.parquet")
    assert completed.is_file()
    # written to 6 significant digits (`complete --digits 6`): the same bytes on any CPU
    values = pl.read_parquet(completed).drop("model_id").to_numpy().ravel().astype(float)
    values = values[~np.isnan(values)]
    assert values.size > 1000
    assert all(float(f"{v:.5e}") == v for v in values)
    # the stored fit of the newest snapshot answers without a refit, like a fresh fit would
    from benchpress import BenchPress

    stored = BenchPress.from_pretrained(ws / "fit" / "pretrained")
    assert len(stored.artifact["probes"]) == len(steps := probes["selection"]["steps"]) \
        == TINY["probes"]["k"]
    assert stored.artifact["probes"] == probes["selection"]["probes"]  # one search, made once
    row = stored.predict({"gpqa_diamond": 71.2, "hle": 20.1}).frame
    assert row.height == stored.matrix.values.shape[1] > 100 and row["pm"].drop_nulls().len() > 100
    # plot data: the greedy probe curve (one record per k), drift by month (two here) and
    # the ledger by pair of months (one)
    curve = json.loads((ws / "plots" / "probe_curve.json").read_text())
    assert [r["k"] for r in curve] == list(range(1, len(steps) + 1))
    assert [r["medae"] for r in curve] == [s["medae"] for s in steps]
    assert curve[-1]["medae"] == probes["selection"]["medae"]
    versions = json.loads((ws / "plots" / "drift.json").read_text())
    assert [v["version"] for v in versions] == [1, 2] and versions[-1]["var2"] == drift["var2"]
    assert versions[-1]["medae"] == drift["medae"]
    (fc,) = json.loads((ws / "plots" / "forecasts.json").read_text())
    assert fc["months"] == "2026-04>2026-05" and fc["medae"] == ledger["medae"]
    shown = plots(ws, "show")
    assert set(shown) == PLOTS
    assert len(shown["probe_curve"]["values"]) == 2 * len(curve)  # medae and medae_hidden
    assert [v["var2"] for v in shown["drift_structure"]["values"]] == [v["var2"] for v in versions]
    # the fits' figures to 4 significant digits (the same bytes on any CPU; the registry's
    # counts come from the data alone), the ledger's forecasts too
    from benchpress.precision import rounded

    figures = [*(ws / "metrics").glob("*.json"), *(ws / "plots").glob("*.json"),
               ws / "drift" / "report.json", ws / "probes" / "probes.json"]
    for path in figures:
        if path.name != "registry.json":
            doc = json.loads(path.read_text())
            assert rounded(doc) == doc, path
    ledger_cells = pl.read_parquet(next((ws / "forecasts").glob("*/*.parquet")))
    assert ledger_cells["predicted"].round_sig_figs(4).equals(ledger_cells["predicted"])
    commit(ws, "pipeline")

    out = dvc(ws, "repro")
    assert ran(out) == set() and "Data and pipelines are up to date" in out

    # a new score: the data's stages and the plots' run again, and DVC then holds every
    # other stage below the data out of date, through the one dependency that changed
    # (later_releases reads the histories' source configs, not the registry). `dvc status`
    # says so without running them: the full repro was half of this test's time.
    (ws / "sources" / "releases.csv").write_text(RELEASE.format(score="71.3"))
    drawn = {"probes", "drift", "forecasts", "plot_data"}
    assert ran(dvc(ws, "repro", "plot_data")) == ALL - {"registry_metrics"} | drawn
    status = json.loads(run(ws, sys.executable, "-m", "dvc", "status", "--json",
                            stdout_only=True))
    # pretrained also reads the probe set the probes stage chose (its figures moved with
    # the score; the set itself may or may not have)
    (pretrained,) = status.pop("pretrained")
    assert pretrained["changed deps"]["snapshots"] == "modified"
    assert set(pretrained["changed deps"]) <= {"snapshots", "probes/probes.json"}
    assert status == {"registry_metrics": [{"changed deps": {"registry": "modified"}}],
                      "later_releases": [{"changed deps": {"sources": "modified"}}]} | {
        stage: [{"changed deps": {"snapshots": "modified"}}]
        for stage in PREDICTOR - {"later_releases", "pretrained"} - drawn}
    compared = metrics_diff(ws, "HEAD", "--all")
    assert compared["metrics/predictor.json"]["n_cells"] == {"old": predictor["n_cells"],
                                                                "new": predictor["n_cells"],
                                                                "diff": 0}
    assert set(compared) >= {"metrics/registry.json", "metrics/drift.json", "metrics/intervals.json",
                             "metrics/new_models.json"}
    # and the plots across revisions: the committed one beside the new one (May made again
    # with the new score: still two months)
    both = plots(ws, "diff", "HEAD")
    assert set(both) == PLOTS and all(p["revisions"] == ["HEAD", "workspace"] for p in both.values())
    versions = {(v["rev"], v["version"]) for v in both["drift_error"]["values"]}
    assert versions == {("HEAD", 1), ("HEAD", 2), ("workspace", 1), ("workspace", 2)}

"""Fitted-predictor artifacts: save, load bit-identically, refuse damage; the shipped default
artifact; `benchpress fit`; predict/compare reusing the stored fit of an unchanged matrix."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from benchpress import BenchPress
from benchpress.api.artifact import (
    DEFAULT_ARTIFACT, FORMAT_VERSION, load_artifact, matrix_digest, read_manifest,
)
from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.api.fit_store import FitStore
from benchpress.predict import make_predictor
from benchpress.predict.models.als_predictor import ALSPredictor
from tests.conftest import REPO

# about 13 s for the tests `make test-quick` runs (scheduling: long modules start first),
# its default-registry test copying the session's build, which tests/test_suspects.py makes
pytestmark = pytest.mark.duration(seconds=13)

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1, "swe_bench_verified": 70.0}


@pytest.fixture(scope="module")
def fitted(built_2026_05, tmp_path_factory):
    """A small fit of the 2026-05 registry, saved: (BenchPress, artifact folder)."""
    bp = BenchPress.from_snapshot(built_2026_05,
                                  predictor=make_predictor("default", n_starts=5))
    folder = bp.save_pretrained(tmp_path_factory.mktemp("art") / "fit", probes=["gpqa_diamond"])
    return bp, folder


def test_loaded_predictor_is_bit_identical(fitted):
    bp, folder = fitted
    loaded = BenchPress.from_pretrained(folder)
    assert loaded.predict(SCORES).frame.equals(bp.predict(SCORES).frame)
    assert loaded.complete(intervals=True).equals(bp.complete(intervals=True))
    a, b = (x.compare(["gpt-5", "claude-opus-4.5"], new_models={"new": SCORES}).frame
            for x in (bp, loaded))
    assert a.equals(b)
    assert np.array_equal(loaded.predictor.fold_in(np.full(133, np.nan)),
                          bp.predictor.fold_in(np.full(133, np.nan)), equal_nan=True)
    assert loaded.method == "default" and loaded.params == {"low_rank__n_starts": 5}


def test_manifest_records_what_was_fitted(fitted):
    bp, folder = fitted
    doc = read_manifest(folder)
    assert doc["format_version"] == FORMAT_VERSION and doc["method"] == "default"
    assert doc["params"]["low_rank__n_starts"] == 5 and doc["probes"] == ["gpqa_diamond"]
    assert set(doc["calibrators"]) == {"cells", "new_models"}
    assert doc["model_ids"] == bp.matrix.model_ids and doc["matrix_sha256"] == matrix_digest(bp.matrix)
    assert {"arrays.npz", "matrix.parquet", "contracts/benchmarks.csv"} <= set(doc["files"])
    with np.load(folder / "arrays.npz", allow_pickle=False) as npz:  # no object arrays
        assert all(npz[k].dtype != object for k in npz.files)
    assert "pretrained" in repr(BenchPress.from_pretrained(folder))


def _copy(folder, tmp_path):
    return shutil.copytree(folder, tmp_path / "copy")


def test_damaged_file_is_refused_in_one_line(fitted, tmp_path):
    copy = _copy(fitted[1], tmp_path)
    data = bytearray((copy / "arrays.npz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / "arrays.npz").write_bytes(bytes(data))
    with pytest.raises(BadInputError, match="arrays.npz does not match its manifest") as exc:
        BenchPress.from_pretrained(copy)
    assert "\n" not in str(exc.value)


def test_missing_file_and_other_format_version_are_refused(fitted, tmp_path):
    copy = _copy(fitted[1], tmp_path)
    (copy / "models.parquet").unlink()
    with pytest.raises(BadInputError, match="models.parquet is missing"):
        BenchPress.from_pretrained(copy)
    doc = json.loads((fitted[1] / "manifest.json").read_text())
    (copy / "manifest.json").write_text(json.dumps({**doc, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(BadInputError, match="format version"):
        BenchPress.from_pretrained(copy)
    with pytest.raises(BadInputError, match="not a fitted-predictor artifact"):
        BenchPress.from_pretrained(tmp_path / "nowhere")


def _sealed(doc: dict) -> dict:
    """`doc` with its own digest made to match, as a forger would."""
    from benchpress.api.artifact import MANIFEST_DIGEST, manifest_digest

    return {**doc, MANIFEST_DIGEST: manifest_digest(doc)}


def test_edited_manifest_digest_list_cannot_hide_a_changed_matrix(fitted, tmp_path):
    """Rewriting a file and its listed digest still fails: the matrix digest is checked."""
    from benchpress.digest import sha256_of

    copy = _copy(fitted[1], tmp_path)
    cells = pl.read_parquet(copy / "matrix.parquet").with_columns(pl.col("score") + 1)
    cells.write_parquet(copy / "matrix.parquet")
    doc = json.loads((copy / "manifest.json").read_text())
    doc["files"]["matrix.parquet"] = sha256_of(copy / "matrix.parquet")
    (copy / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(BadInputError, match="does not match its own digest"):
        BenchPress.from_pretrained(copy)
    # a forger who seals the manifest again still fails: the matrix digest is checked
    (copy / "manifest.json").write_text(json.dumps(_sealed(doc)))
    with pytest.raises(BadInputError, match="matrix does not match"):
        BenchPress.from_pretrained(copy)


def test_default_artifact_loads_and_predicts_as_a_fresh_fit():
    """The shipped artifact verifies, and a fresh fit of its own matrix with its method
    and parameters predicts the same rows and intervals."""
    from benchpress.predict.state import make_estimator

    bp = BenchPress.from_pretrained()
    doc = bp.artifact
    assert doc["sources"] == ["benchpress", "releases"] and doc["probes"]
    assert (DEFAULT_ARTIFACT / "manifest.json").is_file()
    size = sum(f.stat().st_size for f in DEFAULT_ARTIFACT.rglob("*") if f.is_file())
    assert size < 5e6
    fresh = BenchPress(bp.matrix, make_estimator(doc["method"], doc["params"]),
                       contracts_dir=bp.contracts_dir)
    a, b = bp.predict(SCORES).frame, fresh.predict(SCORES).frame
    assert a.select("benchmark_id", "given").equals(b.select("benchmark_id", "given"))
    for col in ("predicted", "lower", "upper", "trust", "pm"):
        np.testing.assert_allclose(a[col].to_numpy(), b[col].to_numpy(), rtol=1e-9, atol=1e-9)


def test_default_artifact_matches_the_registry_built_from_the_repo(default_registry):
    """`make pretrained` fits params.yaml's predict.sources of the registry built from the
    repository's sources: the shipped artifact holds exactly that matrix."""
    import yaml

    home = default_registry[0]
    sources = yaml.safe_load((REPO / "params.yaml").read_text())["predict"]["sources"]
    built = BenchPress.from_snapshot(home, sources=sources.split(","))
    shipped = load_artifact(DEFAULT_ARTIFACT)
    assert shipped["manifest"]["sources"] == sources.split(",")
    assert matrix_digest(shipped["matrix"]) == matrix_digest(built.matrix), \
        "the shipped artifact is stale: run `make pretrained` and commit it"


# -- benchpress fit and the stored-fit fast path ----------------------------------------
@pytest.fixture
def run(built_2026_05, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", str(tmp_path / "fits"))

    def _run(*args):
        return CliRunner().invoke(main, [str(a) for a in args] + ["--home", built_2026_05.root],
                                  catch_exceptions=False)
    return _run


def test_fit_command_writes_a_loadable_artifact(run, tmp_path):
    result = run("fit", "--out", tmp_path / "a", "--param", "n_starts=3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["counts"]["benchmarks"] == 133 and doc["params"] == {"n_starts": 3}
    bp = BenchPress.from_pretrained(tmp_path / "a")
    assert bp.predict(SCORES).frame.height == 133


def test_predict_reuses_the_stored_fit_of_an_unchanged_matrix(run, tmp_path, monkeypatch):
    args = ("predict", "--scores", "gpqa_diamond=71.2,hle=20.1", "--param", "n_starts=3",
            "--format", "json")
    first = run(*args)
    assert first.exit_code == 0, first.stderr
    assert first.stderr == ""  # progress is drawn only on a terminal
    stored = [d for d in (tmp_path / "fits").iterdir() if not d.name.startswith(".")]
    assert len(stored) == 1 and (stored[0] / "manifest.json").is_file()
    compare = ("compare", "gpt-5", "claude-opus-4.5", "--param", "n_starts=3", "--format", "json")
    before = run(*compare)  # the same fit: compare needs the new-model intervals only
    assert before.exit_code == 0, before.stderr
    assert set(read_manifest(stored[0])["calibrators"]) == {"new_models"}
    cells = run("complete", "--intervals", "--param", "n_starts=3", "--format", "csv")
    assert cells.exit_code == 0, cells.stderr  # adds the calibrator of known models' cells
    assert set(read_manifest(stored[0])["calibrators"]) == {"cells", "new_models"}

    def no_refit(self, Y, scales):
        raise AssertionError("refitted although the matrix did not change")

    monkeypatch.setattr(ALSPredictor, "_fit", no_refit)
    second = run(*args)
    assert second.exit_code == 0 and second.stdout == first.stdout
    again = run(*compare)
    assert again.exit_code == 0 and again.stdout == before.stdout
    monkeypatch.undo()
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", "")  # off: a refit gives the same answer
    assert run(*args).stdout == first.stdout
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", str(tmp_path / "fits"))
    other = run("predict", "--scores", "gpqa_diamond=71.2", "--param", "n_starts=4")
    assert other.exit_code == 0 and len(
        [d for d in (tmp_path / "fits").iterdir() if not d.name.startswith(".")]) == 2


def test_intervals_of_some_rows_equal_those_rows_of_all(fitted):
    """compare computes the intervals of the compared models only: the same numbers."""
    from benchpress.predict.intervals.calibration import complete_intervals

    bp = fitted[0]
    cal, support = bp.calibrator("cells"), bp.support
    full = complete_intervals(bp.predictor, cal, support)
    some = complete_intervals(bp.predictor, cal, support, rows=[5, 0, 17])
    for k in ("predicted", "lower", "upper", "trust"):
        assert np.array_equal(some[k], full[k][[5, 0, 17]], equal_nan=True)


def test_fit_records_the_probe_set_of_a_probes_file_of_the_same_fit(run, tmp_path, monkeypatch):
    """`fit --probes-from` takes the set an earlier `probes --out` chose (the pipeline's
    pretrained stage reuses its probes stage's search), and refuses one chosen for another
    fit in one line."""
    chosen = run("probes", "--k", "2", "--max-models", "10", "--method", "als4",
                 "--out", tmp_path / "p.json")
    assert chosen.exit_code == 0, chosen.stderr
    want = json.loads((tmp_path / "p.json").read_text())["selection"]["probes"]
    made = run("fit", "--out", tmp_path / "a", "--method", "als4",
               "--probes-from", tmp_path / "p.json")
    assert made.exit_code == 0, made.stderr
    assert read_manifest(tmp_path / "a")["probes"] == want and len(want) == 2
    other = run("fit", "--out", tmp_path / "b", "--probes-from", tmp_path / "p.json")
    assert other.exit_code == 1 and not (tmp_path / "b").exists()
    assert "chosen with method 'als4'" in other.stderr and len(other.stderr.splitlines()) == 1
    both = run("fit", "--out", tmp_path / "c", "--method", "als4", "--probes", "2",
               "--probes-from", tmp_path / "p.json")
    assert both.exit_code == 2 and "give one" in both.stderr
    (tmp_path / "junk.json").write_text('{"selection": {"probes": [1, 2]}}')
    junk = run("fit", "--out", tmp_path / "d", "--method", "als4",
               "--probes-from", tmp_path / "junk.json")
    assert junk.exit_code == 1 and "not a `benchpress probes --out` file" in junk.stderr
    monkeypatch.setenv("BENCHPRESS_MAX_CONFIG_BYTES", "100")  # a huge file: refused unread
    huge = run("fit", "--out", tmp_path / "e", "--method", "als4",
               "--probes-from", tmp_path / "p.json")
    assert huge.exit_code == 1 and "is more than a `benchpress probes --out` file may hold" \
        in huge.stderr and len(huge.stderr.splitlines()) == 1


def test_fit_of_a_method_without_fold_in_is_a_usage_error(run, tmp_path):
    result = run("fit", "--out", tmp_path / "k", "--method", "knn")
    assert result.exit_code == 2 and "only the ALS methods" in result.stderr
    assert not (tmp_path / "k").exists()


# -- the user-facing comparisons (on the shipped model: no registry needed) -------------
@pytest.fixture(scope="module")
def shipped():
    return BenchPress.from_pretrained()


def test_a_known_models_own_scores_find_itself_first(shipped):
    m = shipped.matrix
    i = int(np.argmax((~np.isnan(m.values)).sum(axis=1)))  # the best-covered model
    scores = {b: float(v) for b, v in zip(m.benchmark_ids, m.values[i]) if not np.isnan(v)}
    near = shipped.nearest_models(scores, k=4)
    assert near["model_id"][0] == m.model_ids[i]
    assert near["distance"].is_sorted() and near.height == 4


def test_compare_with_known_models_keeps_given_scores(shipped):
    scores = {"GPQA Diamond": 71.2, "hle": 20.1}
    frame = shipped.compare_with_known_models(scores, k=3, name="mine")
    near = shipped.nearest_models(scores, k=3)["model_id"].to_list()
    assert frame.columns == ["benchmark_id", "mine", "mine_pm", *near]
    given = frame.filter(pl.col("benchmark_id").is_in(["gpqa_diamond", "hle"]))
    assert given["mine"].to_list() == [71.2, 20.1] and given["mine_pm"].null_count() == 2
    rest = frame.filter(~pl.col("benchmark_id").is_in(["gpqa_diamond", "hle"]))
    assert rest["mine_pm"].drop_nulls().min() > 0


def test_unknown_names_raise_with_suggestions_unless_ignored(shipped):
    with pytest.raises(BadInputError, match="unknown model 'gpt5'; did you mean 'gpt-5'[?]"):
        shipped.compare_models("gpt5", "claude-opus-4.5")
    with pytest.warns(UserWarning, match="unknown models ignored: gpt5$"):
        kept = shipped.compare_models("gpt5", "gpt-5", "claude-opus-4.5", ignore_unknown=True)
    assert "gpt-5" in kept.columns and "gpt5" not in kept.columns
    with pytest.raises(BadInputError, match="unknown benchmark 'nosuch'$"):
        shipped.compare_models("gpt-5", "claude-opus-4.5", benchmarks=["hle", "nosuch"])
    with pytest.raises(BadInputError, match="unknown benchmark"):
        shipped.compare_with_known_models({"gpqa_diamnd": 70.0})
    with pytest.warns(UserWarning, match="unknown benchmarks ignored: zzz$"):
        near = shipped.compare_with_known_models({"gpqa_diamond": 70.0, "zzz": 1}, k=2,
                                                 ignore_unknown=True)  # left out, as asked
    assert "zzz" not in near["benchmark_id"].to_list() and near.width == 5
    with pytest.warns(UserWarning, match="unknown benchmarks ignored: zzz$"):
        new = shipped.compare_models("gpt-5", scores={"mine": {"hle": 20.1, "zzz": 3}},
                                     ignore_unknown=True)
    assert new.filter(pl.col("benchmark_id") == "hle")["mine"].to_list() == [20.1]


@pytest.fixture
def force_sparse(monkeypatch):
    """Every fit takes the sparse path (as a large registry's would)."""
    import benchpress.predict.intervals.calibration as intervals_mod
    import benchpress.predict.models.als_predictor as predictor_mod
    import benchpress.predict.models.blend as blend_mod

    monkeypatch.setattr(predictor_mod, "use_sparse", lambda *a, **k: True)
    monkeypatch.setattr(blend_mod, "use_sparse", lambda *a, **k: True)  # the default's half
    monkeypatch.setattr(intervals_mod, "use_sparse", lambda *a, **k: True)


def test_a_sparse_fit_predicts_again_without_loading_the_matrix(run, tmp_path, monkeypatch,
                                                                 force_sparse):
    args = ("predict", "--scores", "gpqa_diamond=71.2,hle=20.1", "--method", "als4",
            "--param", "n_starts=3", "--format", "json")
    first = run(*args)
    assert first.exit_code == 0, first.stderr
    fits = tmp_path / "fits"
    (stored,) = [d for d in fits.iterdir() if not d.name.startswith(".")]
    doc = read_manifest(stored)
    assert doc["sparse"] and "rows.npz" in doc["files"]
    assert len(list((fits / ".index").iterdir())) == 1
    (fits / ".index" / "stale").write_text("no-such-fit")  # an entry of a pruned fit

    def refused(*a, **k):
        raise AssertionError("the matrix was loaded or refitted")

    originals = BenchPress.__dict__["from_snapshot"], ALSPredictor._fit
    monkeypatch.setattr(BenchPress, "from_snapshot", refused)
    monkeypatch.setattr(ALSPredictor, "_fit", refused)
    second = run(*args)
    assert second.exit_code == 0, second.stderr
    assert second.stdout == first.stdout
    lite = load_artifact(stored, lite=True)
    full = load_artifact(stored)
    assert lite["matrix"].values.shape == (0, full["matrix"].values.shape[1])
    row = np.full(full["matrix"].values.shape[1], np.nan)
    row[:4] = [50.0, 60.0, 40.0, 55.0]
    np.testing.assert_array_equal(lite["predictor"].fold_in(row), full["predictor"].fold_in(row))
    monkeypatch.setattr(BenchPress, "from_snapshot", originals[0])
    monkeypatch.setattr(ALSPredictor, "_fit", originals[1])
    other = run(*args[:-2], "--param", "n_starts=4", "--format", "json")
    assert other.exit_code == 0  # another fit: its entry written, stale gone
    assert not (fits / ".index" / "stale").exists()


def test_a_sparse_default_is_stored_whole_and_mixes_its_nearest_models(run, tmp_path,
                                                                       monkeypatch, force_sparse):
    """The default's new models are mixed with their nearest registered models on the
    cells solver too, so its stored fit keeps its rows: predicting again loads it whole
    (no refit) and prints the same numbers; a lite load is refused in one line."""
    args = ("predict", "--scores", "gpqa_diamond=71.2,hle=20.1", "--param",
            "low_rank__n_starts=3", "--format", "json")
    first = run(*args)
    assert first.exit_code == 0, first.stderr
    (stored,) = [d for d in (tmp_path / "fits").iterdir() if not d.name.startswith(".")]
    doc = read_manifest(stored)
    assert doc["sparse"] and doc["class"] == "NeighbourBlend" and "rows.npz" not in doc["files"]
    fitted = load_artifact(stored)["predictor"]
    assert fitted.neighbours_.models_ is not None and not fitted.mixes_registered_

    def refused(*a, **k):
        raise AssertionError("refitted")

    monkeypatch.setattr(ALSPredictor, "_fit", refused)
    again = run(*args)
    assert again.exit_code == 0, again.stderr
    assert again.stdout == first.stdout
    with pytest.raises(BadInputError, match="not a blend, whose nearest models are its rows"):
        load_artifact(stored, lite=True)


def test_lite_load_is_refused_for_a_dense_fit(fitted):
    with pytest.raises(BadInputError, match="only an artifact of a cells-solver fit .* loads lite"):
        load_artifact(fitted[1], lite=True)


# -- side information (`--method side`): stored and reused like the ALS methods -----------
@pytest.fixture(scope="module")
def side_fitted(built_2026_05, tmp_path_factory):
    bp = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("side", n_starts=4))
    return bp, bp.save_pretrained(tmp_path_factory.mktemp("side") / "fit")


def test_side_artifact_is_bit_identical_with_its_covariates(side_fitted):
    bp, folder = side_fitted
    assert bp.predictor.covariates_ is not None  # the registry's model rows reached the fit
    doc = read_manifest(folder)
    assert doc["method"] == "side" and set(doc["calibrators"]) == {"cells", "new_models"}
    loaded = BenchPress.from_pretrained(folder)
    assert loaded.predictor.interval_logit_rule_ == "none"
    assert loaded.support.transform.logit.sum() == 0  # its own interval space, restored
    meta = {"provider": "OpenAI", "release_date": "2025-10-01", "is_reasoning": True}
    for a, b in ((bp.predict(SCORES), loaded.predict(SCORES)),
                 (bp.predict(SCORES, metadata=meta), loaded.predict(SCORES, metadata=meta)),
                 (bp.predict_model("gpt-5"), loaded.predict_model("gpt-5"))):
        assert a.frame.equals(b.frame)
    assert loaded.complete(intervals=True).equals(bp.complete(intervals=True))
    # metadata moves a new model's row: the restored prior is in use, not the default's
    assert not loaded.predict(SCORES, metadata=meta).frame.equals(loaded.predict(SCORES).frame)


def test_side_artifact_refuses_unknown_arrays_and_spaces(side_fitted, tmp_path):
    folder = _copy(side_fitted[1], tmp_path)
    doc = json.loads((folder / "manifest.json").read_text())
    for key, value in (("side_arrays", ["__class__"]),
                       ("support_space", {"logit_rule": "probit", "eps": 0.5})):
        json_doc = _sealed({**doc, key: value})
        (folder / "manifest.json").write_text(json.dumps(json_doc))
        with pytest.raises(BadInputError, match="unknown (side arrays|interval space)"):
            load_artifact(folder)
    # arrays of the wrong shape (even with digests made to match) are refused too
    from benchpress.predict.state import fitted_state, restore_state

    bp = side_fitted[0]
    arrays, meta = fitted_state(bp.predictor, support=bp.support)
    restore_state(arrays, meta, bp.matrix.values, bp.scales)  # as saved: fine
    arrays["side_effects"] = arrays["side_effects"][:, :5]
    with pytest.raises(BadInputError, match="side_effects"):
        restore_state(arrays, meta, bp.matrix.values, bp.scales)


def test_an_artifact_loads_in_the_interval_space_it_was_made_in(built_2026_05, tmp_path):
    """Every artifact records its interval space. One written before it was recorded (a fit
    without side information, when the margin was 0.05) loads in that margin, the one its
    calibrators were fitted in, not today's."""
    from benchpress.predict.intervals.features import EPS, LOGIT_RULE
    from benchpress.predict.state import LEGACY_EPS

    bp = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("als4", n_starts=2))
    folder = bp.save_pretrained(tmp_path / "fit")
    doc = json.loads((folder / "manifest.json").read_text())
    assert doc["support_space"] == {"logit_rule": LOGIT_RULE, "eps": EPS}
    loaded = BenchPress.from_pretrained(folder)
    assert loaded.support.transform.eps == EPS
    assert loaded.predict(SCORES).frame.equals(bp.predict(SCORES).frame)
    without = {k: v for k, v in doc.items() if k != "support_space"}
    (folder / "manifest.json").write_text(json.dumps(_sealed(without)))
    legacy = BenchPress.from_pretrained(folder)
    assert legacy.support.transform.eps == LEGACY_EPS != EPS
    a, b = (x.predict(SCORES).frame for x in (loaded, legacy))
    assert a["predicted"].equals(b["predicted"]) and not a.equals(b)  # its intervals moved


def test_side_with_extra_ranks_is_not_stored(built_2026_05, tmp_path):
    from benchpress.errors import UsageError

    bp = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor(
        "side", n_starts=2, extra_ranks=(3,)))
    with pytest.raises(UsageError, match="extra_ranks"):
        bp.save_pretrained(tmp_path / "x")
    stored = BenchPress(bp.matrix, bp.estimator, store=FitStore(tmp_path / "fits"))
    assert stored.fit() is stored and not (tmp_path / "fits").exists()


def test_predict_side_reuses_its_stored_fit_keyed_by_the_covariates(run, tmp_path,
                                                                     monkeypatch,
                                                                     built_2026_05):
    from benchpress.predict.models.side_info import SideInfoPredictor

    args = ("predict", "--method", "side", "--scores", "gpqa_diamond=71.2,hle=20.1",
            "--param", "n_starts=3", "--format", "json")
    first = run(*args)
    assert first.exit_code == 0, first.stderr

    def no_refit(self, Y, scales):
        raise AssertionError("refitted although the matrix did not change")

    with monkeypatch.context() as m:
        m.setattr(SideInfoPredictor, "_fit", no_refit)
        assert run(*args).stdout == first.stdout
    # the same scores with other model metadata are another fit (the key holds the covariates)
    store = FitStore(tmp_path / "fits")
    bp = BenchPress.from_snapshot(built_2026_05, predictor=make_predictor("side", n_starts=3),
                                  store=store)
    bp.fit(("cells", "new_models"))
    n = len([d for d in (tmp_path / "fits").iterdir() if not d.name.startswith(".")])
    models = bp.matrix.models.with_columns(pl.lit(None, dtype=pl.Boolean).alias("is_reasoning"))
    other = BenchPress(dataclasses.replace(bp.matrix, models=models),
                       make_predictor("side", n_starts=3), store=FitStore(tmp_path / "fits"))
    other.fit(("cells", "new_models"))
    assert len([d for d in (tmp_path / "fits").iterdir() if not d.name.startswith(".")]) == n + 1

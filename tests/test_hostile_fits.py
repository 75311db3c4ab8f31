"""Stored fits against tampering, kills and odd content (issue 45, rows 2, 5, 8, 9, 10): a
fit read from the cache or a `--pretrained` folder is verified whole (one digest over every
file, the parameters and the calibrators), the cache's key is checked against the content,
an entry that fails is fitted again once and replaced, what killed writes left is swept,
the index stays bounded, and `fit --out` recovers from a swap cut short."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from benchpress import BenchPress
from benchpress.api.artifact import MANIFEST_DIGEST, manifest_digest
from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.api.fit_store import INDEX_DIR, INDEX_PER_FIT, FitStore
from benchpress.predict import make_predictor
from tests.conftest import synthetic_home

pytestmark = pytest.mark.duration(seconds=12)

N_MODELS, N_BENCH = 40, 8
SCORES = {"b0": 60.0, "b1": 40.0}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A small synthetic registry (rank-2 scores)."""
    return synthetic_home(tmp_path_factory.mktemp("fits"), N_MODELS, N_BENCH, seed=3, gap=4)


def _bp(home, store, method="als4", **params):
    return BenchPress.from_snapshot(home, predictor=make_predictor(method, **params), store=store)


def _entry(bp) -> str:
    return FitStore.key(bp.matrix, bp.estimator, bp.covariates)


def _edit_manifest(folder, edit, *, seal: bool) -> None:
    doc = json.loads((folder / "manifest.json").read_text())
    edit(doc)
    if seal:  # as a forger who knows the format would
        doc[MANIFEST_DIGEST] = manifest_digest(doc)
    (folder / "manifest.json").write_text(json.dumps(doc))


@pytest.fixture
def cache(home, tmp_path):
    """A cache folder holding the fits of als4 and the default (2 starts each): {method:
    (the BenchPress that made it, its answer to SCORES, its entry's name)}."""
    folder = tmp_path / "fits"
    made = {}
    for method, params in (("als4", {"n_starts": 2}), ("default", {"n_starts": 2})):
        bp = _bp(home, FitStore(folder), method, **params)
        made[method] = (bp, bp.predict(SCORES).frame, _entry(bp))
    return folder, made


def _reread(home, folder, method, params):
    """A fresh store over `folder` asked for the fit: (store, answer)."""
    store = FitStore(folder)
    bp = _bp(home, store, method, **params)
    return store, bp.predict(SCORES).frame


# -- row 2: one digest over everything -----------------------------------------------------
@pytest.mark.parametrize("edit", [
    lambda d: d["params"].update(knn_k=1),
    lambda d: d["calibrators"]["new_models"].update(q=d["calibrators"]["new_models"]["q"] + 4)])
def test_an_edited_parameter_or_calibrator_of_a_cached_fit_is_refitted(home, cache, edit):
    folder, made = cache
    bp, answer, key = made["default"]
    _edit_manifest(folder / key, edit, seal=False)
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(answer)  # refitted, the same numbers
    assert _reread(home, folder, "default", {"n_starts": 2})[0].n_fits == 0  # and replaced: read next


def test_an_edited_pretrained_folder_is_refused_in_one_line(home, tmp_path):
    bp = _bp(home, FitStore(), "als4", n_starts=2)
    out = bp.save_pretrained(tmp_path / "pre")
    for edit in (lambda d: d["params"].update(n_starts=1),
                 lambda d: next(iter(d["calibrators"].values())).update(q=7.25)):
        shutil.copytree(out, tmp_path / "edited", dirs_exist_ok=True)
        _edit_manifest(tmp_path / "edited", edit, seal=False)
        with pytest.raises(BadInputError, match="does not match its own digest") as exc:
            BenchPress.from_pretrained(tmp_path / "edited")
        assert "\n" not in str(exc.value)
    assert BenchPress.from_pretrained(out).predict(SCORES).frame.equals(bp.predict(SCORES).frame)


# -- row 8: the key is checked against the content ------------------------------------------
def test_swapped_entries_are_not_served_for_each_other(home, cache):
    folder, made = cache
    (a, a_answer, a_key), (_, d_answer, d_key) = made["als4"], made["default"]
    os.rename(folder / a_key, folder / "swap")
    os.rename(folder / d_key, folder / a_key)
    os.rename(folder / "swap", folder / d_key)
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(d_answer) and not again.equals(a_answer)
    store, again = _reread(home, folder, "als4", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(a_answer)
    assert _reread(home, folder, "als4", {"n_starts": 2})[0].n_fits == 0


def test_a_forged_npz_sealed_again_is_not_served(home, cache):
    """The default's entry given als4's arrays, every digest made to match."""
    from benchpress.digest import sha256_of

    folder, made = cache
    (_, _, a_key), (_, d_answer, d_key) = made["als4"], made["default"]
    shutil.copyfile(folder / a_key / "arrays.npz", folder / d_key / "arrays.npz")
    _edit_manifest(folder / d_key, lambda d: d["files"].update(
        {"arrays.npz": sha256_of(folder / d_key / "arrays.npz")}), seal=True)
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(d_answer)


def test_a_symlinked_entry_is_removed_not_followed(home, cache, tmp_path):
    folder, made = cache
    (_, _, a_key), (_, d_answer, d_key) = made["als4"], made["default"]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(folder / d_key, elsewhere)
    shutil.rmtree(folder / d_key)
    (folder / d_key).symlink_to(elsewhere)  # an identical fit, but not the store's own
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(d_answer)
    assert not (folder / d_key).is_symlink() and (folder / d_key / "manifest.json").is_file()
    assert (elsewhere / "manifest.json").is_file()  # what the link pointed to is untouched


@pytest.mark.parametrize("name", ["../outside", "/tmp", "{a_key}/../{a_key}", "{a_key}"])
def test_an_index_entry_naming_anything_but_its_fit_is_not_served(home, cache, name):
    folder, made = cache
    a, _, a_key = made["als4"]
    store = FitStore(folder)
    default = make_predictor("default", n_starts=2)
    (folder / INDEX_DIR).mkdir(exist_ok=True)
    (folder / INDEX_DIR / store.folder_key(a.folder, None, default)).write_text(
        name.format(a_key=a_key))  # the als4 fit, or outside the store, for the default's
    assert store.lookup(a.folder, None, default, regimes=("cells",)) is None
    fit = store.lookup(a.folder, None, make_predictor("als4", n_starts=2), regimes=())
    assert fit is None or fit.predictor.method == "als4"


# -- row 9: wrong types and truncation: refitted, and replaced -----------------------------
@pytest.mark.parametrize("edit", [
    lambda d: d.update(params=["knn_k", 5]), lambda d: d.update(calibrators="cells"),
    lambda d: d["calibrators"].update(new_models=[1, 2]), lambda d: d.update(method=7)])
def test_a_manifest_field_of_the_wrong_type_is_refitted_not_an_internal_error(home, cache, edit):
    folder, made = cache
    _, answer, key = made["default"]
    _edit_manifest(folder / key, edit, seal=True)
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(answer)
    assert _reread(home, folder, "default", {"n_starts": 2})[0].n_fits == 0


def test_a_truncated_manifest_is_refitted_once_and_replaced(home, cache):
    folder, made = cache
    _, answer, key = made["default"]
    text = (folder / key / "manifest.json").read_text()
    (folder / key / "manifest.json").write_text(text[:len(text) // 2])
    store, again = _reread(home, folder, "default", {"n_starts": 2})
    assert store.n_fits == 1 and again.equals(answer)
    assert _reread(home, folder, "default", {"n_starts": 2})[0].n_fits == 0


# -- row 10: leftovers of killed writes, a bounded index --------------------------------------
def test_what_killed_writes_left_is_swept_at_the_next_write(home, cache):
    folder, made = cache
    _, _, key = made["default"]
    left = [folder / f".{key}.tmp-{k}abc" for k in range(5)] + [folder / f"{key}.old"]
    for d in left:
        shutil.copytree(folder / key, d)
    mine = folder / ".my-own.tmp-1"
    mine.mkdir()
    _reread(home, folder, "als4", {"n_starts": 3})  # another fit: a write
    assert not any(d.exists() for d in left) and mine.is_dir()


def test_the_index_stays_bounded(home, tmp_path):
    store = FitStore(tmp_path / "fits", keep=1)
    bp = _bp(home, store, "als4", n_starts=2)
    bp.fitted
    key = _entry(bp)
    for k in range(3 * INDEX_PER_FIT):  # as many rebuilds of an unchanged registry
        store._index(f"{k:032x}", key)
    entries = list((tmp_path / "fits" / INDEX_DIR).iterdir())
    assert 0 < len(entries) <= INDEX_PER_FIT * store.keep


# -- row 5: a swap cut short ------------------------------------------------------------------
@pytest.mark.parametrize("cut", ["old beside the new", "old alone", "half-removed trash"])
def test_fit_out_recovers_from_a_swap_cut_short(home, tmp_path, cut):
    """The states a kill during `fit --out DIR`'s folder swap leaves; the next run succeeds
    (it failed with ENOTEMPTY naming the wrong folder until DIR.old was removed by hand)."""
    out = tmp_path / "out"
    argv = ["fit", "--home", str(home.root), "--method", "als4", "--out", str(out)]
    first = CliRunner().invoke(main, argv)
    assert first.exit_code == 0, first.output
    old = tmp_path / "out.old"
    if cut == "old beside the new":
        shutil.copytree(out, old)
    elif cut == "old alone":
        os.rename(out, old)
    else:
        shutil.copytree(out, old)
        os.rename(old, tmp_path / ".out.trash-x1")
        (tmp_path / ".out.trash-x1" / "arrays.npz").unlink()
    again = CliRunner().invoke(main, argv)
    assert again.exit_code == 0, again.output
    assert not old.exists() and not list(tmp_path.glob(".out.*"))
    BenchPress.from_pretrained(out)


def test_a_folder_of_the_users_named_like_the_aside_is_never_removed(home, tmp_path):
    out = tmp_path / "out"
    argv = ["fit", "--home", str(home.root), "--method", "als4", "--out", str(out)]
    assert CliRunner().invoke(main, argv).exit_code == 0
    (tmp_path / "out.old").mkdir()
    (tmp_path / "out.old" / "notes.txt").write_text("mine")
    again = CliRunner().invoke(main, argv)
    assert again.exit_code == 1 and "out.old: in the way" in again.output
    assert (tmp_path / "out.old" / "notes.txt").read_text() == "mine"
    BenchPress.from_pretrained(out)

"""Shared fixtures: the real data beside the repo, and fresh registry workspaces."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# One BLAS thread per process, set before numpy loads OpenBLAS (here, and in everything the
# tests start: xdist's workers, the CLI and DVC as processes, Dask's workers inherit it).
# `make test` runs two workers on two cores: a second BLAS thread in each only competes with
# the other worker, and OpenBLAS's waiting threads spin (about 20% more CPU-seconds for the
# same tests, measured). The heavy loops run on one thread anyway (benchpress/blas_threads.py).
# Likewise one polars thread: each of the tests' hundreds of thousands of small polars
# queries handed work to a second thread that had to wait for the other worker's core (a
# small query 0.15 ms -> 0.07 ms with the other core busy; the whole suite run twice in one
# checkout 6:30 -> 5:33, user CPU 573 -> 493 s; clean clones' .ci/run 5:46 -> 5:27 of
# tests). polars reads it at its first query. tests/test_thread_counts.py checks that one
# thread and two give the same tables and figures. A value already in the environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "POLARS_MAX_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

from benchpress.home import Home  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
BP_2026_05 = SHARED_DATA / "benchpress-2026-05" / "data.json"
MATRIX_2026_02 = SHARED_DATA / "llm-benchmark-matrix-2026-02" / "llm_benchmark_data.json"
# the `benchpress` command as a user runs it: the environment's script (else its entry point)
_SCRIPT = Path(sys.executable).with_name("benchpress")
CLI = [str(_SCRIPT)] if _SCRIPT.is_file() else [
    sys.executable, "-c", "import sys; from benchpress.cli import main; sys.exit(main())"]


def _expected_seconds(item) -> float:
    """A test's expected run time for scheduling: `@pytest.mark.slow(seconds=N)` on the
    longest ones (measured on a 2-core machine, two workers), 1 for another slow test, else
    0 (a module's other tests are counted by its `duration` mark, see below). A module's
    `pytestmark = pytest.mark.slow(seconds=N)` is the whole module's N, counted once (by
    `_module_seconds`), not N for each of its tests."""
    mark = next(item.iter_markers("slow"), None)
    if mark is None or mark not in item.own_markers:
        return 0.0
    return float(mark.kwargs.get("seconds", 1))


def _module_seconds(item) -> float:
    """The expected seconds of a module as it runs here: its `pytestmark =
    pytest.mark.duration(seconds=N)` (its tests not marked slow, what `make test-quick`
    runs of it), plus the N of a module-wide `pytest.mark.slow(seconds=N)`."""
    module = item.getparent(pytest.Module)
    marks = {m.name: m for m in (module.own_markers if module is not None else [])}
    seconds = float(marks["duration"].kwargs["seconds"]) if "duration" in marks else 0.0
    if "slow" in marks:
        seconds += float(marks["slow"].kwargs.get("seconds", 1))
    return seconds


def pytest_addoption(parser):
    parser.addoption("--screenshots", action="store_true",
                     help="the browser tests save a full-page PNG of every page they check "
                          "in screenshots/ (off: 7 s of the module's 40)")


@pytest.hookimpl(trylast=True)  # after `-m` has deselected: only what runs is counted
def pytest_collection_modifyitems(config, items):
    """Files run longest first (their `duration` plus the expected seconds of their slow
    tests that run), each in its usual order: with `-n 2 --dist loadscope` (make test,
    make test-quick) the long modules start at once and the short ones fill in beside them,
    instead of one long module starting last on an idle worker."""
    cost: dict[str, float] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        if path not in cost:
            cost[path] = _module_seconds(item)
        cost[path] += _expected_seconds(item)
    items.sort(key=lambda item: -cost[item.nodeid.split("::")[0]])


@pytest.fixture(scope="session", autouse=True)
def _prepare_each_file_once():
    """Builds in a test process read and prepare each source file once (keyed by its
    content digest, the contracts, the source's info and the limits in force:
    `store.build.reuse_prepared`, what a replay's date-by-date rebuilds use). The tests
    build some 300 registries, most from the same few files of the shared data; a file,
    contract or limit a test changes makes another key and is prepared again, so every
    test still sees its own input prepared (tests/test_scale_data.py checks the limits)."""
    from benchpress.store.build import reuse_prepared

    with reuse_prepared():
        yield


@pytest.fixture(scope="session")
def shared_data() -> Path:
    assert BP_2026_05.is_file(), f"the shared data must sit beside the repo: {SHARED_DATA}"
    return SHARED_DATA


def make_home(root: Path, *, reviews: bool = False) -> Home:
    """An empty workspace with the repo's contracts (what `benchpress init` makes); without
    the reviewed verdicts (`cell_reviews.csv`) unless `reviews`: the tests of other parts
    read the published matrices as published (tests/test_suspects.py reads the verdicts)."""
    home = Home(root)
    home.sources.mkdir(parents=True)
    shutil.copytree(REPO / "schemas", home.schemas,
                    ignore=None if reviews else shutil.ignore_patterns("cell_reviews.csv"))
    return home


def synthetic_home(root: Path, n_models: int, n_bench: int, *, seed: int, gap: int) -> Home:
    """A workspace at `root / "ws"` holding one ingested source of rank-2 scores (models
    m000.., benchmarks b0..), cell (i, j) missing where (i + j) % gap == 0."""
    import json

    import numpy as np

    from benchpress.store.ingest import ingest

    rng = np.random.default_rng(seed)
    values = 50 + 10 * rng.normal(size=(n_models, 2)) @ rng.normal(size=(2, n_bench)) / 2
    doc = {"models": [{"id": f"m{i:03d}", "name": f"Model {i}"} for i in range(n_models)],
           "benchmarks": [{"id": f"b{j}", "name": f"Bench {j}", "metric": "accuracy"}
                          for j in range(n_bench)],
           "scores": [{"model_id": f"m{i:03d}", "benchmark_id": f"b{j}",
                       "score": float(np.clip(values[i, j], 1, 99).round(2)),
                       "reference_url": "https://example.org/x"}
                      for i in range(n_models) for j in range(n_bench) if (i + j) % gap]}
    (root / "data.json").write_text(json.dumps(doc), encoding="utf-8")
    home = make_home(root / "ws")
    ingest(home, str(root / "data.json"), source_id="syn")
    return home


def build_repo_sources(root: Path, source_ids, *, history: bool = False) -> tuple[Home, dict]:
    """A workspace at `root` holding the repo's configs of `source_ids`, built from the
    mirror: (home, {source_id: the build summary of its newest version}). Each config keeps
    only its newest version unless `history` (every version its `versions:` lists)."""
    from dataclasses import replace

    from benchpress.store.build import build
    from benchpress.store.sources import load_configs, save_config

    home = make_home(root)
    for sid in source_ids:
        shutil.copy(REPO / "sources" / f"{sid}.yaml", home.sources)
    if not history:
        for config in load_configs(home.sources):
            if config.versions:
                save_config(home.sources, replace(config, versions=None))
    report = build(home, mirror=SHARED_DATA)
    newest = {}
    for s in report.sources:  # a source's newest version comes first
        newest.setdefault(s.source_id, s)
    return home, newest


def _session_root(tmp_path_factory) -> Path:
    """A folder of this test session that every xdist worker sees (the workers' basetemps
    are `popen-gwN` inside the session's): what the workers share, built once."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def _master_default(tmp_path_factory, shared_data) -> tuple[Home, str]:
    """The default registry (`build_repo_registry`: every source of the repository, with
    the reviewed verdicts), built once per test session however many workers run: the first
    worker to ask builds it under a file lock, the others wait for it and read the same
    folder (the 30-source build is a minute or more; see pytest-xdist's "session-scoped
    fixture only once"). Never handed to a test: `default_registry` copies it."""
    import fcntl

    root = _session_root(tmp_path_factory) / "default-registry"
    done = root / "build-output.txt"  # written last: the build is whole
    with open(f"{root}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)
            with pytest.MonkeyPatch.context() as env:
                for var in ("BENCHPRESS_MIRROR", "BENCHPRESS_CACHE", "BENCHPRESS_FIT_CACHE"):
                    env.delenv(var, raising=False)
                output = build_repo_registry(root / "ws")[1]
            done.write_text(output, encoding="utf-8")
    return Home(root / "ws"), done.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def default_registry(_master_default, tmp_path_factory) -> tuple[Home, str]:
    """The default registry as `build_repo_registry` makes it, the module's own copy (its
    raw files and prepared versions too, so a rebuild in it prepares nothing again): (home,
    the build's output)."""
    master, output = _master_default
    return copy_home(master, tmp_path_factory.mktemp("default") / "ws"), output


def build_repo_registry(root: Path) -> tuple[Home, str]:
    """A workspace at `root` with the repository's sources and contracts, pulled from the
    mirror and built by the CLI, as `make main` builds the default registry: (home, the
    build's output)."""
    from click.testing import CliRunner

    from benchpress.cli import main

    home = make_home(root, reviews=True)
    shutil.rmtree(home.sources)
    shutil.copytree(REPO / "sources", home.sources)
    for args in (["pull", "--mirror", str(SHARED_DATA)], ["build"]):
        result = CliRunner().invoke(main, [*args, "--home", str(home.root)])
        assert result.exit_code == 0, result.output
    return home, result.output


@pytest.fixture
def home(tmp_path, monkeypatch) -> Home:
    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    monkeypatch.delenv("BENCHPRESS_CACHE", raising=False)
    return make_home(tmp_path / "ws")


@pytest.fixture(scope="session")
def paper_matrix():
    """The BenchPress 2026-05 matrix read from data.json: ``(Y, model_ids, benchmark_ids,
    scales)``, shared by the predictor tests (read-only)."""
    from tests.predict_data import load_matrix

    return load_matrix()


def copy_home(master: Home, root: Path) -> Home:
    """A private copy of a built workspace at `root` (its registry, snapshots and caches):
    a test that writes into it leaves the session's master as it was."""
    shutil.copytree(master.root, root, symlinks=True)
    return Home(root)


@pytest.fixture(scope="session")
def _master_2026_05(tmp_path_factory, shared_data) -> Home:
    """The 2026-05 registry, built once per test process (each xdist worker has its own);
    never handed to a test: `built_2026_05` copies it."""
    from benchpress.store.ingest import ingest

    home = make_home(tmp_path_factory.mktemp("bp05-master") / "ws")
    ingest(home, str(BP_2026_05), source_id="benchpress-2026-05")
    return home


@pytest.fixture(scope="session")
def _master_both(_master_2026_05, tmp_path_factory) -> Home:
    """The 2026-05 registry with the 2026-02 matrix ingested after it, built once per process."""
    from benchpress.store.ingest import ingest

    home = copy_home(_master_2026_05, tmp_path_factory.mktemp("both-master") / "ws")
    ingest(home, str(MATRIX_2026_02), source_id="llm-benchmark-matrix-2026-02")
    return home


@pytest.fixture(scope="module")
def built_2026_05(_master_2026_05, tmp_path_factory) -> Home:
    """A registry holding the 2026-05 matrix alone: the module's own copy of the session's
    build (a copy takes milliseconds, a build a second or more), so snapshots, cached fits
    and edits made by one module never reach another."""
    return copy_home(_master_2026_05, tmp_path_factory.mktemp("bp05") / "ws")


@pytest.fixture(scope="module")
def built_both(_master_both, tmp_path_factory) -> Home:
    """A registry holding the 2026-05 matrix and then the 2026-02 matrix (the module's copy)."""
    return copy_home(_master_both, tmp_path_factory.mktemp("both") / "ws")


@pytest.fixture
def count_fits(monkeypatch) -> list:
    """The matrix digests of the whole-matrix fits (`FittedModel.fit`) made while the test
    runs, in order (held-out fits of clones are not counted)."""
    return fits_counted(monkeypatch)


def fits_counted(monkeypatch) -> list:
    """`count_fits` for any scope: the fits made until `monkeypatch` is undone."""
    from benchpress.api.artifact import matrix_digest
    from benchpress.api.fitted_model import FittedModel

    made = []
    real = FittedModel.fit.__func__

    def counting(cls, estimator, matrix, **kwargs):
        made.append(matrix_digest(matrix))
        return real(cls, estimator, matrix, **kwargs)

    monkeypatch.setattr(FittedModel, "fit", classmethod(counting))
    return made


def load_script(path: Path, name: str | None = None):
    """The Python file at `path` (a benchmark script, a docs hook) imported as a module
    (never run as `__main__`), for tests of its functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""Progress on stderr for slow commands (issue 13, item 4): shown on a terminal (or when
$BENCHPRESS_PROGRESS is "always"), absent otherwise, never on stdout; the library's
`progress=` callbacks report without changing a number."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.api import BenchPress
from benchpress.cli import main
from benchpress.predict import BenchmarkScales, make_predictor
from benchpress.predict.probes.search import ProbeSearch
from tests.conftest import REPO

# about 8 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=8)

FAST = ["--param", "n_starts=2"]


def _run(home, *args, progress: str | None = None):
    env = {"BENCHPRESS_PROGRESS": progress} if progress else {}
    result = CliRunner().invoke(main, [*map(str, args), "--home", str(home.root)], env=env,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result


def _figures(stdout: str) -> dict:
    doc = json.loads(stdout)
    doc.pop("seconds", None)  # wall time is the one field that may differ
    return doc


def test_evaluate_counts_folds_on_a_terminal_and_is_silent_otherwise(built_2026_05, monkeypatch):
    monkeypatch.delenv("BENCHPRESS_PROGRESS", raising=False)
    args = ("evaluate", *FAST, "--make-folds", "3", "--format", "json")
    shown = _run(built_2026_05, *args, progress="always")
    quiet = _run(built_2026_05, *args)
    assert "evaluating" in shown.stderr and "fold 3 of 3" in shown.stderr
    assert "evaluating" not in quiet.stderr and "fold" not in quiet.stderr
    # stdout is untouched: the same JSON, the same numbers
    assert "evaluating" not in shown.stdout and "\x1b" not in shown.stdout
    assert _figures(shown.stdout) == _figures(quiet.stdout)


def test_never_turns_progress_off(built_2026_05):
    result = _run(built_2026_05, "snapshot", "create", progress="never")
    assert "snapshotting" not in result.stderr


@pytest.fixture(scope="module")
def shown_and_quiet(built_2026_05):
    """The command line `args` run with progress and without, once per module: cases that
    look for different steps of one command share its runs (a probe search costs seconds)."""
    runs = {}

    def get(args):
        if args not in runs:
            runs[args] = (_run(built_2026_05, *args, progress="always"), _run(built_2026_05, *args))
        return runs[args]
    return get


@pytest.mark.parametrize("args, step", [
    (("snapshot", "create"), "snapshotting the registry"),
    pytest.param(("rank", "--max-rank", "2", *FAST, "--format", "json"), "error by rank",
                 marks=pytest.mark.slow(seconds=4)),  # `make test` runs it, test-quick not
    # a sample of 10 models: 10 held-out fits instead of 84, the same steps shown
    (("probes", "--k", "2", "--max-models", "10", *FAST, "--format", "json"),
     "leave-one-model-out fit"),
    (("probes", "--k", "2", "--max-models", "10", *FAST, "--format", "json"),
     "probe 2 of 2 chosen"),
])
def test_slow_commands_show_their_step(shown_and_quiet, args, step):
    shown, quiet = shown_and_quiet(args)
    assert step in shown.stderr and step not in quiet.stderr
    assert step not in shown.stdout and "\x1b" not in shown.stdout


def test_a_real_terminal_on_stderr_shows_progress_and_a_pipe_does_not(built_2026_05, tmp_path):
    """The CLI as a process: stderr a pseudo-terminal (progress drawn there), stdout a pipe
    (only the JSON document); then stderr a pipe too (no progress at all)."""
    args = [sys.executable, "-c", "from benchpress.cli import main; main()", "evaluate", *FAST, "--make-folds", "3",
            "--format", "json", "--home", str(built_2026_05.root)]
    env = {k: v for k, v in os.environ.items() if k != "BENCHPRESS_PROGRESS"}
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.run(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=slave,
                          timeout=300)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    assert proc.returncode == 0
    on_terminal = b"".join(chunks).decode("utf-8", "replace")
    assert "evaluating" in on_terminal and "fold" in on_terminal
    piped = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and "evaluating" not in piped.stderr
    assert _figures(proc.stdout.decode()) == _figures(piped.stdout)


def _synthetic(n_models=12, n_bench=8):
    rng = np.random.RandomState(3)
    U, V = rng.normal(size=(n_models, 2)), rng.normal(size=(n_bench, 2))
    Y = 50 + 4 * U @ V.T
    Y[rng.rand(n_models, n_bench) < 0.2] = np.nan
    scales = BenchmarkScales(kind=np.array(["score"] * n_bench),
                             lower=np.full(n_bench, np.nan), upper=np.full(n_bench, np.nan))
    return Y, scales


def test_probe_search_reports_each_fit_and_fits_the_same():
    Y, scales = _synthetic()
    calls = []
    with_cb = ProbeSearch(make_predictor("published", n_starts=2, n_iter=15)).fit(
        Y, scales, progress=lambda k, n, label: calls.append((k, n)))
    without = ProbeSearch(make_predictor("published", n_starts=2, n_iter=15)).fit(Y, scales)
    assert calls == [(k, Y.shape[0]) for k in range(1, Y.shape[0] + 1)]
    mask = np.zeros((1, Y.shape[1]), dtype=bool)
    mask[0, :2] = True
    np.testing.assert_array_equal(with_cb.predict_cells(mask), without.predict_cells(mask))
    steps = []
    chosen = with_cb.select(3, progress=lambda k, n, label: steps.append((k, n)))
    assert steps == [(1, 3), (2, 3), (3, 3)]
    plain = without.select(3)
    assert [s.probes for s in chosen.steps] == [s.probes for s in plain.steps]
    assert [s.medae for s in chosen.steps] == [s.medae for s in plain.steps]


def test_evaluate_callback_counts_folds_and_changes_no_figure(built_2026_05):
    bp = BenchPress.from_snapshot(built_2026_05,
                                  predictor=make_predictor("default", n_starts=2))
    folds = bp.folds(n_folds=3, seed=7)
    calls = []
    counted = bp.evaluate(folds, progress=lambda k, n, label: calls.append((k, n, label)))
    plain = bp.evaluate(folds)
    assert [c[:2] for c in calls] == [(1, 3), (2, 3), (3, 3)]
    assert counted.overall == plain.overall
    assert counted.cells.equals(plain.cells)

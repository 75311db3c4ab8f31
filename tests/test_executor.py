"""`--executor local|processes[:N]|ADDRESS`: the independent fits on a real Dask cluster (a scheduler and two
worker processes on 127.0.0.1, started here) give the same figures, to the last bit, as the
local run; an address nobody answers on, and a failure on a worker, are one line."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.api.typed_scores import parse_scores
from benchpress.errors import UsageError
from benchpress.executor import DaskExecutor, LocalExecutor, ProcessExecutor, get_executor
from tests.conftest import BP_2026_05, MATRIX_2026_02, SHARED_DATA

# about 13 s for the tests `make test-quick` runs (scheduling: long modules start first)
pytestmark = pytest.mark.duration(seconds=13)

FOLDS = SHARED_DATA / "benchpress-2026-05" / "folds_s10_f3_bs42_ms1.json"
# the default predictor's MedAE on those folds; the last digits depend on the BLAS build,
# so it is compared within 1e-6 (local and remote runs are still compared exactly)
# the default on this registry (the paper's file alone, so its models' metadata without the
# releases CSV's; 3.894947871299834 before the spread prior and the z bound of 2026-12-05);
# als4 gives 4.208485400771387
# 3.8419283679001968 over every cell before 2026-12-06's gated default and per-scale figures:
# `overall` now holds the percent cells where higher is better, each scale apart
MEDAE = 3.6400307812202897


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_error_line(result) -> str:
    """The one line of a failed command (after the executor's own line, when one is used)."""
    lines = [ln for ln in result.stderr.splitlines()
             if ln.strip() and not ln.startswith("executor: tcp://127.0.0.1:")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in lines[0]
    return lines[0]


# -- without a cluster -------------------------------------------------------------------
def test_specs_name_an_executor_or_are_refused():
    assert isinstance(get_executor(None), LocalExecutor)
    assert isinstance(get_executor("local"), LocalExecutor)
    ex = get_executor("127.0.0.1:8786")
    assert isinstance(ex, DaskExecutor) and ex.name == "tcp://127.0.0.1:8786"
    assert get_executor(ex) is ex
    for bad in ("cluster", "http://x:8786", "tcp://", "tcp://h:port"):
        with pytest.raises(UsageError, match=r"expected 'local', 'processes\[:N\]' or a Dask"):
            get_executor(bad)
    two = get_executor("processes:2")
    assert isinstance(two, ProcessExecutor) and two.workers == two.parallelism == 2
    assert get_executor("processes").workers >= 1
    for bad in ("processes:0", "processes:9999"):
        with pytest.raises(UsageError, match="between 1 and 256 processes"):
            get_executor(bad)


def test_local_map_keeps_input_order_and_passes_shared_arguments():
    seen = []
    out = LocalExecutor().map(int, ["10", "11", "101"], base=2,
                              progress=lambda k, n: seen.append((k, n)))
    assert out == [2, 3, 5] and seen == [(1, 3), (2, 3), (3, 3)]
    assert LocalExecutor().map(np.full, [2, 3], fill_value=1.5)[1].tolist() == [1.5] * 3


def test_process_map_keeps_input_order_and_passes_shared_arguments():
    seen = []
    items = [format(n, "b") for n in range(1, 20)]
    with ProcessExecutor(2) as ex:
        out = ex.map(int, items, base=2, progress=lambda k, n: seen.append((k, n)))
        again = ex.map(np.full, [2, 3], fill_value=1.5)  # the same pool, kept open
    assert out == list(range(1, 20)) and seen[-1] == (19, 19) and len(seen) > 1
    assert [k for k, _ in seen] == sorted(k for k, _ in seen)
    assert again[1].tolist() == [1.5] * 3 and ex._pool is None  # closed on leaving


_PARENT = """
import sys, time
from benchpress.executor import ProcessExecutor
with ProcessExecutor(2) as ex:
    ex.map(time.sleep, [0.01, 0.01])
    print(" ".join(map(str, ex._pool._processes)), flush=True)
    ex.map(time.sleep, [60, 60])
"""


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return False


def _all_gone(pids, *, within: float) -> bool:
    """Whether every process of `pids` has ended within `within` seconds."""
    deadline = time.monotonic() + within
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not any(_running(p) for p in pids)


def test_workers_do_not_outlive_a_killed_parent():
    """A parent killed with SIGKILL cannot shut its pool down; its workers notice it is
    gone and leave within a second or two: no phantom keeps computing."""
    import signal
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(p) for p in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert _all_gone(pids, within=15)
    finally:
        parent.kill()


_INTERRUPTED = """
import time
from benchpress.executor import ProcessExecutor
if __name__ == "__main__":
    try:
        with ProcessExecutor(2) as ex:
            ex.map(time.sleep, [0.01, 0.01])
            print(" ".join(map(str, ex._pool._processes)), flush=True)
            ex.map(time.sleep, [60, 60, 60, 60])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


#: The same, with Ctrl-C pressed while the workers are still starting: spawn imports the
#: main module in each worker before its initializer runs, and here that takes 3 s.
_INTERRUPTED_AT_START = """
import threading
import time
from benchpress.executor import ProcessExecutor
if __name__ == "__mp_main__":
    import signal, sys
    if signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        print("a worker hears Ctrl-C while it starts", file=sys.stderr, flush=True)
    time.sleep(3)
if __name__ == "__main__":
    def announce(ex):
        while not (ex._pool and len(ex._pool._processes) == 2):
            time.sleep(0.01)
        print(" ".join(map(str, ex._pool._processes)), flush=True)
    try:
        with ProcessExecutor(2) as ex:
            threading.Thread(target=announce, args=(ex,), daemon=True).start()
            ex.map(time.sleep, [60, 60, 60, 60])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


@pytest.mark.parametrize("script_text", [_INTERRUPTED, _INTERRUPTED_AT_START],
                         ids=["working", "starting"])
def test_ctrl_c_stops_the_workers_without_a_traceback(tmp_path, script_text):
    """Ctrl-C reaches the whole process group: the parent answers it, the workers (born
    deaf to it) are stopped at once, and none prints a traceback, whether they are at work
    or still starting."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "interrupted.py"  # spawn re-imports the main module: a file
    script.write_text(script_text)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2
        os.killpg(parent.pid, signal.SIGINT)
        out, err = parent.communicate(timeout=30)
        assert out.strip() == "interrupted", err
        assert "Traceback" not in err and "hears Ctrl-C" not in err, err
        assert _all_gone(pids, within=10)
    finally:
        parent.kill()


_HELD = """
import os, signal, threading, time
from benchpress.executor import _ctrl_c_held
inside = threading.Event()
def press():  # a thread born before the window: SIGINT is not blocked in it
    inside.wait()
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=press).start()
reached = []
try:
    with _ctrl_c_held():
        inside.set()
        time.sleep(0.5)
        reached.append("body")
except KeyboardInterrupt:
    reached.append("interrupted")
print(" ".join(reached), signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_a_ctrl_c_while_workers_are_born_waits_for_the_pool_then_is_raised():
    """Another thread may take the signal; Python would raise KeyboardInterrupt in the
    main thread in the middle of the pool's bookkeeping (a CI run hung there, in the
    test above). Inside the held window it is noted, raised on leaving, and the handler
    is Python's own again."""
    import signal
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _HELD], capture_output=True, text=True,
                          timeout=60, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                       signal.SIG_DFL))
    assert done.stdout.split() == ["body", "interrupted", "True"], done.stderr


def _die(x):
    """A call whose worker process is killed (as the out-of-memory killer would)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_worker_is_one_line_and_the_pool_is_gone():
    from benchpress.errors import BenchPressError

    ex = ProcessExecutor(2)
    with pytest.raises(BenchPressError, match="a worker process stopped before its work"):
        ex.map(_die, [1, 2, 3])
    assert ex._pool is None
    assert ex.map(abs, [-1, -2, -3]) == [1, 2, 3]  # a new pool for the next map


def _probes(home: Path, *executor: str):
    """`probes --k 2 --max-models 20` on `home` as JSON (the run's timings taken out), and
    its stderr."""
    result = CliRunner().invoke(main, ["probes", "--k", "2", "--max-models", "20", "--home",
                                       str(home), "--format", "json", *executor])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    doc["selection"].pop("seconds"), doc["selection"].pop("fit_seconds")
    return doc, result.stderr


@pytest.fixture(scope="module")
def local_probes(built_2026_05):
    """The probe search in this process, which the runs through an executor must equal
    (made once for the module)."""
    return _probes(built_2026_05.root)[0]


def test_probes_in_worker_processes_choose_the_same_set(built_2026_05, local_probes):
    """`--executor processes:2`: the probe search's fits and candidate scoring in two
    worker processes give the same set and figures as in this process."""
    b, stderr = _probes(built_2026_05.root, "--executor", "processes:2")
    assert b == local_probes and len(b["selection"]["probes"]) == 2
    assert "executor: 2 processes on this machine" in stderr


def test_an_unreachable_scheduler_is_one_line_and_exit_2_at_once(built_2026_05, monkeypatch):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    result = CliRunner().invoke(main, ["evaluate", "--folds", str(FOLDS), "--home",
                                       str(built_2026_05.root), "--executor", address])
    assert time.perf_counter() - t0 < 20
    line = _one_error_line(result)
    assert result.exit_code == 2 and address in line and "scheduler" in line
    with pytest.raises(UsageError, match=address):  # the API: the same error
        get_executor(address).map(abs, [1])
    # the environment's default reaches every command that has the option
    monkeypatch.setenv("BENCHPRESS_EXECUTOR", address)
    result = CliRunner().invoke(main, ["replay", str(FOLDS), "--home", str(built_2026_05.root)])
    assert result.exit_code == 2 and address in _one_error_line(result)


def test_a_bad_executor_spec_is_a_usage_error(built_2026_05):
    result = CliRunner().invoke(main, ["probes", "--home", str(built_2026_05.root),
                                       "--executor", "my-cluster"])
    assert result.exit_code == 2 and "--executor 'my-cluster'" in _one_error_line(result)


@pytest.mark.parametrize("command", ["evaluate", "probes", "replay", "drift", "build"])
def test_the_option_is_in_the_help(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "--executor" in result.output
    assert "BENCHPRESS_EXECUTOR" in result.output


# -- on a real local cluster -------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    """A Dask scheduler with two single-threaded worker processes on 127.0.0.1."""
    import dask
    from distributed import LocalCluster  # a dependency of the package (pyproject.toml)

    # a task whose worker dies is not retried on another (see the last test)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        # dashboard_address=None would still bind port 8787 (dask/distributed#8136)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=":0") as lc:
            yield lc.scheduler_address


@pytest.mark.slow(seconds=13)  # with the cluster's start
def test_evaluate_on_the_cluster_is_bit_identical(built_2026_05, cluster):
    from benchpress.api import BenchPress

    bp = BenchPress.from_snapshot(built_2026_05)
    folds = bp.folds(FOLDS)
    local = bp.evaluate(folds)
    seen = []
    with get_executor(cluster) as ex:
        assert ex.describe() == f"{cluster}, 2 workers"
        remote = bp.evaluate(folds, executor=ex, progress=lambda k, n, label: seen.append(k))
        # the open client serves a second map (a small one: the 30 fits are shown once)
        again = ex.map(parse_scores, ["hle=1", "gpqa_diamond=2.5"])
    assert again == LocalExecutor().map(parse_scores, ["hle=1", "gpqa_diamond=2.5"])
    assert remote.overall == local.overall
    assert local.overall.medae == pytest.approx(MEDAE, abs=1e-6)
    assert remote.cells.equals(local.cells)
    assert remote.per_benchmark.equals(local.per_benchmark)
    assert sorted(seen) == list(range(1, 31))
    assert ex._client is None  # closed afterwards


@pytest.mark.slow(seconds=11)
def test_evaluate_cli_on_the_cluster_prints_the_same_json(built_2026_05, cluster):
    args = ["evaluate", "--folds", str(FOLDS), "--home", str(built_2026_05.root),
            "--format", "json"]
    local = CliRunner().invoke(main, args)
    remote = CliRunner().invoke(main, [*args, "--executor", cluster])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    a.pop("seconds"), b.pop("seconds")
    assert a == b and b["medae"] == pytest.approx(MEDAE, abs=1e-6)
    assert f"executor: {cluster}, 2 workers" in remote.stderr
    assert "executor:" not in local.stderr


@pytest.mark.slow
def test_a_failure_on_a_worker_is_the_same_one_line(built_2026_05, cluster):
    # the API: the error the function raised on the worker, as a local run raises it
    with pytest.raises(UsageError) as local:
        LocalExecutor().map(parse_scores, ["hle=1", "hle=abc"])
    with pytest.raises(UsageError) as remote:
        get_executor(cluster).map(parse_scores, ["hle=1", "hle=abc"])
    assert str(remote.value) == str(local.value) == "--scores: value of 'hle' is 'abc', not a number"
    # the CLI: n_starts=0 passes the option check and fails in the fit, on a worker
    args = ["evaluate", "--folds", str(FOLDS), "--home", str(built_2026_05.root),
            "--param", "n_starts=0"]
    here = CliRunner().invoke(main, args)
    there = CliRunner().invoke(main, [*args, "--executor", cluster])
    assert there.exit_code == here.exit_code == 2
    assert _one_error_line(there) == _one_error_line(here) == "Error: n_starts must be >= 1, got 0"


@pytest.mark.slow(seconds=7)
def test_replay_on_the_cluster_gives_the_same_timeline(tmp_path, cluster):
    """The replay's dated fits through the cluster; kNN at each date (what is compared is
    where the fits run, not the default's figures; its probe search is 5x cheaper)."""
    from benchpress.timeline.replay import replay
    from tests.conftest import make_home
    from tests.test_replay import VERSIONS, write_plan

    runs = {}
    for where in ("local", cluster):  # two workspaces: nothing cached is shared
        home = make_home(tmp_path / ("local" if where == "local" else "cluster") / "ws")
        plan = write_plan(home.root / "plan.yaml", SHARED_DATA, versions=VERSIONS[:2], probes=1,
                          method="knn")
        timeline = replay(home, plan, mirror=SHARED_DATA, executor=where)
        runs[where] = json.loads(json.dumps([timeline.rows, timeline.pooled, timeline.span],
                                            default=str))
    rows = runs["local"][0]
    assert len(rows) == 2 and rows[1]["revised"] > 0 and rows[0]["heldout_medae"] > 0
    assert runs[cluster] == runs["local"]


@pytest.mark.slow
def test_a_worker_that_dies_is_one_line_naming_the_address(cluster):
    import os

    from benchpress.errors import BenchPressError

    t0 = time.perf_counter()
    with pytest.raises(BenchPressError, match=f"executor {cluster}: a worker died") as info:
        get_executor(cluster).map(os._exit, [3])  # the worker process exits mid-task
    assert "\n" not in str(info.value) and time.perf_counter() - t0 < 60


@pytest.mark.slow
def test_a_scheduler_without_workers_is_a_usage_error_within_the_limit():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as lc:  # a random port, as above
        t0 = time.perf_counter()
        with pytest.raises(UsageError, match=f"--executor {lc.scheduler_address}: the scheduler "
                                             "has no workers after 1 s"):
            get_executor(lc.scheduler_address, connect_timeout=1).map(abs, [1])
        assert time.perf_counter() - t0 < 10


@pytest.mark.slow(seconds=12)
def test_probes_on_the_cluster_choose_the_same_set(built_2026_05, cluster, local_probes):
    """The probe search's fits and candidate scoring through the cluster: same set, same
    scores as in this process (only the timing fields may differ). A sample of 20 models
    (10 held-out fits of 2), as `--max-models` makes on a large registry: the same fits and
    scoring go through the executor as in an exact search, at a fifth of its cost."""
    b, stderr = _probes(built_2026_05.root, "--executor", cluster)
    assert b == local_probes and len(b["selection"]["probes"]) == 2
    assert b["sample_size"] == 20 and b["fits"] == 10
    assert f"executor: {cluster}, 2 workers" in stderr


@pytest.mark.slow
def test_build_on_the_cluster_writes_the_same_registry(tmp_path, shared_data, cluster):
    """`build --executor`: every source version read and checked on the workers (which see
    the home at the same path); the same report and byte-identical tables."""
    root = tmp_path / "ws"
    assert CliRunner().invoke(main, ["init", str(root), "--no-git"]).exit_code == 0
    for src, sid in ((BP_2026_05, "bp05"), (MATRIX_2026_02, "bp02")):
        got = CliRunner().invoke(main, ["ingest", str(src), "--id", sid, "--home", str(root),
                                        "--allow-rejects"])
        assert got.exit_code == 0, got.stderr

    def tables():
        return {p.name: p.read_bytes() for p in sorted((root / "registry").glob("*.parquet"))}

    local = CliRunner().invoke(main, ["build", "--home", str(root)])
    assert local.exit_code == 0, local.stderr
    before = tables()
    remote = CliRunner().invoke(main, ["build", "--home", str(root), "--executor", cluster])
    assert remote.exit_code == 0, remote.stderr
    assert f"executor: {cluster}, 2 workers" in remote.stderr
    report = remote.stderr.replace(f"executor: {cluster}, 2 workers\n", "")
    assert report == local.stderr and "bp02" in local.stderr
    assert len(before) >= 7 and tables() == before

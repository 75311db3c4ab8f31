"""The distribution `benchpress-llm`: `python -m build` makes an sdist and a wheel under 20 MB,
and the wheel, installed into a clean virtual environment, works from outside the repository.

The clean venv gets the wheel itself (`pip install --no-deps --no-index`); its dependencies
come from this project's environment through a `.pth` line naming that environment's
site-packages (a `.pth` line only adds the folder to `sys.path`: the editable install's
finder there is not activated, so `import benchpress` can only find the installed wheel;
the test checks that it does).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

ONE_LINER = ("from benchpress import BenchPress; import benchpress, json; "
             "f = BenchPress.from_pretrained().predict({'gpqa_diamond': 71.2, 'hle': 20.1}).frame; "
             "print(json.dumps({'file': benchpress.__file__, 'rows': f.height, "
             "'pm': f['pm'].drop_nulls().len()}))")


def _run(args, cwd, env=None, timeout=600):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"{args}: {result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel built from the repository by `python -m build` (with this
    environment's setuptools, `--no-isolation`: no download; no test uses the internet)."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
         cwd=REPO)
    return out


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> dict:
    """A clean venv holding the wheel: {"python", "bin", "cwd", "env"}. Further checks of
    the installed package (e.g. starting and querying the app) take this fixture."""
    root = tmp_path_factory.mktemp("venv")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=root)
    py = venv / "bin" / "python"
    wheel = next(dist.glob("benchpress_llm-*.whl"))
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=root)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=root).strip())
    (site / "_parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    cwd = root / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {"python": py, "bin": venv / "bin", "cwd": cwd, "env": env, "venv": venv}


def test_build_makes_sdist_and_wheel_under_20_mb(dist):
    wheel = next(dist.glob("benchpress_llm-*.whl"))
    sdist = next(dist.glob("benchpress_llm-*.tar.gz"))
    assert wheel.stat().st_size < 20e6 and sdist.stat().st_size < 20e6
    names = zipfile.ZipFile(wheel).namelist()
    assert "benchpress/pretrained/default/manifest.json" in names
    assert "benchpress/pretrained/default/arrays.npz" in names
    assert "benchpress/store/views.sql" in names
    # the contracts `benchpress init` copies (benchpress/contracts links to schemas/)
    assert {f"benchpress/contracts/{p.name}" for p in (REPO / "schemas").iterdir()} <= set(names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Name: benchpress-llm" in meta


def test_installed_wheel_runs_from_outside_the_repo(installed):
    from benchpress import __version__

    out = _run([str(installed["bin"] / "benchpress"), "--version"], installed["cwd"],
               installed["env"])
    assert __version__ in out
    doc = json.loads(_run([str(installed["python"]), "-c", ONE_LINER], installed["cwd"],
                          installed["env"]))
    assert Path(doc["file"]).is_relative_to(installed["venv"]), doc["file"]  # the wheel's copy
    assert doc["rows"] == 133 and doc["pm"] > 100


@contextlib.contextmanager
def _app(installed, *args):
    """`python -m benchpress.app --port P ARGS` from the installed wheel, in its own folder,
    until the block ends: yields the base URL once /api/status answers."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(installed["python"]), "-m", "benchpress.app", "--port", str(port), *args],
        cwd=installed["cwd"], env=installed["env"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, server.stdout.read()[-3000:]
            try:
                with urllib.request.urlopen(base + "/api/status", timeout=10):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the app did not answer within 180 s"
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def _get(url: str):
    import urllib.request

    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read().decode()
    return json.loads(body) if "/api/" in url else body


def test_installed_wheel_starts_and_answers_the_app(installed, built_2026_05):
    """`python -m benchpress.app` from the installed wheel, over a registry built by the tests:
    it binds to loopback, answers a prediction under /api/, and stops when asked."""
    with _app(installed, "--home", str(built_2026_05.root)) as base:
        doc = _get(f"{base}/api/predict?scores=gpqa_diamond:71.2,hle:20.1")
    rows = {r["benchmark_id"]: r for r in doc["predictions"]}
    assert rows["gpqa_diamond"]["given"] == 71.2 and rows["mmlu_pro"]["lower"] is not None


def test_installed_app_without_a_registry_serves_the_pre_fit_model(installed):
    """From a folder with no registry: predict, compare and the header name the pre-fit model,
    with the library's numbers."""
    from benchpress import BenchPress

    with _app(installed) as base:
        doc = _get(f"{base}/api/predict?scores=gpqa_diamond:71.2,hle:20.1")
        compared = _get(f"{base}/api/compare?models=o3-high,gpt-4.1")
        page = _get(f"{base}/predict")
    bp = BenchPress.from_pretrained()
    want = bp.predict({"gpqa_diamond": 71.2, "hle": 20.1}).frame
    got = {r["benchmark_id"]: r["predicted"] for r in doc["predictions"]}
    for row in want.filter(want["kind"] == "predicted").head(10).iter_rows(named=True):
        assert got[row["benchmark_id"]] == pytest.approx(row["predicted"], abs=1e-9)
    assert compared["models"] == ["o3-high", "gpt-4.1"] and compared["rows"]
    snap = bp.artifact["snapshot"]["id"]
    assert f"serving: pre-fit model (default, snapshot {snap}" in page


def test_init_and_ingest_from_the_installed_wheel(installed):
    """`benchpress init` copies the contracts shipped in the wheel; `ingest` then builds a
    registry there, outside the repository."""
    from tests.conftest import BP_2026_05

    bp = str(installed["bin"] / "benchpress")
    _run([bp, "init", "ws", "--no-git"], installed["cwd"], installed["env"])
    ws = installed["cwd"] / "ws"
    for contract in (REPO / "schemas").iterdir():
        assert (ws / "schemas" / contract.name).read_bytes() == contract.read_bytes()
    out = _run([bp, "ingest", str(BP_2026_05), "--id", "bp", "--home", str(ws)],
               installed["cwd"], installed["env"])
    assert (ws / "registry" / "cells.parquet").is_file(), out
    doc = json.loads(_run([bp, "sql", "SELECT count(*) AS n FROM cells", "--home", str(ws),
                           "--format", "json"], installed["cwd"], installed["env"]))
    assert doc[0]["n"] > 2000

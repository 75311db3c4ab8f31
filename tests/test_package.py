"""The distribution `benchpress-llm`: `python -m build` makes an sdist and a wheel under 20 MB,
and the wheel, installed into a clean virtual environment, works from outside the repository.

The clean venv gets the wheel itself (`pip install --no-deps --no-index`); its dependencies
come from this project's environment through a `.pth` line naming that environment's
site-packages (a `.pth` line only adds the folder to `sys.path`: the editable install's
finder there is not activated, so `import benchpress` can only find the installed wheel;
the test checks that it does).
"""

from __future__ import annotations

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


def test_installed_wheel_starts_and_answers_the_app(installed, built_2026_05):
    """`python -m benchpress.app` from the installed wheel, over a registry built by the tests:
    it binds to loopback, answers a prediction under /api/, and stops when asked."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(installed["python"]), "-m", "benchpress.app", "--port", str(port),
         "--home", str(built_2026_05.root)],
        cwd=installed["cwd"], env=installed["env"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/api/predict?scores=gpqa_diamond:71.2,hle:20.1"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, server.stdout.read()[-3000:]
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    doc = json.loads(response.read())
                break
            except OSError:
                assert time.monotonic() < deadline, "the app did not answer within 180 s"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)
    rows = {r["benchmark_id"]: r for r in doc["predictions"]}
    assert rows["gpqa_diamond"]["given"] == 71.2 and rows["mmlu_pro"]["lower"] is not None

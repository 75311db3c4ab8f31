"""The distribution `benchpress-llm`: `python -m build` makes an sdist and a wheel under 20 MB,
and the wheel, installed into a clean virtual environment, works from outside the repository.

The clean venv gets the wheel itself (`pip install --no-deps --no-index`); its dependencies
come from this project's environment through a `.pth` line naming that environment's
site-packages (a `.pth` line only adds the folder to `sys.path`: the editable install's
finder there is not activated, so `import benchpress` can only find the installed wheel;
the test checks that it does). The core install (`pip install benchpress-llm`, no extra) is
another clean venv whose `.pth` names a folder linking only the core dependencies' files: its
size is measured, and predicting from the shipped model works there.
"""

from __future__ import annotations

import contextlib
import email
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow(seconds=40)  # a build and clean venvs (the module's)

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


def _venv_with_wheel(dist: Path, root: Path, site_packages: Path) -> dict:
    """A clean venv under `root` holding the wheel, whose dependencies are found in the
    folder `site_packages` (a `.pth` line): {"python", "bin", "cwd", "env", "venv"}."""
    venv = root / "venv"
    # the caller's PYTHONPATH (e.g. the checkout) must not reach the clean venv: its pip
    # would find the editable install there and not install the wheel
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    _run([sys.executable, "-m", "venv", str(venv)], cwd=root, env=env)
    py = venv / "bin" / "python"
    wheel = next(dist.glob("benchpress_llm-*.whl"))
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=root,
         env=env)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=root, env=env).strip())
    (site / "_dependencies.pth").write_text(f"{site_packages}\n")
    cwd = root / "elsewhere"
    cwd.mkdir()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {"python": py, "bin": venv / "bin", "cwd": cwd, "env": env, "venv": venv}


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> dict:
    """A clean venv holding the wheel, with every extra (this environment's site-packages).
    Further checks of the installed package (e.g. starting and querying the app) take this
    fixture."""
    return _venv_with_wheel(dist, tmp_path_factory.mktemp("venv"),
                            Path(sysconfig.get_paths()["purelib"]))


def core_distributions(wheel: Path) -> list:
    """The distributions of this environment that `pip install benchpress-llm` installs
    with the wheel (its requirements without extras, and theirs, recursively)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")))
    todo = email.message_from_bytes(meta).get_all("Requires-Dist")
    found = {}
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if canonicalize_name(req.name) not in found:
            found[canonicalize_name(req.name)] = dist = metadata.distribution(req.name)
            todo += dist.requires or []
    return list(found.values())


def _size(path: Path) -> int:
    """Bytes of the files under `path`, symbolic links not followed (`du --apparent-size`)."""
    return sum(f.lstat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


@pytest.fixture(scope="module")
def core(dist, tmp_path_factory) -> dict:
    """A clean venv holding the wheel and only the core dependencies (`pip install
    benchpress-llm`, no extra), linked from this environment (no download): the `installed`
    dict plus "size", the bytes of the venv and of every core dependency's files."""
    root = tmp_path_factory.mktemp("core")
    deps, size = root / "core-site-packages", 0
    deps.mkdir()
    for d in core_distributions(next(dist.glob("benchpress_llm-*.whl"))):
        files = [f for f in d.files if f.parts[0] != ".."]  # not the console scripts
        size += sum(d.locate_file(f).stat().st_size for f in files if d.locate_file(f).is_file())
        for top in {f.parts[0] for f in files}:
            if not (deps / top).exists():
                (deps / top).symlink_to(d.locate_file(top))
    venv = _venv_with_wheel(dist, root, deps)
    return {**venv, "size": size + _size(venv["venv"])}


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


def test_readme_core_blocks_run_in_the_core_install(core, tmp_path):
    """The README's core-install tour on `pip install benchpress-llm` alone: each console
    command prints what the README shows, within 80 columns, and the Python block passes as
    a doctest (tests/readme_blocks.py has the markers)."""
    from tests.readme_blocks import blocks, console_steps, matches, run_console, too_wide

    run = {"cwd": core["cwd"], "env": core["env"]}
    core_blocks = [b for b in blocks() if b.kind == "core"]
    assert core_blocks
    for b in core_blocks:
        if b.lang == "console":
            for cmd, shown in console_steps(b.body):
                result = run_console(cmd, **run)
                assert result.returncode == 0, f"{b.where()}: {cmd}\n{result.stderr[-2000:]}"
                got = result.stdout.splitlines()
                assert matches(shown, got), (
                    f"{b.where()}: `{cmd}` printed\n{result.stdout}\nnot what the README shows "
                    "(after `make pretrained`, update the README)")
                wide = too_wide(result.stdout) + too_wide(result.stderr)
                assert not wide, f"{b.where()}: {cmd} prints wider than 80 columns:\n" + \
                    "\n".join(wide)
        elif b.lang == "python":
            script = tmp_path / f"readme_{b.line}.txt"
            script.write_text(b.body)
            result = subprocess.run([str(core["python"]), "-m", "doctest", "-o", "ELLIPSIS",
                                     str(script)], capture_output=True, text=True, **run)
            assert result.returncode == 0, f"{b.where()}:\n{result.stdout}{result.stderr}"
        else:
            raise AssertionError(f"{b.where()}: a core block is console or python")


# `pip install benchpress-llm` alone, counted as the `core` fixture does: 233 MiB (polars 1.31
# 110, numpy 68, rapidfuzz 12, rich with pygments 11, PyYAML 3, click 1; the venv with pip,
# setuptools and the package 28). It was 300 with polars 2.1 and its runtime (179), 436 with
# scipy too: the core pins polars<1.32 (pyproject.toml; docs/install.md).
CORE_LIMIT_MB = 250


def test_core_install_predicts_from_the_pre_fit_model(core):
    """Without extras: the shipped model predicts, with the numbers of a full install;
    scipy is not installed, and what needs an extra says which in one line."""
    from benchpress import BenchPress

    assert core["size"] < CORE_LIMIT_MB * 2**20, f"{core['size'] / 2**20:.0f} MB"
    run = {"cwd": core["cwd"], "env": core["env"]}
    doc = json.loads(_run([str(core["python"]), "-c", ONE_LINER], **run))
    assert Path(doc["file"]).is_relative_to(core["venv"]) and doc["rows"] == 133
    numbers = ("from benchpress import BenchPress; import json; f = BenchPress.from_pretrained()"
               ".predict({'gpqa_diamond': 71.2, 'hle': 20.1}).frame; "
               "print(json.dumps(f.select('benchmark_id', 'predicted', 'lower', 'upper').rows()))")
    want = BenchPress.from_pretrained().predict({"gpqa_diamond": 71.2, "hle": 20.1}).frame
    assert json.loads(_run([str(core["python"]), "-c", numbers], **run)) == \
        [list(r) for r in want.select("benchmark_id", "predicted", "lower", "upper").rows()]
    scipy = subprocess.run([str(core["python"]), "-c", "import scipy"], capture_output=True,
                           text=True, **run)
    assert scipy.returncode == 1 and "No module named 'scipy'" in scipy.stderr
    sql = subprocess.run([str(core["bin"] / "benchpress"), "sql", "SELECT 1"],
                         capture_output=True, text=True, **run)
    assert (sql.returncode, sql.stderr) == (1, "Error: benchpress sql: this needs duckdb, from "
                                            "the 'registry' extra: pip install "
                                            "'benchpress-llm[registry]'\n")
    # the command line predicts from the shipped fit too (the same numbers), and without a
    # registry and without --pretrained it says that flag exists
    cli = [str(core["bin"] / "benchpress"), "predict", "--scores", "gpqa_diamond=71.2,hle=20.1"]
    shipped = json.loads(_run([*cli, "--pretrained", "--format", "json"], **run))
    assert shipped["snapshot"] == "pretrained" and \
        [[r[k] for k in ("benchmark_id", "predicted", "lower", "upper")]
         for r in shipped["predictions"]] == \
        [list(r) for r in want.select("benchmark_id", "predicted", "lower", "upper").rows()]
    bare = subprocess.run(cli, capture_output=True, text=True, **run)
    assert bare.returncode == 1 and bare.stderr.count("\n") == 1 and \
        "no registry built yet" in bare.stderr and "--pretrained" in bare.stderr
    # compare works without scipy: every score, leader and gap of a full install; p_ahead
    # (a normal CDF, scipy's) is left empty, said in one line naming the extra
    needs = ("p_ahead left out: this needs scipy, from the 'registry' extra: pip install "
             "'benchpress-llm[registry]'")
    script = ("from benchpress import BenchPress; import json, warnings\n"
              "with warnings.catch_warnings(record=True) as said:\n"
              "    warnings.simplefilter('always')\n"
              "    f = BenchPress.from_pretrained().compare_models('gpt-5', 'claude-opus-4.5')\n"
              "print(json.dumps({'rows': f.drop('p_ahead').rows(), 'p': f['p_ahead'].to_list(),"
              " 'said': [str(w.message) for w in said]}))")
    got = json.loads(_run([str(core["python"]), "-c", script], **run))
    full = BenchPress.from_pretrained().compare_models("gpt-5", "claude-opus-4.5")
    assert got["rows"] == [list(r) for r in full.drop("p_ahead").rows()]
    assert set(got["p"]) == {None} and full["p_ahead"].null_count() < full.height
    assert got["said"] == [needs]
    cli = subprocess.run([str(core["bin"] / "benchpress"), "compare", "gpt-5", "claude-opus-4.5",
                          "--pretrained"], capture_output=True, text=True,
                         cwd=run["cwd"], env={**run["env"], "COLUMNS": "80"})
    assert cli.returncode == 0, cli.stderr
    assert f"note: {needs}" in " ".join(cli.stderr.split())
    assert "gpt-5 leads on" in cli.stdout and "p_ahead >=" not in cli.stdout
    assert max(map(len, cli.stdout.splitlines())) <= 80
    doc = json.loads(_run([str(core["bin"] / "benchpress"), "compare", "gpt-5",
                           "claude-opus-4.5", "--pretrained", "--format", "json"], **run))
    assert doc["p_ahead_note"] == needs and [r["gap"] for r in doc["rows"]] == \
        full["gap"].to_list()

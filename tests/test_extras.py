"""The core install (`pip install benchpress-llm`) predicts from the pre-fit model; whatever
needs an extra says which, in one line.

Each check runs in a fresh interpreter in which an import finder refuses every optional
dependency (as if only the core were installed): the predict-from-pretrained path must not
import any of them, and a command that needs one names the extra to install.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from benchpress import BenchPress
from benchpress.errors import EXTRA_OF
from tests.conftest import REPO

SCORES = {"gpqa_diamond": 71.2, "hle": 20.1}

# installed first in the child: optional packages cannot be imported
BLOCK = textwrap.dedent(f"""
    import importlib.abc, sys
    BLOCKED = {sorted(EXTRA_OF)!r}
    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None
    sys.meta_path.insert(0, Refuse())
""")


def run_core(code: str) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter with the optional dependencies refused."""
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_every_optional_dependency_belongs_to_an_extra_of_pyproject():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, extra in EXTRA_OF.items():
        pins = " ".join(extras[extra]).lower()
        assert module.replace("_", "-") in pins or module in ("dask",), (module, extra)
    core = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not any(dep.split(">")[0].split("[")[0] in EXTRA_OF for dep in core), core


def test_predict_from_pretrained_needs_no_extra():
    proc = run_core(f"""
        import json
        from benchpress import BenchPress
        frame = BenchPress.from_pretrained().predict({SCORES!r}).frame
        rows = frame.filter(frame["kind"] == "predicted").head(5)
        print(json.dumps({{"rows": rows.select("benchmark_id", "predicted", "lower", "upper").to_dicts(),
                          "loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)}}))
    """)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["loaded"] == []
    # the same numbers as with every extra installed (this process)
    frame = BenchPress.from_pretrained().predict(SCORES).frame
    want = {r["benchmark_id"]: r for r in frame.iter_rows(named=True)}
    assert len(doc["rows"]) == 5
    for row in doc["rows"]:
        for key in ("predicted", "lower", "upper"):
            assert row[key] == pytest.approx(want[row["benchmark_id"]][key], abs=1e-12)


@pytest.mark.parametrize("argv, extra", [
    (["sql", "SELECT 1"], "registry"),
    (["init", "ws", "--no-git"], "registry"),
    (["serve", "--port", "0"], "app"),
])
def test_a_command_needing_an_extra_says_which_in_one_line(argv, extra):
    proc = run_core(f"""
        from benchpress.cli import main
        main({argv!r}, prog_name="benchpress")
    """)
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"Error: ") and line.endswith(f"pip install 'benchpress-llm[{extra}]'")


def test_help_lists_every_command_under_the_core():
    proc = run_core("""
        from benchpress.cli import main
        main(["--help"], prog_name="benchpress")
    """)
    assert proc.returncode == 0, proc.stderr
    assert "sql" in proc.stdout and "not installed" in proc.stdout
    assert "pip install 'benchpress-llm[registry]'" in proc.stdout


def test_the_app_module_needing_the_app_extra_says_so():
    proc = run_core("""
        import runpy
        sys.argv = ["benchpress.app", "--port", "0"]
        runpy.run_module("benchpress.app", run_name="__main__")
    """)
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.endswith("pip install 'benchpress-llm[app]'"), line

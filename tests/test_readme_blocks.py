"""Every code block of README.md runs in a test on the install it names (see
tests/readme_blocks.py for the markers): here the marks themselves, the `[registry]` blocks
in a small built workspace, and the checked ones (pip, make, covered-by); the core-install
blocks run in tests/test_package.py's clean venv with the wheel."""

from __future__ import annotations

import os
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO, copy_home
from tests.readme_blocks import KINDS, blocks, commands, run_console, too_wide, unmarked_blocks

pytestmark = pytest.mark.duration(seconds=1)


def _of(kind: str):
    return [b for b in blocks() if b.kind == kind]


def test_every_readme_block_is_marked_with_a_known_install():
    assert unmarked_blocks() == [], "README blocks without a `<!-- readme-test: KIND -->` line"
    found = blocks()
    assert found, "the README shows no code"
    for b in found:
        assert b.kind in KINDS, f"{b.where()}: unknown kind (one of {KINDS})"
    # the tour shows each door on the install it needs
    assert {b.kind for b in found} >= {"core", "registry", "pip", "make"}
    assert any(b.lang == "python" for b in _of("core"))
    assert any(b.lang == "console" for b in _of("core"))


def test_pip_lines_name_this_distribution_and_its_extras():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"])
    seen = set()
    for b in _of("pip"):
        for cmd in commands(b.body):
            words = shlex.split(cmd, comments=True)
            assert words[:2] == ["pip", "install"] and len(words) == 3, f"{b.where()}: {cmd}"
            m = re.fullmatch(r"(?P<name>[\w.-]+)(?:\[(?P<extras>[\w,]+)\])?", words[2])
            assert m and m["name"] == project["name"], f"{b.where()}: {cmd}"
            named = set((m["extras"] or "").split(",")) - {""}
            assert named <= extras, f"{b.where()}: no extra {named - extras}"
            seen |= named or {"core"}
    assert {"core", "registry"} <= seen
    # the install itself is tests/test_package.py's: the wheel in a clean venv, offline
    assert "def test_core_install_predicts_from_the_pre_fit_model(" in \
        (REPO / "tests" / "test_package.py").read_text()


def test_make_lines_are_targets_and_ci_runs_make_test():
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = []
    for b in _of("make"):
        for cmd in commands(b.body):
            words = shlex.split(cmd, comments=True)
            assert words[0] == "make" and len(words) == 2, f"{b.where()}: {cmd}"
            assert words[1] in targets, f"{b.where()}: the Makefile has no target {words[1]}"
            named.append(words[1])
    assert named[:2] == ["main", "test"], "the two set-up commands come first"
    assert re.search(r"^make test$", (REPO / ".ci" / "run").read_text(), re.M)
    # make test builds the docs (strict) before the tests
    assert re.search(r"^test: .*\bdocs\b", makefile, re.M)


def test_covered_blocks_name_existing_tests():
    for b in _of("covered-by"):
        path, _, name = (b.arg or "").partition("::")
        assert path and name, f"{b.where()}: covered-by FILE::TEST"
        assert f"def {name}(" in (REPO / path).read_text(), f"{b.where()}: no test {b.arg}"


@pytest.mark.slow(seconds=8)
def test_registry_blocks_run_in_a_built_workspace(_master_2026_05, tmp_path):
    """The `[registry]` tour, command by command, in a workspace holding the paper's matrix
    (`benchpress` from this environment): each exits 0 and prints within 80 columns."""
    home = copy_home(_master_2026_05, tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHPRESS_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    ran = 0
    for b in _of("registry"):
        assert b.lang == "bash", b.where()
        for cmd in commands(b.body):
            result = run_console(cmd, home.root, env)
            assert result.returncode == 0, f"{b.where()}: {cmd}\n{result.stderr[-2000:]}"
            assert result.stdout.strip(), f"{b.where()}: {cmd} printed nothing"
            wide = too_wide(result.stdout) + too_wide(result.stderr)
            assert not wide, f"{b.where()}: {cmd} prints wider than 80 columns:\n" + \
                "\n".join(wide)
            ran += 1
    assert ran >= 3

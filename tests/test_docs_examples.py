"""The Python examples of the README and the docs run as doctests: every ```python block
that holds `>>>` prompts, the blocks of one page in order in one namespace, from a folder
outside the repository (they need only the installed package and its shipped pre-fit
model: no registry, no mirror). The README's core-install blocks also run in a clean venv
with the wheel (tests/test_package.py)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.duration(seconds=8)

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def doctest_blocks(page: Path) -> list[str]:
    return [b for b in BLOCK.findall(page.read_text(encoding="utf-8")) if ">>> " in b]


def _pages_with_examples() -> list[Path]:
    return [p for p in PAGES if doctest_blocks(p)]


def test_the_api_examples_are_shown():
    text = "\n".join(b for p in PAGES for b in doctest_blocks(p))
    for name in ("from_pretrained", ".predict(", "compare_models(", "compare_with_known_models(",
                 "ignore_unknown=True", "contradicted_note"):
        assert name in text, name


@pytest.mark.parametrize("page", _pages_with_examples(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_python_examples_run(page, tmp_path, monkeypatch, recwarn):
    monkeypatch.chdir(tmp_path)
    name = page.relative_to(REPO).as_posix()
    test = doctest.DocTestParser().get_doctest("\n".join(doctest_blocks(page)), {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: print(text, end=""))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} examples of {name} failed (output above); "
        "they print the shipped model's numbers: after `make pretrained`, update them")
    # an example that leaves a name out says so, as the docs say it does
    if "ignore_unknown=True" in test.docstring:
        assert any(re.search(r"unknown benchmarks ignored: gpqa_diamnd$", str(w.message))
                   for w in recwarn.list)

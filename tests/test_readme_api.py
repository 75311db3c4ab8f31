"""README's "Python API" examples run as doctests (every ```python block, in order, sharing
one namespace), from a folder outside the repository: they need only the installed package
and its shipped pre-fit model (no registry, no mirror)."""

from __future__ import annotations

import doctest
import re

import pytest

from tests.conftest import REPO

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[str]:
    return BLOCK.findall((REPO / "README.md").read_text(encoding="utf-8"))


def test_readme_has_python_examples():
    text = "\n".join(python_blocks())
    for name in ("from_pretrained", ".predict(", "compare_models(", "compare_with_known_models(",
                 "ignore_unknown=True"):
        assert name in text, name


def test_readme_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(python_blocks()), {}, "README.md", "README.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    # the README's ignore_unknown example says the name it left out, as the README says
    with pytest.warns(UserWarning, match="unknown benchmarks ignored: gpqa_diamnd$"):
        runner.run(test, out=lambda text: print(text, end=""))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} README examples failed (output above); they "
        "print the shipped model's numbers: after `make pretrained`, update them")

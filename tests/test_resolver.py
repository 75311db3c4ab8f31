"""The one name resolver (issue 13.5): exact ids, aliases, then errors with suggestions."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.validate.names import resolve_names, suggest, unknown_message

MODELS = ["gpt-5", "gpt-5.1", "gpt-4.5", "claude-opus-4.5", "claude-opus-4"]
BENCHMARKS = ["gpqa_diamond", "hle", "mmlu_pro", "aime_2025"]


def test_exact_then_canonical_then_error_with_suggestions():
    aliases = {"gpqa": "gpqa_diamond"}
    found = resolve_names([" gpqa ", "hle", "gpqa_diamond", ""], BENCHMARKS, kind="benchmark",
                          canonical=aliases.get)
    assert found.ids == ["gpqa_diamond", "hle"]
    assert found.mapping == {"gpqa": "gpqa_diamond", "hle": "hle", "gpqa_diamond": "gpqa_diamond"}
    with pytest.raises(BadInputError) as err:
        resolve_names(["gpqa_diamnd"], BENCHMARKS, kind="benchmark")
    assert str(err.value) == "unknown benchmark 'gpqa_diamnd'; did you mean 'gpqa_diamond'?"
    with pytest.raises(BadInputError) as err:
        resolve_names(["gpt5"], MODELS, kind="model")
    assert str(err.value) == "unknown model 'gpt5'; did you mean 'gpt-5'?"


def test_several_unknown_names_are_named_in_one_line():
    message = unknown_message("benchmark", ["gpqa_diamnd", "nosuch"], BENCHMARKS)
    assert message == "unknown benchmarks: 'gpqa_diamnd'; did you mean 'gpqa_diamond'? 'nosuch'"
    assert "\n" not in message


def test_fuzzy_matches_are_only_suggested_never_applied():
    assert suggest("nosuch", BENCHMARKS) == []
    assert suggest("claude opus 4.5", MODELS)[0] == "claude-opus-4.5"
    found = resolve_names(["gpt5", "gpt-5"], MODELS, kind="model", ignore_unknown=True)
    assert found.ids == ["gpt-5"] and found.unknown == ["gpt5"]


def test_add_model_resolves_its_benchmarks_the_same_way(home):
    result = CliRunner().invoke(main, ["add-model", "acme-9", "--scores", "gpqa_diamnd=70",
                                       "--source", "https://acme.example", "--home", str(home.root)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: unknown benchmark 'gpqa_diamnd'; did you mean "
                                    "'gpqa_diamond'? (the benchmark has no known scale")
    assert not home.releases_csv.exists()

"""Leaderboard spec files: the shipped specs load, and a bad spec is refused in one line that
names the file, the line and the key (the loader in `adapters.spec_schema`), in the library
and at the CLI (exit 1, no traceback)."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from benchpress.adapters import PACKAGE_SPECS, adapters, get_adapter, load_specs
from benchpress.adapters.spec_schema import SpecError, header_key, load_spec
from benchpress.cli import main
from tests.conftest import REPO

GOOD = """\
name: acme
title: Acme board
detect:
  - {pattern: "^# Acme"}
model:
  column: Model
tables:
  - header: [Model, Rate]
    benchmarks:
      - id: acme_rate
        column: Rate
        unit: "%"
        scale: percent
        direction: lower
regimes:
  - {from: 2026-02-01, name: new documents}
"""


def _write(tmp_path, text, name="acme"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_every_shipped_spec_loads_and_is_an_adapter():
    specs = load_specs()
    assert PACKAGE_SPECS.resolve() == (REPO / "sources" / "specs").resolve()
    expected = {p.stem for p in (REPO / "sources" / "specs").glob("*.yaml")}
    assert set(specs) == expected and len(expected) == 16
    names = list(adapters())
    # spec adapters come after the specific code adapters, before the catch-all formats
    assert names.index("vectara-hallucination") < names.index("model-card")
    assert names.index("nyt-connections") < names.index("evalplus")
    for name, spec in specs.items():
        assert get_adapter(name).name == name and spec.benchmark_ids()
        for table in spec.tables:
            for bench in table.benchmarks:
                assert bench.scale and bench.line > 0


def test_a_good_spec_loads_with_its_regimes(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD))
    assert spec.name == "acme" and spec.format == "markdown"
    (table,) = spec.tables
    assert table.benchmarks[0].higher_is_better is False
    assert spec.method_changes() == {"acme_rate": ["2026-02-01"]}


@pytest.mark.parametrize("old, new, line, fragment", [
    ("        direction: lower", "        direction: down", 14,
     "tables[0].benchmarks[0].direction: expected one of higher, lower, none (got 'down')"),
    ("        unit: \"%\"", "        units: \"%\"", 12,
     "tables[0].benchmarks[0].units: unknown key 'units'; did you mean 'unit'?"),
    ("  - header: [Model, Rate]", "  - header: [Model, Rate]\n    heading: \"(\"", 9,
     "tables[0].heading: not a regular expression"),
    ("  - {from: 2026-02-01, name: new documents}", "  - {from: \"2026-02-30\", name: x}", 16,
     "regimes[0].from: expected a date YYYY-MM-DD"),
    ("name: acme", "name: other", 1, "name: is 'other' but the file is named 'acme.yaml'"),
    ("        scale: percent\n", "", 10, "tables[0].benchmarks[0]: missing key 'scale'"),
    ("      - id: acme_rate", "      - id: Acme Rate", 10, "tables[0].benchmarks[0].id: 'Acme Rate' is not an id"),
])
def test_a_bad_spec_is_refused_naming_file_line_and_key(tmp_path, old, new, line, fragment):
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(SpecError) as err:
        load_spec(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path} line ") and fragment in message, message
    assert f" line {line}:" in message, message


def test_not_yaml_and_not_a_mapping_are_one_line(tmp_path):
    with pytest.raises(SpecError, match=r"acme\.yaml: not YAML \("):
        load_spec(_write(tmp_path, "name: [unclosed\n"))
    with pytest.raises(SpecError, match=r"the spec: expected a mapping of keys"):
        load_spec(_write(tmp_path, "- a\n- b\n"))


def test_header_keys_ignore_markup_entities_case_and_spacing():
    assert header_key("**Confabulations  (%)**") == header_key("confabulations (%)")
    assert header_key("&mu;") == header_key("μ") and header_key("&sigma;") == "σ"
    assert header_key("[Score](https://x)") == "score"


def test_a_bad_spec_in_a_home_stops_ingest_in_one_line(tmp_path, home):
    home.specs.mkdir(parents=True)
    _write(home.specs, GOOD.replace("        direction: lower", "        direction: sideways"))
    readme = tmp_path / "README.md"
    readme.write_text("# Acme\n\n|Model|Rate|\n|---|---|\n|A|1.0 %|\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["ingest", str(readme), "--home", str(home.root)])
    assert res.exit_code == 1, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "acme.yaml line 14: tables[0].benchmarks[0].direction" \
        in line and "Traceback" not in res.output
    assert list(home.sources.glob("*.yaml")) == []  # nothing saved


def test_a_spec_named_as_a_code_adapter_is_refused(home):
    home.specs.mkdir(parents=True)
    _write(home.specs, GOOD.replace("name: acme", "name: aider"), name="aider")
    with pytest.raises(SpecError, match="is a code adapter's"):
        load_specs(home.specs)


def test_a_scale_the_contracts_lack_stops_ingest_naming_the_spec_line(tmp_path, home):
    home.specs.mkdir(parents=True)
    _write(home.specs, GOOD.replace("        scale: percent", "        scale: furlongs"))
    readme = tmp_path / "README.md"
    readme.write_text("# Acme\n\n|Model|Rate|\n|---|---|\n|A|1.0 %|\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["ingest", str(readme), "--source-url",
                                    "https://example.org/acme", "--home", str(home.root)])
    assert res.exit_code == 1, res.output
    (line,) = res.stderr.strip().splitlines()
    assert "sources/specs/acme.yaml line 10: benchmark 'acme_rate': field 'scale': unknown " \
           "scale 'furlongs'; known (schemas/scales.yaml): " in line
    assert list(home.sources.glob("*.yaml")) == []

"""The documentation site's sources (docs/, mkdocs.yml): every page in the nav, every command
in the CLI reference once, the figures drawn from the pipeline's files (docs/hooks/figures.py),
and no hand-kept list of the pipeline's stages. `make docs` (run by `make test`) builds the
site strictly; these checks say what is wrong without a build."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.conftest import REPO, load_script

pytestmark = pytest.mark.duration(seconds=1)

DOCS = REPO / "docs"
DIRECTIVE = re.compile(r"^::: mkdocs-click\n((?:    :\w+: .*\n)+)", re.M)


def _hooks():
    return load_script(DOCS / "hooks" / "figures.py", "docs_figures")


def _nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _config() -> dict:
    # mkdocs.yml holds no python tags: a plain YAML read
    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    config = _config()
    nav = _nav_pages(config["nav"])
    excluded = [line.strip().rstrip("/") for line in config["exclude_docs"].splitlines()
                if line.strip()]
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                   if not any(p.relative_to(DOCS).as_posix().startswith(e) for e in excluded))
    assert sorted(set(nav)) == pages, (
        f"pages missing from mkdocs.yml's nav: {sorted(set(pages) - set(nav))}; "
        f"nav entries without a page: {sorted(set(nav) - set(pages))}")
    assert len(nav) == len(set(nav)), "a page is listed twice in the nav"


def test_every_code_fence_is_closed():
    """An unclosed fence swallows the rest of a page (headings, anchors and all) silently."""
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        fences = re.findall(r"^```", page.read_text(encoding="utf-8"), re.M)
        assert len(fences) % 2 == 0, f"{page.relative_to(REPO)}: a code fence is not closed"


def test_the_cli_reference_names_every_command_once_from_its_module():
    from benchpress.cli import COMMANDS

    found: dict[str, list[str]] = {}
    for page in sorted((DOCS / "reference" / "cli").glob("*.md")):
        for block in DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            options = dict(re.findall(r":(\w+): (.*)", block))
            name = options["prog_name"].removeprefix("benchpress ")
            assert options["command"] == name.replace("-", "_"), (page.name, options)
            assert options["module"] == f"benchpress.cli.{COMMANDS.get(name)}", (page.name, name)
            found.setdefault(name, []).append(page.name)
    assert sorted(found) == sorted(COMMANDS), (
        f"commands without a reference page: {sorted(set(COMMANDS) - set(found))}")
    assert all(len(pages) == 1 for pages in found.values()), found
    # the index's table lists each page's commands
    index = (DOCS / "reference" / "cli" / "index.md").read_text(encoding="utf-8")
    for row in re.findall(r"^\| \[.*?\]\((\w+)\.md\) \| (.*) \|$", index, re.M):
        listed = set(re.findall(r"`([\w-]+)`", row[1]))
        assert listed == {c for c, pages in found.items() if pages == [f"{row[0]}.md"]}, row


def test_figures_are_drawn_from_the_metrics_files():
    figures = _hooks()
    temporal = json.loads((REPO / "metrics" / "temporal.json").read_text())
    table = figures.render_figure({"file": "metrics/temporal.json", "table": "by_k"})
    row = next(line for line in table.splitlines() if line.startswith("| `default` |"))
    assert f"{temporal['default_k3_medae']:.2f}" in row
    assert f"{temporal['default_k5_coverage90']:.1f}%" in row
    assert "`dvc repro temporal` runs `benchpress evaluate --temporal" in table
    ratios = figures.render_figure({"file": "metrics/temporal.json", "table": "ratios"})
    assert (f"{temporal['vs_knn_k5_ratio']:.2f} [{temporal['vs_knn_k5_lo']:.2f}, "
            f"{temporal['vs_knn_k5_hi']:.2f}]") in ratios
    registry = json.loads((REPO / "metrics" / "registry.json").read_text())
    fields = figures.render_figure({"file": "metrics/registry.json", "table": "fields",
                                    "fields": {"models": "n_models", "fill": "fill"},
                                    "percent": ["fill"]})
    assert f"| models | {registry['n_models']:,} |" in fields
    assert f"| fill | {100 * registry['fill']:.1f}% |" in fields
    # a reshaping stage names the stages whose files it reshapes
    curve = figures.render_figure({"file": "plots/probe_curve.json", "table": "records",
                                   "columns": {"k": "k", "MedAE": "medae"}})
    assert "`dvc repro plot_data`" in curve and "after `probes`: `benchpress probes" in curve
    with pytest.raises(figures.FigureError, match="has no field 'nope'"):
        figures.render_figure({"file": "metrics/registry.json", "table": "fields",
                               "fields": {"x": "nope"}})


def test_every_figure_spec_of_the_docs_renders():
    figures = _hooks()
    specs = [yaml.safe_load(m.group(1)) for page in DOCS.rglob("*.md")
             for m in figures.FIGURE.finditer(page.read_text(encoding="utf-8"))]
    assert len(specs) >= 10
    for spec in specs:
        assert figures.render_figure(spec).startswith(("|", "*")), spec


def test_the_stage_table_is_dvc_yaml_with_params_filled_in():
    figures = _hooks()
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    table = figures.stages_table()
    assert list(stages) == re.findall(r"<tr><td><code>(\w+)</code></td>", table)
    assert " -> ".join(stages) in table
    # params filled in, a mapping spelled as flags, an escaped shell variable left alone
    assert f"--k {params['probes']['k']}" in table
    assert f"--var2-min {params['drift']['var2-min']}" in table
    assert "${BENCHPRESS_MIRROR:-" in table and "${predict." not in table
    assert "--format csv | tail -n 1" in table  # a pipe inside a command stays as it is


def test_no_page_keeps_its_own_list_of_the_pipeline_stages():
    """The stage list is drawn from dvc.yaml (`<!-- dvc-stages -->`); a chain typed by hand
    (`pull -> build -> ...`) drifts from it, as the README's two lists once did."""
    stages = set(yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"])
    chain = re.compile(r"`?(\w+)`?(?:\s*->\s*`?(\w+)`?){2,}")
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for m in chain.finditer(text):
            names = re.findall(r"\w+", m.group(0))
            assert not set(names) <= stages, (
                f"{page.relative_to(REPO)}: a hand-kept stage list `{m.group(0)}`: use "
                "<!-- dvc-stages --> (docs/hooks/figures.py) or link to the pipeline page")

"""Paths a user or a file names (issue 27, High 1-3): `fit --out` never deletes what it did
not create, source ids from `ingest --id` and replay plans stay under the home's sources/,
and each refusal is one line with nothing written."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchpress.cli import main


def run(*args, home=None):
    extra = ["--home", str(home.root)] if home is not None else []
    return CliRunner().invoke(main, [str(a) for a in args] + extra, catch_exceptions=False)


def one_line(result, code=1):
    assert result.exit_code == code, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr
    return lines[0]


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# -- High 1: fit --out ------------------------------------------------------------------
@pytest.fixture
def fit_env(built_2026_05, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", "")
    return built_2026_05


def test_fit_refuses_a_folder_holding_a_users_file(fit_env, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    line = one_line(run("fit", "--out", out, "--param", "n_starts=1", home=fit_env))
    assert "not a benchpress fit" in line and "thesis.tex" in line
    assert (out / "thesis.tex").read_text() == "years of work"
    assert _tree(tmp_path) == ["mine", "mine/thesis.tex"]  # no temporary folder left


def test_fit_refuses_the_home_and_a_folder_above_it(fit_env):
    before = _tree(fit_env.root)
    for out in (fit_env.root, fit_env.root.parent):
        line = one_line(run("fit", "--out", out, "--param", "n_starts=1", home=fit_env))
        assert "registry home" in line
    assert _tree(fit_env.root) == before


def test_fit_refuses_the_current_folder_in_one_line(fit_env, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    (here / "notes.txt").write_text("keep")
    monkeypatch.chdir(here)
    for out in (".", ".."):
        line = one_line(run("fit", "--out", out, "--param", "n_starts=1", home=fit_env))
        assert "current folder" in line
    assert _tree(tmp_path) == ["here", "here/notes.txt"]


def test_fit_replaces_its_own_artifact_but_not_one_with_a_foreign_file(fit_env, tmp_path):
    out = tmp_path / "art"
    assert run("fit", "--out", out, "--param", "n_starts=1", home=fit_env).exit_code == 0
    first = (out / "manifest.json").read_text()
    assert run("fit", "--out", out, "--param", "n_starts=1", home=fit_env).exit_code == 0
    assert (out / "manifest.json").is_file() and (out / "manifest.json").read_text() != ""
    assert '"benchpress-fit"' in first
    (out / "contracts" / "extra.csv").write_text("mine")
    line = one_line(run("fit", "--out", out, "--param", "n_starts=1", home=fit_env))
    assert "contracts/extra.csv" in line
    assert (out / "contracts" / "extra.csv").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["art"]


# -- High 2: ingest --id ------------------------------------------------------------------
URL = "https://acme.example/blog"
ROWS = ("model_id,name,provider,release_date,benchmark_id,score,reference_url,source_type\n"
        f"acme-1,Acme 1,Acme,2026-01-02,hle,30,{URL},official_blog\n")


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "in" / "table.csv"
    path.parent.mkdir()
    path.write_text(ROWS, encoding="utf-8")
    return path


@pytest.mark.parametrize("source_id", [
    "../../x", "..", "acme/table1", "acme\\table1", "acme table", "acme\u200btable",
    "acme\ttable", "Acme", "-x", ".hidden", "a..b", "x" * 101, "acme\u0430"])
def test_ingest_refuses_a_source_id_that_is_not_a_plain_name(home, table, source_id):
    before = _tree(home.root.parent)
    line = one_line(run("ingest", table, "--id", source_id, "--adapter", "releases-csv",
                        home=home))
    assert "--id" in line and len(line) < 200
    assert _tree(home.root.parent) == before  # nothing written, in the home or beside it


def test_ingest_refuses_an_absolute_id_and_writes_nothing_there(home, table, tmp_path):
    target = tmp_path / "elsewhere" / "x"
    target.parent.mkdir()
    one_line(run("ingest", table, "--id", target, "--adapter", "releases-csv", home=home))
    assert list(target.parent.iterdir()) == []


def test_a_plain_id_lands_and_later_writes_work(home, table):
    result = run("ingest", table, "--id", "acme_t.1", "--adapter", "releases-csv", home=home)
    assert result.exit_code == 0, result.stderr
    assert (home.sources / "acme_t.1.yaml").is_file()
    again = run("ingest", table, "--id", "acme-2", "--adapter", "releases-csv", home=home)
    assert again.exit_code == 0, again.stderr


def test_a_journal_naming_a_config_that_cannot_be_saved_does_not_block_later_writes(
        home, table, monkeypatch):
    """A journal left by an unchecked id (`acme/table1`, committed by an older version) used
    to fail every later write with "could not access .../sources/.tmp-....yaml"."""
    import json

    from benchpress.store import journal
    from benchpress.store.journal import journal_path

    monkeypatch.setattr(journal, "committed", lambda home, intent: True)  # it was committed

    journal_path(home).write_text(json.dumps({
        "source_id": "acme/table1", "sha256": "0" * 64, "publish": {},
        "config": {"id": "acme/table1", "adapter": "releases-csv", "order": 100}}))
    result = run("ingest", table, "--id", "acme-ok", "--adapter", "releases-csv", home=home)
    assert result.exit_code == 0, result.stderr
    assert not journal_path(home).exists()
    assert sorted(p.name for p in home.sources.iterdir()) == ["acme-ok.yaml"]


# -- High 3: replay plan source fields ------------------------------------------------------
def _plan(path, **entry):
    fields = {"date": "2026-06-17", "source": "livebench", "version": "2026-06-17T0855",
              "adapter": "livebench", "url": "https://livebench.ai/",
              "mirror_path": "livebench-history/2026-06-17T0855", "sha256": "a" * 64, **entry}
    body = ", ".join(f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}"
                     for k, v in fields.items())
    path.write_text("name: hostile\nfit: {sources: [livebench], probes: 2}\n"
                    f"versions:\n  - {{{body}}}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("entry, field", [
    ({"source": "../../outside"}, "source"), ({"source": "/tmp/abs"}, "source"),
    ({"source": "live bench"}, "source"), ({"source": [1, 2]}, "source"),
    ({"sha256": "xyz"}, "sha256"), ({"mirror_path": "../../etc"}, "mirror_path"),
    ({"mirror_path": "/etc"}, "mirror_path"), ({"config": [1]}, "config")])
def test_a_plan_field_that_would_leave_the_home_is_one_line(home, tmp_path, entry, field):
    plan = _plan(tmp_path / "plan.yaml", **entry)
    before = _tree(tmp_path)
    line = one_line(run("replay", plan, "--mirror", tmp_path, home=home))
    assert "versions[0]" in line and (field in line or "source config" in line), line
    assert _tree(tmp_path) == before


def test_a_plan_with_a_non_numeric_probe_count_is_one_line(home, tmp_path):
    plan = _plan(tmp_path / "plan.yaml")
    plan.write_text(plan.read_text().replace("probes: 2", "probes: many"))
    assert "fit.probes" in one_line(run("replay", plan, "--mirror", tmp_path, home=home))


def test_a_folder_whose_name_makes_too_long_an_id_asks_for_id(home, tmp_path):
    folder = tmp_path / ("x" * 120)
    folder.mkdir()
    (folder / "part-000.json").write_text('{"models": [], "benchmarks": [], "scores": []}')
    line = one_line(run("ingest", folder, home=home))
    assert "give --id NAME" in line and len(line) < 300
    assert list(home.sources.iterdir()) == []


def test_the_fit_cache_never_prunes_folders_it_did_not_make(fit_env, tmp_path, monkeypatch):
    """BENCHPRESS_FIT_CACHE may name a folder of the user's: only cached fits (named by a
    cache key, holding a manifest) are pruned, never the user's folders."""
    import os

    cache = tmp_path / "docs"
    for k in range(8):
        (cache / f"project-{k}").mkdir(parents=True)
        (cache / f"project-{k}" / "notes.txt").write_text("keep")
        os.utime(cache / f"project-{k}", (1, 1))  # older than any fit
    monkeypatch.setenv("BENCHPRESS_FIT_CACHE", str(cache))
    result = run("predict", "--scores", "gpqa_diamond=71.2", "--param", "n_starts=1",
                 home=fit_env)
    assert result.exit_code == 0, result.stderr
    assert all((cache / f"project-{k}" / "notes.txt").read_text() == "keep" for k in range(8))

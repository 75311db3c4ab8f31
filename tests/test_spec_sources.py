"""The four leaderboards that are "a table in a file", read through their spec files on the
real histories (`../shared/data/{vectara-hallucination,lechmazur,evalplus,open-llm-
leaderboard}-history/`): each newest version lands at least 95% of the upstream values under
the upstream name, cited to the upstream file at its commit (counted here by a parse of the
files that shares nothing with the adapter), every shared version is a version of one source,
scales and directions are stored as declared, evaluation variants stay apart, and a diff
across Vectara's change of judge (2025-10-16 -> 2025-11-18) names method changes, never
revisions."""

from __future__ import annotations

import csv
import json
import re
import shutil

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from benchpress.adapters import detect_adapter
from benchpress.cli import main
from benchpress.store.build import build
from benchpress.store.tables import read_table
from tests.conftest import REPO, SHARED_DATA, make_home

VECTARA = SHARED_DATA / "vectara-hallucination-history"
LECH = SHARED_DATA / "lechmazur-history"
EVALPLUS = SHARED_DATA / "evalplus-history"
OPEN_LLM = SHARED_DATA / "open-llm-leaderboard-history"
LECH_REPOS = sorted(p.name for p in LECH.iterdir() if p.is_dir())
CONFIGS = ["vectara-hallucination", "evalplus", "open-llm-leaderboard",
           *(f"lechmazur-{r.replace('_', '-')}" for r in LECH_REPOS)]


def _versions(folder, repo=None) -> list[dict]:
    with open(folder / "VERSIONS.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if repo is None or r["repo_name"] == repo]


def _blob(row, path) -> str:
    return f"https://github.com/{row['upstream_repo']}/blob/{row['commit']}/{path}"


# ---- an independent extraction of the upstream values ------------------------------------
# (model name, benchmark id, value) of each file, by a plain parse written for the test: the
# header cells a table must have, the columns that hold values, and what each measures.

def _md_table(text, wanted, heading=None):
    """{header: [cells]} rows of the first pipe table whose header has the `wanted` cells
    (after the heading matching `heading`, when given)."""
    lines, seen_heading = text.splitlines(), heading is None
    for k, line in enumerate(lines[:-1]):
        if heading and line.startswith("#"):
            seen_heading = bool(re.search(heading, line, re.I))
        if not (seen_heading and line.strip().startswith("|")):
            continue
        header = [h.strip().replace("&mu;", "μ") for h in line.strip().strip("|").split("|")]
        if not set(wanted) <= set(header) or not re.match(r"^\s*\|[\s:|-]+$", lines[k + 1]):
            continue
        rows = []
        for body in lines[k + 2:]:
            if not body.strip().startswith("|"):
                break
            rows.append(dict(zip(header, (c.strip() for c in body.strip().strip("|").split("|")))))
        return rows
    return []


def _number(cell):
    found = re.fullmatch(r"\s*([-+]?\d+(?:\.\d+)?)\s*%?\s*", cell or "")
    return float(found.group(1)) if found else None


# repo -> [(heading or None, header cells, {column: benchmark id})]
LECH_TABLES = {
    "bazaar": [(None, ["Model", "μ"], {"μ": "lechmazur_bazaar_trueskill"})],
    "buyout_game": [("Main Leaderboard", ["Model", "BT"], {"BT": "lechmazur_buyout_game_bt"})],
    "confabulations": [("50-50", ["Model", "Confab %"], {
        "Confab %": "lechmazur_confabulation_rate", "Non-Resp %": "lechmazur_non_response_rate",
        "Weighted": "lechmazur_confabulation_weighted"})],
    "debate": [(None, ["Model", "BT"], {"BT": "lechmazur_debate_bt"})],
    "divergent": [(None, ["Model", "Score"], {"Score": "lechmazur_divergent_score"}),
                  (None, ["Model Name", "% Repeats"], {"% Repeats": "lechmazur_divergent_repeats"})],
    "elimination_game": [(None, ["Model", "μ"], {"μ": "lechmazur_elimination_game_trueskill",
                                                 "Avg Points": "lechmazur_elimination_game_avg_points"})],
    "generalization": [(None, ["Model", "Top-1 Accuracy"], {
        "Top-1 Accuracy": "lechmazur_generalization_v2_top1",
        "Inverse-Rank Score": "lechmazur_generalization_v2_inverse_rank"})],
    "goods": [(None, ["Model", "Avg. % Contrib"], {"Avg. % Contrib": "lechmazur_goods_contribution"})],
    "pact": [("Composite", ["Model", "CMS Points"], {"CMS Points": "lechmazur_pact_cms"})],
    "persuasion": [(None, ["Model", "Average Persuasion Strength"], {
        "Average Persuasion Strength": "lechmazur_persuasion_strength"}),
        (None, ["Model", "Target Susceptibility"], {
            "Target Susceptibility": "lechmazur_persuasion_susceptibility"})],
    "pgg_bench": [(None, ["Model", "μ"], {"μ": "lechmazur_pgg_bench_trueskill"})],
    "step_game": [(None, ["Model", "mu"], {"mu": "lechmazur_step_game_trueskill"})],
    "sycophancy": [("Main Leaderboard", ["Model", "Sycophancy", "Conditional"], {
        "Sycophancy": "lechmazur_sycophancy_rate", "Conditional": "lechmazur_sycophancy_conditional"}),
        ("Consistency Leaderboard", ["Model", "Total", "Contrarian"], {
            "Total": "lechmazur_sycophancy_inconsistency",
            "Contrarian": "lechmazur_sycophancy_contrarian"})],
}
VECTARA_COLUMNS = {"Hallucination Rate": "vectara_hallucination_rate",
                   "Factual Consistency Rate": "vectara_factual_consistency_rate",
                   "Answer Rate": "vectara_answer_rate",
                   "Average Summary Length (Words)": "vectara_summary_length"}
OPEN_LLM_COLUMNS = {f"evaluations_{k}_normalized_score": f"open_llm_{v}" for k, v in (
    ("ifeval", "ifeval"), ("bbh", "bbh"), ("math", "math_lvl5"), ("gpqa", "gpqa"),
    ("musr", "musr"), ("mmlu_pro", "mmlu_pro"))} | {"model_average_score": "open_llm_average"}
EVALPLUS_KEYS = {"humaneval": "humaneval", "humaneval+": "humaneval_plus", "mbpp": "mbpp",
                 "mbpp+": "mbpp_plus"}


def _upstream(source: str) -> tuple[list[tuple], str, dict]:
    """(the newest version's values as (name, benchmark, value), its label, {file: URL})."""
    if source == "vectara-hallucination":
        row = _versions(VECTARA)[-1]
        text = (VECTARA / row["date"] / "README.md").read_text(encoding="utf-8")
        values = [(r["Model"], bench, _number(r[col])) for r in _md_table(text, ["Model", "Hallucination Rate"])
                  for col, bench in VECTARA_COLUMNS.items()]
        return values, row["date"], {None: _blob(row, "README.md")}
    if source == "open-llm-leaderboard":
        row = _versions(OPEN_LLM)[-1]
        with open(OPEN_LLM / row["date"] / "huggingface_v2.csv", newline="", encoding="utf-8") as fh:
            values = [(r["model_name"], bench, float(r[col])) for r in csv.DictReader(fh)
                      for col, bench in OPEN_LLM_COLUMNS.items() if r[col]]
        return values, row["date"], {None: _blob(row, "csv/huggingface_v2.csv")}
    if source == "evalplus":
        row = _versions(EVALPLUS)[-1]
        doc = json.loads((EVALPLUS / row["date"] / "results.json").read_text(encoding="utf-8"))
        values = [(name, bench, float(rec["pass@1"][key])) for name, rec in doc.items()
                  for key, bench in EVALPLUS_KEYS.items() if rec["pass@1"].get(key) is not None]
        return values, row["date"], {None: _blob(row, "results.json")}
    repo = source.removeprefix("lechmazur-").replace("-", "_")
    row = _versions(LECH, repo)[-1]
    text = (LECH / repo / row["date"] / "README.md").read_text(encoding="utf-8")
    values = []
    for heading, wanted, columns in LECH_TABLES[repo]:
        for r in _md_table(text, wanted, heading):
            name = r.get("Model") or r.get("Model Name")
            values += [(name, bench, _number(r[col])) for col, bench in columns.items() if col in r]
    return values, row["date"], {None: _blob(row, "README.md")}


class _Built:
    """Each source's repository config (every shared version) built from the mirror in a
    workspace of its own, once per module: (home, build report, tables). Alone, so that the
    models table names each model as this source does (a model another source describes
    first would carry that source's spelling)."""

    def __init__(self, root):
        self.root, self.done = root, {}

    def __call__(self, source):
        if source not in self.done:
            home = make_home(self.root / source)
            shutil.copy(REPO / "sources" / f"{source}.yaml", home.sources)
            report = build(home, mirror=SHARED_DATA)
            tables = {t: read_table(home.registry, t) for t in (
                "scores", "models", "sources", "benchmarks", "quarantine", "cells")}
            self.done[source] = (home, report, tables)
        return self.done[source]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _Built(tmp_path_factory.mktemp("spec-histories"))


def _all_tables(built, name):
    return pl.concat([built(s)[2][name] for s in CONFIGS], how="diagonal_relaxed")


pytestmark = pytest.mark.slow(seconds=28)  # the module's


@pytest.mark.parametrize("source", CONFIGS)
def test_newest_version_lands_the_upstream_values_cited(built, source):
    _, _, tables = built(source)
    upstream, newest, cited = _upstream(source)
    upstream = [u for u in upstream if u[2] is not None]
    assert len(upstream) >= 15, "the independent parse found the upstream table"
    got = (tables["scores"].filter((pl.col("source_id") == source)
                                   & (pl.col("source_version") == newest))
           .join(tables["models"].select("model_id", "name"), on="model_id")
           .with_columns(pl.col("benchmark_id").str.split("@").list.first().alias("base")))
    landed = {}
    for name, base, score, url in got.select("name", "base", "score", "reference_url").rows():
        landed.setdefault((base, round(score, 6)), []).append((name, url))

    def found(name, bench, value):
        # under the upstream name, or an evaluation variant of it ("x (bfloat16)")
        return any((n == name or n.startswith(name + " (")) and url == cited[None]
                   for n, url in landed.get((bench, round(value, 6)), ()))

    hits = sum(found(*u) for u in upstream)
    assert hits / len(upstream) >= 0.95, (source, hits, len(upstream))
    assert set(got["reference_url"]) == {cited[None]}  # the upstream file at its commit


@pytest.mark.parametrize("source", CONFIGS)
def test_every_shared_version_is_a_version_of_one_source(built, source):
    _, report, tables = built(source)
    folder, repo = {"vectara-hallucination": (VECTARA, None), "evalplus": (EVALPLUS, None),
                    "open-llm-leaderboard": (OPEN_LLM, None)}.get(
        source, (LECH, source.removeprefix("lechmazur-").replace("-", "_")))
    shared = _versions(folder, repo)
    rows = tables["sources"].filter(pl.col("source_id") == source).sort("source_version")
    assert rows["source_version"].to_list() == [r["date"] for r in shared]
    assert set(rows["adapter"]) == {source}
    # every version's values cite that version's upstream commit, never a local path
    scores = tables["scores"].filter(pl.col("source_id") == source)
    commits = {r["date"]: r["commit"] for r in shared}
    for version, url in scores.select("source_version", "reference_url").unique().rows():
        assert url.startswith("https://github.com/") and f"/blob/{commits[version]}/" in url
    summaries = [s for s in report.sources if s.source_id == source]
    assert len(summaries) == len(shared)
    # every version with a leaderboard table lands values (the two earliest confabulation
    # READMEs hold charts only, and say so)
    for s in summaries:
        assert s.rows_accepted > 0 or any("no table" in n for n in s.notes), s


def test_quarantine_holds_only_refused_names_and_upstream_duplicates(built):
    reasons = _all_tables(built, "quarantine").select(
        "source_id", pl.col("reason").str.extract(r"(non-ASCII|characters long|duplicate)")).unique()
    assert reasons["reason"].null_count() == 0, reasons
    # Zephyr β (evalplus) and a 104-character name (open LLM leaderboard) are refused ids
    assert set(reasons.filter(pl.col("reason") != "duplicate")["source_id"]) <= {
        "evalplus", "open-llm-leaderboard"}


def test_scales_units_and_directions_are_stored_as_declared(built):
    bench = {r["benchmark_id"]: r for r in _all_tables(built, "benchmarks").to_dicts()}
    assert (bench["vectara_hallucination_rate"]["scale"], bench["vectara_hallucination_rate"]["unit"],
            bench["vectara_hallucination_rate"]["higher_is_better"]) == ("percent", "%", False)
    assert bench["vectara_summary_length@2025-11-18"]["scale"] == "words"
    assert bench["vectara_summary_length@2025-11-18"]["higher_is_better"] is None
    assert bench["lechmazur_generalization_avg_rank"]["scale"] == "rank"
    assert bench["lechmazur_generalization_avg_rank"]["higher_is_better"] is False
    assert bench["lechmazur_step_game_trueskill"]["scale"] == "trueskill"
    assert bench["lechmazur_debate_bt"]["scale"] == "bradley_terry"
    assert bench["lechmazur_pact_glicko"]["scale"] == "glicko"
    assert bench["open_llm_ifeval"]["scale"] == "normalized"
    # a regime that turned the divergent score around: its own direction from 2024-12-29
    assert bench["lechmazur_divergent_score"]["higher_is_better"] is False
    assert bench["lechmazur_divergent_score@2024-12-29"]["higher_is_better"] is True
    # a relative rating is never a percentage, and no cell of one sits in a percent column
    relative = {k for k, v in yaml.safe_load((REPO / "schemas" / "scales.yaml").read_text())
                ["scales"].items() if v.get("relative")}
    assert {"trueskill", "bradley_terry", "glicko", "rank", "elo"} <= relative
    rated = [b for b in bench.values() if b["scale"] in relative]
    assert len(rated) >= 7 and all(b["unit"] != "%" for b in rated)


def test_evaluation_variants_stay_apart(built):
    models = built("open-llm-leaderboard")[2]["models"]
    newest = _versions(OPEN_LLM)[-1]
    with open(OPEN_LLM / newest["date"] / "huggingface_v2.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    counts = {}
    for r in rows:
        counts[r["model_name"]] = counts.get(r["model_name"], 0) + 1
    twice = sorted(n for n, k in counts.items() if k > 1)
    assert len(twice) >= 50
    name = twice[0]
    variants = models.filter(pl.col("name").str.starts_with(name + " ("))
    assert variants.height == counts[name]  # one model per evaluation, never merged
    settings = [json.loads(s) for s in variants["setting"]]
    assert len({(s["precision"], s["revision"], s["chat_template"]) for s in settings}) == counts[name]
    # a community fine-tune keeps its organisation; an official provider's model does not
    ids = dict(models.select("name", "model_id").rows())
    assert ids["0-hero/Matter-0.2-7B-DPO"] == "matter-0.2-7b-dpo-0-hero"
    assert ids["Qwen/Qwen2.5-72B-Instruct"] == "qwen2.5-72b-instruct"
    # effort in a name is the model's setting and part of its id (Lech Mazur's boards)
    models = built("lechmazur-confabulations")[2]["models"]
    gpt = models.filter(pl.col("name") == "GPT-5 (medium reasoning)").row(0, named=True)
    assert gpt["model_id"] == "gpt-5-medium"
    assert json.loads(gpt["setting"]) == {"effort": "medium", "reasoning": True}


@pytest.mark.parametrize("folder", sorted(p.name for p in VECTARA.iterdir() if p.is_dir()))
def test_every_vectara_readme_is_the_spec_s_not_a_model_card(folder):
    assert detect_adapter(VECTARA / folder / "README.md").name == "vectara-hallucination"


def test_every_shared_file_is_recognised_by_content():
    for row in _versions(LECH):
        path = LECH / row["repo_name"] / row["date"] / "README.md"
        assert detect_adapter(path).name == "lechmazur-" + row["repo_name"].replace("_", "-")
    for row in _versions(EVALPLUS):
        assert detect_adapter(EVALPLUS / row["date"]).name == "evalplus"
    for row in _versions(OPEN_LLM):
        assert detect_adapter(OPEN_LLM / row["date"] / "huggingface_v2.csv").name == \
            "open-llm-leaderboard"


def _cli(home, *args):
    return CliRunner().invoke(main, [*map(str, args), "--home", str(home.root)])


def test_diff_across_the_judge_change_names_method_changes(tmp_path):
    """Vectara 2025-10-16 -> 2025-11-18 (HHEM-2.3 and new documents): every cell the new
    version brings is a new benchmark version (or a new model), none a revision."""
    home = make_home(tmp_path / "ws")
    config = yaml.safe_load((REPO / "sources" / "vectara-hallucination.yaml").read_text())
    older = [v for v in config["versions"] if v["version"] <= "2025-10-16"]
    *before, last = older
    config.update({k: last[k] for k in ("version", "url", "mirror_path", "sha256")},
                  versions=before, published=last["version"])
    (home.sources / "vectara-hallucination.yaml").write_text(yaml.safe_dump(config))
    assert _cli(home, "build", "--mirror", SHARED_DATA).exit_code == 0
    assert _cli(home, "snapshot", "create", "--tag", "before").exit_code == 0
    # the next version, ingested as a user would: its citation and date from VERSIONS.csv
    res = _cli(home, "ingest", VECTARA / "2025-11-18" / "README.md", "--source",
               "vectara-hallucination", "--mirror", SHARED_DATA)
    assert res.exit_code == 0, res.output
    assert _cli(home, "snapshot", "create", "--tag", "after").exit_code == 0
    res = _cli(home, "diff", "before", "after", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    causes = {}
    for change in ("added", "changed", "removed"):
        for cell in doc["cells"][change]:
            causes.setdefault((change, cell["cause"]), []).append(cell)
    assert set(causes) <= {("added", "method_change"), ("added", "new_model")}, set(causes)
    method = causes[("added", "method_change")]
    assert len(method) >= 20 and all(c["benchmark_id"].endswith("@2025-11-18") for c in method)
    assert {b["benchmark_id"] for b in doc["benchmarks"]["added"]} == {
        f"{b}@2025-11-18" for b in VECTARA_COLUMNS.values()}
    urls = read_table(home.registry, "scores").filter(
        pl.col("source_version") == "2025-11-18")["reference_url"].unique().to_list()
    assert urls == [_blob(next(r for r in _versions(VECTARA) if r["date"] == "2025-11-18"),
                          "README.md")]


def test_pull_caches_every_version_so_build_needs_no_mirror(tmp_path, monkeypatch):
    """What `dvc repro` runs: `pull` (with the mirror) then `build` (without): every
    version of a versioned source must be in the cache by then, not only the newest."""
    monkeypatch.delenv("BENCHPRESS_MIRROR", raising=False)
    monkeypatch.delenv("BENCHPRESS_CACHE", raising=False)
    home = make_home(tmp_path / "ws")
    shutil.copy(REPO / "sources" / "lechmazur-step-game.yaml", home.sources)
    res = _cli(home, "pull", "--mirror", SHARED_DATA)
    assert res.exit_code == 0, res.output
    pulled = res.stdout.strip().splitlines()
    assert len(pulled) == len(_versions(LECH, "step_game")) == 16
    assert pulled[0].startswith("lechmazur-step-game@2025-01-21\t")
    res = _cli(home, "build")
    assert res.exit_code == 0, res.output
    versions = read_table(home.registry, "sources")["source_version"].to_list()
    assert sorted(versions) == [r["date"] for r in _versions(LECH, "step_game")]

"""Provenance (`store.provenance`): who measured each value, and a vendor's card is first-hand
only for its own models. On the real BenchPress matrix + Artificial Analysis, and on small
cited tables the test writes."""

from __future__ import annotations

import polars as pl

from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table
from tests.conftest import build_repo_sources

HEADER = ("model_id,name,provider,release_date,is_reasoning,benchmark_id,score,reference_url,"
          "source_type,reported_setting,notes\n")


def _table(path, rows):
    """rows: (model, provider, benchmark, score, url, source_type)."""
    path.write_text(HEADER + "".join(f"{m},{m},{p},2026-01-01,false,{b},{s},{u},{t},,\n"
                                     for m, p, b, s, u, t in rows), encoding="utf-8")
    return path


def test_a_quoting_vendor_card_loses_to_the_leaderboard_that_measured(tmp_path):
    """MiniMax's model card quotes GPT-5's Artificial Analysis index (69.0); the cell is AA's
    own value, and the quote stays in scores as `other_vendor`."""
    home, _ = build_repo_sources(tmp_path / "ws", ["benchpress-2026-05", "artificial-analysis"])
    cells = read_table(home.registry, "cells").filter(
        (pl.col("model_id") == "gpt-5") & (pl.col("benchmark_id") == "aa_intelligence_index"))
    (cell,) = cells.to_dicts()
    assert cell["source_id"] == "artificial-analysis" and cell["measured_by"] == "leaderboard"
    scores = read_table(home.registry, "scores").filter(
        (pl.col("model_id") == "gpt-5") & (pl.col("benchmark_id") == "aa_intelligence_index")
        & (pl.col("source_id") == "benchpress-2026-05"))
    assert scores.select("score", "measured_by").rows() == [(69.0, "other_vendor")]
    assert "MiniMaxAI" in scores["reference_url"][0]
    # every observation is classified; a vendor's word on its own model stays first-hand
    all_scores = read_table(home.registry, "scores")
    assert all_scores["measured_by"].null_count() == 0
    own = all_scores.filter(pl.col("measured_by") == "own_vendor")
    assert own.height > 0 and own["reference_url"].str.contains("openai.com").any()


def test_own_vendor_beats_leaderboard_other_vendor_does_not(home, tmp_path):
    board = "https://livebench.ai/"
    rows = [("gpt-x", "OpenAI", "gpqa_diamond", 70, board, "leaderboard"),
            ("gpt-x", "OpenAI", "hle", 20, board, "leaderboard"),
            ("kimi-x", "Moonshot AI", "gpqa_diamond", 60, board, "leaderboard"),
            ("kimi-x", "Moonshot AI", "hle", 15, board, "leaderboard")]
    ingest(home, str(_table(tmp_path / "board.csv", rows)), adapter="releases-csv", source_id="board")
    cards = [  # OpenAI on its own model; Moonshot's card quoting OpenAI's model and its own
        ("gpt-x", "OpenAI", "gpqa_diamond", 72, "https://openai.com/index/gpt-x", "official_blog"),
        ("gpt-x", "OpenAI", "hle", 25, "https://huggingface.co/moonshotai/Kimi-X", "model_card"),
        ("kimi-x", "Moonshot AI", "hle", 18, "https://huggingface.co/moonshotai/Kimi-X", "model_card"),
    ]
    ingest(home, str(_table(tmp_path / "cards.csv", cards)), adapter="releases-csv", source_id="cards")
    cells = {(r["model_id"], r["benchmark_id"]): (r["score"], r["measured_by"])
             for r in read_table(home.registry, "cells").to_dicts()}
    assert cells[("gpt-x", "gpqa_diamond")] == (72.0, "own_vendor")
    assert cells[("gpt-x", "hle")] == (20.0, "leaderboard")     # the quote ranks as a third party
    assert cells[("kimi-x", "hle")] == (18.0, "own_vendor")
    assert cells[("kimi-x", "gpqa_diamond")] == (60.0, "leaderboard")


def test_conflicts_show_who_measured_both_sides(home, tmp_path):
    from benchpress.store.sql import query

    rows = [("gpt-x", "OpenAI", "hle", 20, "https://livebench.ai/", "leaderboard"),
            ("gpt-x", "OpenAI", "gpqa_diamond", 70, "https://livebench.ai/", "leaderboard")]
    ingest(home, str(_table(tmp_path / "board.csv", rows)), adapter="releases-csv", source_id="board")
    quote = [("gpt-x", "OpenAI", "hle", 25, "https://huggingface.co/moonshotai/Kimi-X", "model_card")]
    ingest(home, str(_table(tmp_path / "quote.csv", quote)), adapter="releases-csv", source_id="quote")
    got = query(home.registry, "SELECT resolved_score, resolved_measured_by, other_score, "
                               "other_measured_by FROM conflicts")
    assert got.rows() == [(20.0, "leaderboard", 25.0, "other_vendor")]

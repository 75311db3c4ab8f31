"""Vendor model-card tables with the messy headers real cards use."""

from __future__ import annotations

import polars as pl

from benchpress.store.ingest import ingest
from benchpress.store.tables import read_table

CARD = """# Acme-1 model card

Some prose. | not a table |

## Evaluation

| **Benchmark** | **Acme-1** | GPT-4o<sup>†</sup> | Claude 3.5 Sonnet |
|:---|:---:|---:|---|
| **Reasoning** | | | |
| GPQA-Diamond (pass@1) | **71.2** | 53.6 | 65.0 |
| Humanity's Last Exam* | 20.1 | - | 4.3 |
| MMLU-Pro<sup>1</sup> | 84.0% | 72.6 | 78.0 |
| MMLU | 91.0 | 88.7 | n/a |
| AIME 2025 (avg@16) | 85.5 | | |
| Made-Up Bench | 50 | 40 | 30 |

<sup>1</sup> 5-shot.
"""

ROWS_OF_MODELS = """| Model | GPQA Diamond | SWE-bench Verified |
|---|---|---|
| Acme-1-mini | 60.5 | 40.1 |
"""


def test_card_table_maps_labels_to_benchmark_ids(home, tmp_path):
    card = tmp_path / "README.md"
    card.write_text(CARD, encoding="utf-8")
    sid, report = ingest(home, str(card), url="https://huggingface.co/acme/Acme-1")
    scores = read_table(home.registry, "scores")
    acme = {r["benchmark_id"]: r["score"] for r in scores.filter(pl.col("model_id") == "acme-1").iter_rows(named=True)}
    assert acme == {"gpqa_diamond": 71.2, "hle": 20.1, "mmlu_pro": 84.0, "mmlu": 91.0, "aime_2025": 85.5}
    # competitors' columns are kept as observations too, each citing the card
    assert scores.filter(pl.col("model_id") == "gpt-4o")["benchmark_id"].sort().to_list() == [
        "gpqa_diamond", "mmlu", "mmlu_pro"]
    assert set(scores["reference_url"]) == {"https://huggingface.co/acme/Acme-1"}
    assert set(scores["source_type"]) == {"model_card"}
    # the unknown benchmark is quarantined, by row and column, not guessed
    summary = next(s for s in report.sources if s.source_id == sid)
    assert summary.rows_quarantined == 3
    assert all("Made-Up Bench" not in r or "no known scale" in r for r in summary.reasons)
    assert summary.reasons[0].startswith(f"{sid} line 15, column 'Acme-1'")


def test_rows_without_a_type_take_it_from_the_cited_url(home, tmp_path):
    """A row with no source type gets one from its URL, including a URL filled in from the
    source itself (what a self-citing file such as a card gets)."""
    from benchpress.validate.contracts import load_contracts
    from benchpress.validate.prepare import SourceInfo, prepare_source
    from benchpress.adapters.base import AdapterOutput

    out = AdapterOutput.from_rows(scores=[
        {"model_id": "acme-1", "benchmark_id": "gpqa_diamond", "score_raw": "70", "row": "r0"},
        {"model_id": "acme-1", "benchmark_id": "hle", "score_raw": "20", "row": "r1",
         "reference_url": "https://arxiv.org/abs/2501.00001"},
    ])
    info = SourceInfo("card", "https://openai.com/index/acme-1/", "", "x", cites_source=True)
    scores = prepare_source(out, load_contracts(home.schemas), info).scores
    assert scores.select("benchmark_id", "reference_url", "source_type").rows() == [
        ("gpqa_diamond", "https://openai.com/index/acme-1/", "official_blog"),
        ("hle", "https://arxiv.org/abs/2501.00001", "tech_report"),
    ]


def test_card_with_models_in_rows(home, tmp_path):
    card = tmp_path / "card.md"
    card.write_text(ROWS_OF_MODELS, encoding="utf-8")
    ingest(home, str(card), url="https://example.com/acme/card")
    cells = read_table(home.registry, "cells")
    assert sorted(zip(cells["model_id"], cells["benchmark_id"], cells["score"])) == [
        ("acme-1-mini", "gpqa_diamond", 60.5), ("acme-1-mini", "swe_bench_verified", 40.1)]

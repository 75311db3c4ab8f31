"""Vendor model cards: the markdown benchmark tables of a (Hugging Face style) README.

Tables come in two orientations. Most cards put benchmarks in rows and models in columns
("| Benchmark | Model-X | GPT-4o |"); some put models in rows ("| Model | GPQA | HLE |").
The first header cell decides. Labels lose their markup and footnote marks here
("**GPQA-Diamond**<sup>1</sup> (pass@1)" -> "GPQA-Diamond (pass@1)"); mapping them to
`gpqa_diamond` is normalization's job, through the alias table. Every score cites the card
itself: ingest a local copy with `--url` naming the card's canonical address.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchpress.adapters._files import decode_text
from benchpress.adapters._markdown import parse_tables
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "parse_tables"]

_NUMBER = re.compile(r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?")
_MODEL_FIRST = {"model", "models", "model name", "name"}


def detect(path: Path, content: bytes) -> bool:
    text = content.decode("utf-8", "replace")
    return path.suffix.lower() in {".md", ".markdown"} or bool(
        re.search(r"^\s*\|.*\|\s*\n\s*\|?\s*:?-{3,}", text, re.MULTILINE)
    )


def _plain(label: str) -> str:
    """Markup and footnote markers off: "**MMLU-Pro**<sup>1</sup>" -> "MMLU-Pro"."""
    label = re.sub(r"<sup>.*?</sup>|<[^>]+>", "", label)
    return re.sub(r"[*_`†‡§¹²³]", "", label).strip()


def read(path: Path) -> AdapterOutput:
    text = decode_text(path.read_bytes(), path)
    tables = parse_tables(text)
    if not tables:
        raise BadInputError(f"{path}: no markdown table found")
    models: dict[str, dict] = {}
    scores = []
    for header_line, header, body in tables:
        models_in_rows = _plain(header[0]).lower() in _MODEL_FIRST
        for line_no, cells in body:
            row_label = cells[0] if cells else ""
            numbers = [c for c in cells[1:] if _NUMBER.search(c)]
            if not _plain(row_label) or not numbers:
                continue  # section headings such as "| **Reasoning** | | |"
            for col, cell in zip(header[1:], cells[1:]):
                if not _plain(col) or not _NUMBER.search(cell):
                    continue  # "-", "n/a" or blank: not reported
                model, bench = (row_label, col) if models_in_rows else (col, row_label)
                model_id = _plain(model)
                models.setdefault(model_id, {"model_id": model_id, "name": model_id,
                                             "row": f"line {header_line}"})
                scores.append(
                    {
                        "model_id": model_id,
                        "benchmark_id": _plain(bench),
                        "score_raw": _NUMBER.search(cell).group(0).replace(",", ""),
                        "source_type": "model_card",
                        "notes": cell if cell != _NUMBER.search(cell).group(0) else None,
                        "row": f"line {line_no}, column '{_plain(col)}'",
                    }
                )
    return AdapterOutput.from_rows(models=models.values(), scores=scores)


ADAPTER = Adapter(
    name="model-card",
    detect=detect,
    read=read,
    cites_source=True,
)

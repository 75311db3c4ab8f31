"""A plain wide CSV: one row per model, one column per benchmark (a paper's table pasted).

    Model,GPQA Diamond,HLE,MMLU-Pro
    Acme-2,61.2%,20.1,—

The first column names the model (its header is `model`, `model_id`, `model name` or
`name`, any case). Columns headed `provider` / `organization` / `developer`,
`release_date` / `release date` / `released` and `reasoning` fill the model's fields; every
other header is a benchmark label, resolved later by normalization like any source's
(exact id, benchmark names, the alias table). A header that names no known benchmark is
not guessed: its values are quarantined with the reason, and `benchpress aliases suggest
--kind benchmark` lists it. A value is a number, optionally with a `%` sign (`61.2%` is
61.2 on a percent benchmark), thousands separators (`1,234`) or a footnote mark (`71.2*`,
the raw cell kept in `notes`); blank, `-`, `—`, `n/a` mean "not reported".

The table itself is the citation: ingest it with `--source-url URL` (the paper's or page's
address), which every score cites; without it the ingest is refused (`needs_citation`).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from benchpress.adapters._files import csv_records, decode_text
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "parse_value"]

_MODEL_HEADERS = {"model", "models", "model_id", "model id", "model name", "name"}
_FIELDS = {
    "provider": "provider", "organization": "provider", "organisation": "provider",
    "developer": "provider", "lab": "provider",
    "release_date": "release_date", "release date": "release_date", "released": "release_date",
    "date": "release_date",
    "reasoning": "is_reasoning", "is_reasoning": "is_reasoning",
}
_MISSING = {"", "-", "--", "—", "–", "n/a", "na", "nan", "none", "null", "?", "x"}
_VALUE = re.compile(r"^\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)\s*(%?)\s*(.*)$")


def _key(header: str) -> str:
    return re.sub(r"\s+", " ", header.strip().lower())


def detect(path: Path, content: bytes) -> bool:
    if path.suffix.lower() not in {".csv", ".txt", ""}:
        return False
    first = content.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    cells = [_key(c.strip('"')) for c in first.split(",")]
    return len(cells) >= 2 and cells[0] in _MODEL_HEADERS and "benchmark_id" not in cells


def parse_value(cell: str | None) -> tuple[str | None, str | None]:
    """(the number as text, or None when not reported; a note when the cell held more).

    ``"61.2%"`` -> ``("61.2", None)``; ``"1,234"`` -> ``("1234", None)``;
    ``"71.2*"`` -> ``("71.2", "71.2*")``; ``"—"`` -> ``(None, None)``. Anything else is
    returned as given, for validation to refuse with the reason.
    """
    if cell is None or cell.strip().lower() in _MISSING:
        return None, None
    match = _VALUE.match(cell)
    if not match:
        return cell.strip(), None
    number, _, rest = match.groups()
    if rest and re.search(r"[0-9A-Za-z]", rest) and not re.fullmatch(r"[*†‡§¹²³⁴⁵⁶⁷⁸⁹]+|\(.*\)|±.*", rest):
        return cell.strip(), None  # "61.2 / 70.1": two numbers, not one
    return number.replace(",", ""), (cell.strip() if rest else None)


def read(path: Path) -> AdapterOutput:
    raw = path.read_bytes()
    header = [h.strip() for h in next(csv.reader(io.StringIO(decode_text(raw, path))), [])]
    records = csv_records(str(path), raw)
    if len(header) < 2 or _key(header[0]) not in _MODEL_HEADERS:
        raise BadInputError(f"{path}: a wide CSV needs a model column first (headed 'model') "
                            "and one column per benchmark")
    model_col = header[0]
    fields = {h: _FIELDS[_key(h)] for h in header[1:] if _key(h) in _FIELDS}
    benchmarks = [h for h in header[1:] if h and h not in fields]
    if not benchmarks:
        raise BadInputError(f"{path}: no benchmark columns after '{model_col}'")
    models, scores, notes, blank = {}, [], [], 0
    for n, rec in records:
        mid = rec.get(model_col)
        if not mid:
            if any(rec.get(b) for b in benchmarks):
                scores.append({"model_id": None, "benchmark_id": benchmarks[0],
                               "score_raw": rec.get(benchmarks[0]), "row": f"line {n}"})
            continue
        if mid not in models:
            extra = {f: rec.get(h) for h, f in fields.items()}
            if "is_reasoning" in extra:
                extra["is_reasoning"] = (None if extra["is_reasoning"] is None
                                         else extra["is_reasoning"].lower() in {"true", "yes", "y", "1"})
            models[mid] = {"model_id": mid, "name": mid, "row": f"line {n}", **extra}
        for bench in benchmarks:
            value, note = parse_value(rec.get(bench))
            if value is None:
                blank += 1
                continue
            scores.append({"model_id": mid, "benchmark_id": bench, "score_raw": value,
                           "notes": note, "row": f"line {n}, column '{bench}'"})
    if blank:
        notes.append(f"{blank} blank or '-' cell(s) read as not reported")
    return AdapterOutput.from_rows(models=models.values(), scores=scores, notes=notes)


ADAPTER = Adapter(
    name="wide-csv",
    detect=detect,
    read=read,
    cites_source=True,
    needs_citation=True,
)

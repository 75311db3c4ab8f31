"""Artificial Analysis LLM leaderboard: `llms.json` (artificialanalysis.ai/leaderboards/models, as
scraped daily into github.com/oolong-tea-2026/artificial-analysis-leaderboards
`data/<day>/llms.json`): ``{meta, models[]}``.

- **Models.** AA's display name carries the setting in parentheses (``GLM-4.5V
  (Non-reasoning)``, ``GPT-5 (high)``, ``Claude Opus 4.6 (Adaptive Reasoning, Max Effort)``,
  ``Claude 3.5 Sonnet (Oct '24)``). `parse_name` reads each item the way the other sources'
  effort suffixes are read (`benchpress.adapters._effort`, `validate.model_identity`): an
  effort level (``high``, ``Max Effort``), reasoning on or off (``Reasoning``,
  ``Non-reasoning``; AA's ``Adaptive Reasoning`` is written ``auto thinking``, the spelling
  `model_identity` reads as thinking on) and a month-year version tag (``Oct '24`` ->
  ``10-2024``, which `model_identity` reads as the version date ``2024-10``). The model id is
  the name with its parentheses so rewritten (``gpt-5-high``, ``claude-opus-4.6-auto-thinking-
  max-effort``), so that the alias table meets it like any other source's id; `name` keeps
  AA's text. `provider` is the creator, `is_reasoning` AA's ``reasoning_model``,
  `open_weights` ``open_weights.is_open_weights``. The models table has no columns for size,
  context or price, so the model's `setting` JSON carries them beside the parsed setting
  (and AA's model and creator ids, ``upstream_id`` / ``upstream_provider_id``, which tie a
  renamed model to its history: `store.renames`):
  ``parameters_total_b`` / ``parameters_active_b`` (billions), ``context_window_tokens``,
  ``price_usd_per_1m_input`` / ``_output`` / ``_blended`` and ``index_cost_usd`` (AA's cost of
  running its Intelligence Index on the model).
- **Scores.** AA runs every evaluation itself, so each observation records the harness
  (``reported_setting``: ``{"harness": "Artificial Analysis", "evaluation": <AA field>}``) and
  is a ``leaderboard`` row. Evaluations AA runs under the name of a public benchmark map to
  that benchmark's id (`EVALUATIONS`: AA's ``gpqa`` is ``gpqa_diamond``, ``tau2_bench`` is
  ``tau2_bench_telecom``), so that `source_comparison` shows them beside the vendors'
  figures; AA's own evaluations are benchmarks of their own (``aa_omniscience``,
  ``aa_coding_index``, ...). Most fields are 0-1 fractions (``unit = "fraction"``); the
  ``*_index`` fields are 0-100 and ``aa_omniscience`` runs -100..100 (their own scales in
  `schemas/benchmarks.csv`). The GDPval-AA Elo comes from ``breakdowns.gdpval.elo``. A field
  `EVALUATIONS` does not describe goes to ``aa_<field>``, which no contract declares, so it
  is quarantined with that reason rather than put on a guessed scale.
- **Estimates.** A value whose ``<field>_is_estimated`` flag is true is kept with
  ``audit_status = "estimated"``: it stays in `scores`, and `store.resolve` does not let it
  make a cell.
- **Costs.** `benchmark_costs` gives, per benchmark, the median over AA's models of what one
  run of AA's evaluation costs at the model's list price: the input and output tokens of
  ``breakdowns.eval_token_counts`` times ``pricing.price_1m_*_tokens`` / 1e6, in US dollars
  (the Intelligence Index: ``pricing.intelligence_index_cost_total``). The ``cost`` column of
  `schemas/benchmarks.csv` holds these figures for the 2026-05-22 snapshot
  (`tests/test_adapters_aa.py` recomputes them from the file).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from benchpress.adapters._effort import EFFORT_LEVELS
from benchpress.adapters._json import load_json
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError

__all__ = ["ADAPTER", "read", "parse_name", "benchmark_costs", "EVALUATIONS", "HARNESS"]

HARNESS = "Artificial Analysis"
URL = "https://artificialanalysis.ai/leaderboards/models"
MODEL_URL = "https://artificialanalysis.ai/models/{slug}"

# AA evaluation field -> (benchmark id, unit): "fraction" for 0-1 values, None when the value
# is on the benchmark's own scale (the 0-100 indexes, the -100..100 Omniscience index)
EVALUATIONS: dict[str, tuple[str, str | None]] = {
    "artificial_analysis_intelligence_index": ("aa_intelligence_index", None),
    "artificial_analysis_coding_index": ("aa_coding_index", None),
    "artificial_analysis_agentic_index": ("aa_agentic_index", None),
    "gpqa": ("gpqa_diamond", "fraction"),
    "hle": ("hle", "fraction"),
    "scicode": ("scicode", "fraction"),
    "ifbench": ("ifbench", "fraction"),
    "mmmu_pro": ("mmmu_pro", "fraction"),
    "tau2_bench": ("tau2_bench_telecom", "fraction"),
    "terminal_bench_hard": ("terminal_bench_hard", "fraction"),
    "critpt": ("critpt", "fraction"),
    "aa_lcr": ("aa_lcr", "fraction"),
    "aa_omniscience": ("aa_omniscience", None),
    "aa_omniscience_accuracy": ("aa_omniscience_accuracy", "fraction"),
    "aa_omniscience_non_hallucination": ("aa_omniscience_non_hallucination", "fraction"),
    "apex_agents": ("apex_agents", "fraction"),
    "gdpval_aa_normalized": ("gdpval_aa_normalized", "fraction"),
}
# `breakdowns.eval_token_counts` key -> the benchmarks whose runs those tokens are
TOKEN_COUNTS: dict[str, tuple[str, ...]] = {
    "gpqa": ("gpqa_diamond",), "hle": ("hle",), "scicode": ("scicode",), "ifbench": ("ifbench",),
    "mmmuPro": ("mmmu_pro",), "tau2": ("tau2_bench_telecom",),
    "terminalbenchHard": ("terminal_bench_hard",), "critpt": ("critpt",), "lcr": ("aa_lcr",),
    "omniscience": ("aa_omniscience", "aa_omniscience_accuracy", "aa_omniscience_non_hallucination"),
    "gdpval": ("gdpval_aa_elo", "gdpval_aa_normalized"),
}
_MONTHS = {m: k for k, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_MONTH_YEAR = re.compile(r"^([a-z]{3})[a-z]*\.?\s*'?\s*'?\s*(\d{2}|\d{4})$")
_LEVEL = re.compile(r"^(" + "|".join(EFFORT_LEVELS) + r")(?:\s+effort)?$")


def detect(path: Path, content: bytes) -> bool:
    head = content[:4000]
    return (content.lstrip().startswith(b"{") and b'"evaluations"' in content
            and (b"artificialanalysis.ai" in head or b"artificial_analysis_intelligence_index" in content))


def _item(text: str) -> tuple[str, dict]:
    """One comma-separated item of a parenthesised setting: (its spelling in the id, what it sets)."""
    low = text.strip().lower()
    if re.fullmatch(r"non-?\s?reasoning", low):
        return "non-reasoning", {"reasoning": False}
    if low == "reasoning":
        return "reasoning", {"reasoning": True}
    if low == "adaptive reasoning":
        return "auto thinking", {"reasoning": "adaptive"}
    if m := _LEVEL.match(low):
        return low, {"effort": m.group(1)}
    if (m := _MONTH_YEAR.match(low)) and m.group(1) in _MONTHS:
        year = m.group(2) if len(m.group(2)) == 4 else "20" + m.group(2)
        month = _MONTHS[m.group(1)]
        return f"{month:02d}-{year}", {"version": f"{year}-{month:02d}"}
    return text.strip(), {}


def parse_name(name: str) -> tuple[str, dict]:
    """(model id text, parsed setting) of an AA display name (see the module docstring).

    >>> parse_name("GLM-4.5V (Non-reasoning)")
    ('GLM-4.5V (non-reasoning)', {'reasoning': False})
    >>> parse_name("Claude Opus 4.6 (Adaptive Reasoning, Max Effort)")
    ('Claude Opus 4.6 (auto thinking, max effort)', {'reasoning': 'adaptive', 'effort': 'max'})
    >>> parse_name("Gemini 2.5 Pro Preview (May' 25)")
    ('Gemini 2.5 Pro Preview (05-2025)', {'version': '2025-05'})
    """
    setting: dict = {}

    def rewrite(m: re.Match) -> str:
        parts = []
        for item in m.group(1).split(","):
            spelled, sets = _item(item)
            parts.append(spelled)
            setting.update(sets)
        return "(" + ", ".join(parts) + ")"

    return re.sub(r"\(([^()]*)\)", rewrite, name.strip()), setting


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _model_row(k: int, m: dict, model_id: str, setting: dict) -> dict:
    caps = m.get("capabilities") or {}
    price = m.get("pricing") or {}
    ow = m.get("open_weights") if isinstance(m.get("open_weights"), dict) else {}
    creator = m.get("creator") if isinstance(m.get("creator"), dict) else {}
    meta = {
        **setting, "aa_slug": m.get("slug"),
        # AA's own ids: they tie a renamed model (or maker) to its history (`store.renames`)
        "upstream_id": m.get("id") if isinstance(m.get("id"), str) else None,
        "upstream_provider_id": creator.get("id") if isinstance(creator.get("id"), str) else None,
        "parameters_total_b": caps.get("total_parameters"),
        "parameters_active_b": caps.get("active_parameters"),
        "context_window_tokens": caps.get("context_window_tokens"),
        "price_usd_per_1m_input": price.get("price_1m_input_tokens"),
        "price_usd_per_1m_output": price.get("price_1m_output_tokens"),
        "price_usd_per_1m_blended": price.get("price_1m_blended_3_to_1"),
        "index_cost_usd": price.get("intelligence_index_cost_total"),
    }
    return {
        "model_id": model_id, "name": m.get("name"), "provider": creator.get("name"),
        "release_date": m.get("release_date"),
        "is_reasoning": m.get("reasoning_model") if isinstance(m.get("reasoning_model"), bool) else None,
        "open_weights": ow.get("is_open_weights") if isinstance(ow.get("is_open_weights"), bool) else None,
        "setting": json.dumps({a: b for a, b in meta.items() if b is not None}, sort_keys=True),
        "row": f"models[{k}]",
    }


def _score_rows(k: int, m: dict, model_id: str | None, observed: str | None) -> list[dict]:
    evals = m.get("evaluations") if isinstance(m.get("evaluations"), dict) else {}
    gdpval = ((m.get("breakdowns") or {}).get("gdpval") or {}) if isinstance(m.get("breakdowns"), dict) else {}
    values = [(key, v) for key, v in evals.items() if not key.endswith("_is_estimated")]
    if isinstance(gdpval, dict) and gdpval.get("elo") is not None:
        values.append(("breakdowns.gdpval.elo", gdpval["elo"]))
    url = MODEL_URL.format(slug=m["slug"]) if m.get("slug") else URL
    rows = []
    for key, value in values:
        if value is None:
            continue
        bench, unit = (("gdpval_aa_elo", None) if key == "breakdowns.gdpval.elo"
                       else EVALUATIONS.get(key, (f"aa_{key}", None)))
        estimated = evals.get(f"{key}_is_estimated") is True
        notes = (f"estimated by Artificial Analysis ({key}_is_estimated)" if estimated else None)
        if key != "breakdowns.gdpval.elo" and key not in EVALUATIONS:
            notes = (f"Artificial Analysis field '{key}' is not described in "
                     "artificial_analysis.EVALUATIONS, so its scale is unknown")
        rows.append({
            "model_id": model_id, "benchmark_id": bench,
            "score_raw": repr(value) if isinstance(value, float) else str(value),
            "unit": unit, "reference_url": url, "source_type": "leaderboard",
            "reported_setting": json.dumps({"harness": HARNESS, "evaluation": key}, sort_keys=True),
            "audit_status": "estimated" if estimated else None,
            "observed_at": observed, "derived": False, "notes": notes,
            "row": f"models[{k}] evaluations.{key}" if not key.startswith("breakdowns")
            else f"models[{k}] {key}",
        })
    return rows


def _models(path: Path) -> tuple[list, dict]:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), list):
        raise BadInputError(f"{path}: expected an Artificial Analysis llms.json object with 'models'")
    return doc["models"], doc.get("meta") if isinstance(doc.get("meta"), dict) else {}


def read(path: Path) -> AdapterOutput:
    entries, meta = _models(path)
    fetched = str(meta.get("fetched_at") or "")[:10] or None
    models, scores, seen = [], [], set()
    for k, m in enumerate(entries):
        if not isinstance(m, dict):
            continue
        name = str(m.get("name") or "").strip()
        text, setting = parse_name(name) if name else (None, {})
        if name and isinstance(m.get("reasoning_model"), bool) and "reasoning" not in setting:
            setting["reasoning"] = m["reasoning_model"]
        if text and text not in seen:
            seen.add(text)
            models.append(_model_row(k, m, text, setting))
        scores += _score_rows(k, m, text, fetched)
    return AdapterOutput.from_rows(models, [], scores)


def benchmark_costs(path: Path) -> dict[str, float]:
    """Median US dollars of one run of each benchmark over AA's models (module docstring)."""
    entries, _ = _models(path)
    per: dict[str, list[float]] = {}
    for m in entries:
        price = (m.get("pricing") or {}) if isinstance(m, dict) else {}
        p_in, p_out = _number(price.get("price_1m_input_tokens")), _number(price.get("price_1m_output_tokens"))
        if not p_in or not p_out:
            continue  # free or unpriced models say nothing about a run's cost
        total = _number(price.get("intelligence_index_cost_total"))
        if total:
            per.setdefault("aa_intelligence_index", []).append(total)
        counts = ((m.get("breakdowns") or {}).get("eval_token_counts") or {})
        for key, benches in TOKEN_COUNTS.items():
            c = counts.get(key) or {}
            usd = (c.get("inputTokens", 0) * p_in + c.get("outputTokens", 0) * p_out) / 1e6
            if usd > 0:
                for b in benches:
                    per.setdefault(b, []).append(usd)
    return {b: float(np.median(v)) for b, v in sorted(per.items())}


ADAPTER = Adapter(
    name="artificial-analysis",
    detect=detect,
    read=read,
)

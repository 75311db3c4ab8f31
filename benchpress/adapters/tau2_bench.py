"""tau-bench / tau2-bench leaderboard (github.com/sierra-research/tau2-bench,
``web/leaderboard/public/submissions/``): a folder of submissions, each
``<model>_<org>_<date>/submission.json``, and ``manifest.json`` naming the ones taubench.com
shows (under ``submissions``, later also ``legacy_submissions`` and ``voice_submissions``).
`read` takes the version folder (holding ``submissions/``), the submissions folder itself, or
one ``submission.json``.

- **Entries are submissions.** A row is one evaluation run, not a model: the same model is
  submitted several times (its vendor's 2025 figures with a gpt-4.1 user simulator, Sierra's
  2026 re-runs with gpt-5.2, one run per reasoning effort, custom scaffolds). Each listed
  submission is an entry of kind ``submission`` whose id is its folder name
  (``gpt-5-2_sierra_2026-02-26``), named as upstream (``model_name``), linked to the model it
  runs (``base_model_id``: the ``model_name``; none for a ``custom`` submission, whose model
  is a system of the submitter's). Its setting holds the user simulator, reasoning effort,
  modality, tau2-bench version, submitter and the manifest list it is shown in. Folders the
  manifest does not list (templates, withdrawn runs) are left out and counted in a note.
- **Benchmarks.** ``results.<domain>.pass_1`` is ``tau2_bench_<domain>`` (pass^1, the figure
  vendors quote), ``pass_k`` is ``tau2_bench_<domain>_pass<k>``, ``cost`` (US dollars per
  task, lower is better) ``tau2_bench_<domain>_cost``. A submission of the original tau-bench
  (``tau2_bench_version: "original tau-bench"``) is ``tau_bench_<domain>``; a voice
  submission (``modality: voice``) is ``tau2_bench_voice_<domain>``.
- **User simulators are benchmark versions.** A value is comparable only with values measured
  against the same simulated user. The simulator the leaderboard started with (gpt-4.1, also
  when a 0.1.x run leaves it unstated) keeps the base id; any other is the benchmark version
  ``<id>@user-<simulator>`` (``tau2_bench_airline@user-gpt-5.2``; `store.methods`), so `diff`
  names a re-run under a new simulator a change of method, never a revision, and no column
  pools two simulators. A re-run under another simulator is a new submission (its own entry),
  so the old one's values are never revised by it. Voice runs have their own default
  (``v1.0``).
- **Who measured.** A run Sierra submitted is the leaderboard's own (``leaderboard``); one a
  vendor or lab submitted, which the leaderboard relays, is ``third_party_aggregator``. The
  verification details go into ``reported_setting``.
- **Citation.** Each value cites its ``submission.json`` by its path in the folder, which
  the build resolves against the version's URL (the upstream folder at its commit,
  `store.upstream`) into the file's URL (`validate.prepare.cited_url`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from benchpress.adapters._files import decode_text, head_bytes
from benchpress.adapters.base import Adapter, AdapterOutput
from benchpress.errors import BadInputError
from benchpress.input_limits import input_limits

__all__ = ["ADAPTER", "read", "simulator_label", "benchmark_base", "DEFAULT_SIMULATOR"]

MANIFEST, SUBMISSION = "manifest.json", "submission.json"
# the user simulators each modality's base benchmark id stands for: gpt-4.1 for text; the
# voice board's "v1.0" (its submissions said gpt-4.1-2025-04-14 on 2026-03-18, with the same
# values, and v1.0 from the next day)
DEFAULT_SIMULATOR = {"text": ("gpt-4.1",), "voice": ("v1.0", "gpt-4.1")}
LEADERBOARD_ORG = "sierra"
_METRICS = {"pass_1": "", "pass_2": "_pass2", "pass_3": "_pass3", "pass_4": "_pass4",
            "cost": "_cost"}


def simulator_label(simulator: str | None, modality: str = "text") -> str | None:
    """The benchmark-version label of a user simulator; None for the modality's default (or
    an unstated one).

    >>> simulator_label("gpt-4.1-2025-04-14"), simulator_label("gpt-5.2")
    (None, 'user-gpt-5.2')
    >>> simulator_label("claude-sonnet-4-5-20250929")
    'user-claude-sonnet-4-5'
    """
    if not simulator or not str(simulator).strip():
        return None
    text = str(simulator).strip().lower()
    text = re.sub(r"-(20\d\d-?\d\d-?\d\d)$", "", text)
    text = re.sub(r"[^a-z0-9.]+", "-", text).strip("-.")
    if text in DEFAULT_SIMULATOR.get(modality, DEFAULT_SIMULATOR["text"]):
        return None
    return f"user-{text}" if text else None


def benchmark_base(domain: str, version: str | None, modality: str | None) -> str:
    """The base benchmark id of a domain's pass^1 under a submission's tau2-bench version and
    modality.

    >>> benchmark_base("airline", "0.2.1-dev", None), benchmark_base("retail", "original tau-bench", None)
    ('tau2_bench_airline', 'tau_bench_retail')
    """
    slug = re.sub(r"[^a-z0-9]+", "_", domain.lower()).strip("_")
    if modality == "voice":
        return f"tau2_bench_voice_{slug}"
    if version and "original" in str(version).lower():
        return f"tau_bench_{slug}"
    return f"tau2_bench_{slug}"


def _folder(path: Path) -> tuple[Path, str] | None:
    """(the folder holding manifest.json, its path inside `path`)."""
    for base, prefix in ((path / "submissions", "submissions/"), (path, "")):
        if (base / MANIFEST).is_file() and not (base / MANIFEST).is_symlink():
            return base, prefix
    return None


def _load(file: Path, name: str):
    size, most = file.stat().st_size, input_limits().max_member_bytes
    if size > most:
        raise BadInputError(f"{name}: {size:,} bytes, more than the {most:,}-byte cap")
    try:
        return json.loads(decode_text(file.read_bytes(), name))
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{name}: malformed JSON at line {exc.lineno}, column "
                            f"{exc.colno}: {exc.msg}") from exc


def detect(path: Path, content: bytes) -> bool:
    if path.is_dir():
        found = _folder(path)
        if found is None:
            return False
        return b'"submissions"' in head_bytes(found[0] / MANIFEST, 20000)
    head = content[:20000]
    return (content.lstrip().startswith(b"{") and b'"model_name"' in head
            and b'"results"' in content and (b'"methodology"' in content
                                             or b'"submitting_organization"' in head))


def _listed(manifest) -> dict[str, str]:
    """submission id -> the manifest list it is shown in (the first list naming it)."""
    if not isinstance(manifest, dict):
        raise BadInputError(f"{MANIFEST}: expected an object of submission lists")
    out: dict[str, str] = {}
    for key, ids in manifest.items():
        if isinstance(ids, list):
            for sid in ids:
                if isinstance(sid, str):
                    out.setdefault(sid, key)
    if not out:
        raise BadInputError(f"{MANIFEST}: lists no submissions")
    return out


def _text(value) -> str | None:
    return None if value is None or (isinstance(value, str) and not value.strip()) else str(value)


def _number(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None if value is None else str(value)  # text is kept for validation to refuse
    return repr(value) if isinstance(value, float) else str(value)


def _entry(sid: str, doc: dict, listed_in: str | None, where: str, cite: str | None):
    """(model row, score rows) of one submission."""
    method = doc.get("methodology") if isinstance(doc.get("methodology"), dict) else {}
    verification = method.get("verification") if isinstance(method.get("verification"), dict) else {}
    release = doc.get("model_release") if isinstance(doc.get("model_release"), dict) else {}
    modality = _text(doc.get("modality")) or "text"
    simulator = _text(method.get("user_simulator"))
    version = _text(method.get("tau2_bench_version"))
    effort = _text(doc.get("reasoning_effort"))
    custom = str(doc.get("submission_type") or "").lower() == "custom"
    submitter = _text(doc.get("submitting_organization"))
    setting = {
        "user_simulator": simulator, "reasoning_effort": effort, "modality": modality,
        "tau2_bench_version": version, "submission_type": _text(doc.get("submission_type")),
        "submitting_organization": submitter, "submission_date": _text(doc.get("submission_date")),
        "manifest_list": listed_in,
    }
    if effort and effort.lower() not in ("none", "enabled"):
        setting["effort"] = effort.lower()
    reasoning = (False if effort and effort.lower() == "none"
                 else True if effort else None)
    model = {
        "model_id": sid, "name": _text(doc.get("model_name")) or sid,
        "provider": _text(doc.get("model_organization")),
        "release_date": _text(release.get("release_date")), "is_reasoning": reasoning,
        "setting": json.dumps({k: v for k, v in setting.items() if v is not None},
                              sort_keys=True),
        "entry_kind": "submission",
        "base_model_id": None if custom else _text(doc.get("model_name")),
        "row": where,
    }
    label = simulator_label(simulator, modality)
    by_leaderboard = (submitter or "").strip().lower() == LEADERBOARD_ORG
    reported = {"user_simulator": simulator, "tau2_bench_version": version, "modality": modality,
                "submitted_by": submitter, "reasoning_effort": effort,
                "verified": _text(verification.get("details")),
                "modified_prompts": verification.get("modified_prompts"),
                "omitted_questions": verification.get("omitted_questions")}
    scores = []
    results = doc.get("results") if isinstance(doc.get("results"), dict) else {}
    for domain, values in results.items():
        if not isinstance(values, dict):
            continue  # a domain the run left out (null)
        base = benchmark_base(str(domain), version, modality)
        for metric, suffix in _METRICS.items():
            raw = _number(values.get(metric))
            if raw is None:
                continue
            bench = base + suffix + (f"@{label}" if label else "")
            shown = {**reported, "retrieval_config": _text(values.get("retrieval_config"))}
            scores.append({
                "model_id": sid, "benchmark_id": bench, "score_raw": raw,
                "reference_url": cite, "source_type": "leaderboard" if by_leaderboard
                else "third_party_aggregator",
                "reported_setting": json.dumps({k: v for k, v in shown.items() if v is not None},
                                               sort_keys=True),
                "observed_at": _text(method.get("evaluation_date")) or _text(doc.get("submission_date")),
                "derived": False, "row": f"{where} results.{domain}.{metric}",
            })
    return model, scores


def _benchmarks(scores: list[dict]) -> list[dict]:
    rows, seen = [], set()
    for s in scores:
        bench = s["benchmark_id"].split("@", 1)[0]
        if bench in seen:
            continue
        seen.add(bench)
        # a cost is lower-is-better: only the contract (schemas/benchmarks.csv) may declare it,
        # so no metric here (an unlisted one is quarantined, not put on a guessed direction)
        cost = bench.endswith("_cost")
        rows.append({"benchmark_id": bench, "name": bench.replace("_", " "), "category": "Agentic",
                     "metric": None if cost else "% of tasks solved (pass^k)", "row": s["row"]})
    return rows


def read(path: Path) -> AdapterOutput:
    if not path.is_dir():
        doc = _load(path, path.name)
        if not isinstance(doc, dict):
            raise BadInputError(f"{path}: expected a tau2-bench submission.json object")
        sid = path.parent.name if path.name == SUBMISSION else path.stem
        model, scores = _entry(sid, doc, None, path.name, None)
        return AdapterOutput.from_rows([model], _benchmarks(scores), scores)
    found = _folder(path)
    if found is None:
        raise BadInputError(f"{path}: expected a tau2-bench submissions folder ({MANIFEST} and "
                            f"one <id>/{SUBMISSION} per submission)")
    base, prefix = found
    listed = _listed(_load(base / MANIFEST, prefix + MANIFEST))
    models, scores, missing = [], [], []
    for sid, listed_in in listed.items():
        file = base / sid / SUBMISSION
        name = f"{prefix}{sid}/{SUBMISSION}"
        if "/" in sid or sid in (".", "..") or not file.is_file() or file.is_symlink():
            missing.append(sid)
            continue
        doc = _load(file, name)
        if not isinstance(doc, dict):
            raise BadInputError(f"{name}: expected a submission object")
        model, rows = _entry(sid, doc, listed_in, name, name)
        models.append(model)
        scores += rows
    unlisted = sorted(p.name for p in base.iterdir()
                      if p.is_dir() and (p / SUBMISSION).is_file() and p.name not in listed)
    notes = []
    if unlisted:
        notes.append(f"{len(unlisted)} submission folder(s) the manifest does not list left out "
                     f"({', '.join(unlisted[:3])}{' ...' if len(unlisted) > 3 else ''})")
    if missing:
        notes.append(f"{len(missing)} submission(s) the manifest lists have no {SUBMISSION} "
                     f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})")
    return AdapterOutput.from_rows(models, _benchmarks(scores), scores, notes)


ADAPTER = Adapter(name="tau2-bench", detect=detect, read=read, cites_source=True)

"""Through-time build at the size of the default registry to come: many sources, hundreds of
dated versions, hundreds of thousands of observations, three years of months.

Usage::

    .venv/bin/python benchmarks/through_time_scale.py [--sources 18] [--versions 470]
        [--observations 400000] [--start 2023-07] [--end 2026-07] [--seed 0]
        [--workdir DIR] [--timeout 1800]

It writes a synthetic workspace (`benchpress init`): `--sources` sources in the BenchPress
JSON format, `--versions` dated versions among them (each source starts on its own day and
publishes versions up to `--end`; a version lists more models than the one before and
revises about 2% of its values), about `--observations` observations across all versions,
models shared between sources; the files sit in a mirror folder and every version is pinned
in its source's config (`versions:`), as the shipped sources are. Then it runs, each as its
own process (wall seconds and peak memory from `os.wait4`, as benchmarks/scale_ladder.py):

1. ``pull`` then ``build`` (every version prepared, nothing cached yet: the cold build);
2. ``snapshot create --monthly`` (a snapshot per month, from the prepared versions);
3. the same again (nothing changed: every month reused by its inputs' digest);
4. one more version of one source, dated in the newest month: ``pull``, ``build`` and
   ``snapshot create --monthly`` (only that version prepared, only the newest month made).

and prints each step with its time and memory, and as ratios to the cold build. Beside them,
what rebuilding every month from scratch would cost (as a replay without its memo does:
every version up to the month prepared again, each month): the cold build's preparation
time scaled by the sum over months of the versions known then, over the number of versions
(an estimate from the measured cold build, not a run).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_ladder import BIN, run_step  # noqa: E402

__all__ = ["make_workspace", "main"]


def _days(start: str, end: str) -> list[date]:
    first, last = date.fromisoformat(start + "-01"), date.fromisoformat(end + "-28")
    return [first + timedelta(days=k) for k in range((last - first).days + 1)]


def _write_version(path: Path, models: list[int], bench: list[str], values: dict, url: str) -> None:
    doc = {"models": [{"id": f"m{i:05d}", "name": f"Model {i}"} for i in models],
           "benchmarks": [{"id": b, "name": b, "metric": "accuracy"} for b in bench],
           "scores": [{"model_id": f"m{i:05d}", "benchmark_id": bench[j], "score": float(v),
                       "reference_url": url} for (i, j), v in values.items()]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_workspace(root: Path, n_sources: int, n_versions: int, n_obs: int, start: str,
                   end: str, seed: int) -> dict:
    """Write the synthetic home (`root/home`) and mirror (`root/mirror`); returns counts."""
    import subprocess

    rng = np.random.default_rng(seed)
    home, mirror = root / "home", root / "mirror"
    subprocess.run([str(BIN), "init", str(home), "--no-git"], check=True, capture_output=True)
    days = _days(start, end)
    # versions per source (at least 2 each) and benchmarks per source
    share = rng.dirichlet(np.ones(n_sources) * 2.0)
    per_source = np.maximum(2, np.round(share * n_versions).astype(int))
    per_source[-1] += n_versions - per_source.sum()
    benches = rng.integers(4, 25, n_sources)
    # final models per source so that the observations across versions come to n_obs:
    # version k of V lists (k+1)/V of the models, so a source's versions hold about
    # (V+1)/2 times its final count; fill 0.6
    weight = benches * (per_source + 1) / 2 * 0.6
    finals = np.maximum(5, np.round(n_obs * share / weight).astype(int))
    pool = int(max(finals.max() * 1.3, 200))
    total = 0
    for s in range(n_sources):
        sid = f"syn-{s:02d}"
        first = int(rng.integers(0, len(days) // 2))
        picked = sorted(rng.choice(np.arange(first, len(days)), size=per_source[s],
                                   replace=False).tolist())
        bench = [f"{sid}_b{j:02d}" for j in range(benches[s])]
        models = rng.choice(pool, size=finals[s], replace=False).tolist()
        truth = rng.uniform(5, 95, (finals[s], benches[s]))
        observed = rng.random((finals[s], benches[s])) < 0.6
        values = {}
        entries = []
        for k, day in enumerate(picked):
            listed = int(np.ceil(finals[s] * (k + 1) / len(picked)))
            for i in range(listed):
                for j in np.nonzero(observed[i])[0].tolist():
                    if (i, j) not in values or rng.random() < 0.02:  # new or revised
                        values[(i, j)] = round(float(truth[i, j] + rng.normal(0, 1)), 2)
            label = days[day].isoformat()
            rel = f"{sid}/{label}.json"
            url = f"https://example.org/{rel}"
            cells = {(models[i], j): v for (i, j), v in values.items() if i < listed}
            _write_version(mirror / rel, [models[i] for i in range(listed)], bench, cells, url)
            total += len(cells)
            entries.append({"version": label, "published": label, "url": url,
                            "mirror_path": rel, "sha256": _sha256(mirror / rel)})
        _write_config(home, sid, entries, 10 + s)
    return {"home": home, "mirror": mirror, "observations": total,
            "versions": int(per_source.sum()), "sources": n_sources}


def _write_config(home: Path, sid: str, entries: list[dict], order: int) -> None:
    import yaml

    newest = entries[-1]
    doc = {"id": sid, "adapter": "benchpress-json", "licence": "synthetic", "order": order,
           **newest, "versions": entries[:-1] or None}
    (home / "sources" / f"{sid}.yaml").write_text(yaml.safe_dump(
        {k: v for k, v in doc.items() if v is not None}, sort_keys=False))


def _add_version(made: dict, end: str) -> str:
    """One more version of the first source, dated on the last day of the newest month,
    listing its newest version's rows and one new model; returns its label."""
    import yaml

    home, mirror = made["home"], made["mirror"]
    path = home / "sources" / "syn-00.yaml"
    doc = yaml.safe_load(path.read_text())
    old = json.loads((mirror / doc["mirror_path"]).read_text())
    label = (date.fromisoformat(end + "-01") + timedelta(days=27)).isoformat()
    if label <= doc["version"]:
        label = doc["version"] + "T2359"
    rel = f"syn-00/{label}.json"
    new_model = {"id": "m99999", "name": "Model 99999"}
    old["models"].append(new_model)
    old["scores"] += [{"model_id": "m99999", "benchmark_id": b["id"], "score": 50.0,
                       "reference_url": f"https://example.org/{rel}"} for b in old["benchmarks"]]
    (mirror / rel).write_text(json.dumps(old))
    entry = {k: doc[k] for k in ("version", "published", "url", "mirror_path", "sha256")}
    doc["versions"] = [*(doc.get("versions") or []), entry]
    doc.update(version=label, published=label[:10], url=f"https://example.org/{rel}",
               mirror_path=rel, sha256=_sha256(mirror / rel))
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return label


def _months(start: str, end: str) -> int:
    return (int(end[:4]) - int(start[:4])) * 12 + int(end[5:7]) - int(start[5:7]) + 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=int, default=18)
    ap.add_argument("--versions", type=int, default=470)
    ap.add_argument("--observations", type=int, default=400_000)
    ap.add_argument("--start", default="2023-07")
    ap.add_argument("--end", default="2026-07")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(dir=args.workdir, prefix="through-time-"))
    made = make_workspace(root, args.sources, args.versions, args.observations, args.start,
                          args.end, args.seed)
    h = ["--home", str(made["home"])]
    m = ["--mirror", str(made["mirror"])]
    log = root / "log.txt"
    print(f"{made['sources']} sources, {made['versions']} versions, {made['observations']:,} "
          f"observations across versions, {_months(args.start, args.end)} months; in {root}",
          file=sys.stderr)
    steps = [("pull", [str(BIN), "pull", *m, *h]),
             ("build (cold)", [str(BIN), "build", *m, *h]),
             ("snapshot --monthly", [str(BIN), "snapshot", "create", "--monthly", *m, *h]),
             ("snapshot --monthly again", [str(BIN), "snapshot", "create", "--monthly", *m, *h])]
    rows = []
    for name, cmd in steps:
        rows.append((name, run_step(cmd, args.timeout, log)))
        print(f"{name:32s} {rows[-1][1]['seconds']:8.1f} s {rows[-1][1]['peak_mb']:8.0f} MB "
              f"{rows[-1][1]['status']}", file=sys.stderr, flush=True)
    label = _add_version(made, args.end)
    for name, cmd in [("+1 version: pull", [str(BIN), "pull", *m, *h]),
                      ("+1 version: build", [str(BIN), "build", *m, *h]),
                      ("+1 version: snapshot --monthly",
                       [str(BIN), "snapshot", "create", "--monthly", *m, *h])]:
        rows.append((name, run_step(cmd, args.timeout, log)))
        print(f"{name:32s} {rows[-1][1]['seconds']:8.1f} s {rows[-1][1]['peak_mb']:8.0f} MB "
              f"{rows[-1][1]['status']}", file=sys.stderr, flush=True)
    cold = rows[1][1]["seconds"]
    # the naive alternative: each month rebuilds from every version known by then
    known = _known_per_month(made["home"])
    naive = cold * sum(known) / max(known[-1], 1)
    print(f"\n{'step':34s} {'seconds':>8s} {'peak MB':>8s} {'/ cold build':>13s}")
    for name, got in rows:
        print(f"{name:34s} {got['seconds']:8.1f} {got['peak_mb']:8.0f} "
              f"{got['seconds'] / cold:13.2f}  {got['status']}")
    print(f"{'every month rebuilt (estimate)':34s} {naive:8.1f} {'':8s} {naive / cold:13.2f}")
    monthly = rows[2][1]["seconds"]
    print(f"\nsnapshot --monthly / rebuilding every month: {monthly / naive:.2f}; "
          f"version {label} added: build + snapshot {rows[5][1]['seconds'] + rows[6][1]['seconds']:.1f} s "
          f"({(rows[5][1]['seconds'] + rows[6][1]['seconds']) / (cold + monthly):.2f} of the first run)")
    return 0 if all(got["status"] == "ok" for _, got in rows) else 1


def _known_per_month(home: Path) -> list[int]:
    """Versions known at the end of each month of the workspace's history."""
    from benchpress.store.history import plan_months
    from benchpress.store.sources import config_versions, load_configs

    return [sum(len(config_versions(c)) for c in month.configs)
            for month in plan_months(load_configs(home / "sources"))]


if __name__ == "__main__":
    sys.exit(main())

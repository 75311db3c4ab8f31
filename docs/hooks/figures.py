"""MkDocs hook: the figures and pipeline tables of the docs, rendered at build time from the
files the pipeline writes, so that no number in the docs is typed by hand.

Two kinds of block in a page are replaced:

- a fenced block of language ``figure`` holds a small YAML spec naming a metrics file the
  pipeline writes (``metrics/*.json``, ``plots/*.json``) and which table to draw from it; it
  becomes that table, followed by the DVC stage (and its command) that makes the file;
- an HTML comment ``<!-- dvc-stages -->`` becomes the table of the pipeline's stages, read
  from ``dvc.yaml`` with ``params.yaml``'s values filled into each command.

A spec that names a missing file or field is a warning, which ``mkdocs build --strict``
turns into a failed build. On GitHub the spec shows as it is (the file and the fields).

Spec keys: ``file`` (from the repository root), ``table`` (one of the renderers below),
``title`` (optional), and per table:

- ``fields``: ``fields`` (a mapping label -> key, a dotted key for nested ones) and
  ``percent`` (keys whose 0-1 values are shown as percentages);
- ``by_k``: flat keys ``<method>_k<k>_<stat>``; a row per method (in ``methods`` order if
  given), a column per k; ``stat`` (default ``medae``); a column of the 90% coverage per k
  where the method has ``coverage90``;
- ``ratios``: the default's error over each baseline's with its 90% interval, from flat keys
  ``vs_<baseline>_k<k>_{ratio,lo,hi}`` or from a ``vs_baselines`` list of records;
- ``records``: the list of records under ``key`` (``.`` for a top-level list), ``columns``
  (a mapping label -> field), optional ``where`` (field -> value) and ``percent``.
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import yaml

log = logging.getLogger("mkdocs.hooks.figures")

ROOT = Path(__file__).resolve().parents[2]
FIGURE = re.compile(r"^```figure[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
STAGES = "<!-- dvc-stages -->"
BY_K = re.compile(r"^(?P<method>.+)_k(?P<k>\d+)_(?P<stat>[a-z0-9]+(?:_[a-z0-9]+)*)$")
VS_FLAT = re.compile(r"^vs_(?P<baseline>.+)_k(?P<k>\d+)_(?P<part>ratio|lo|hi)$")
STATS = ("medae", "coverage90", "bias", "n_cells", "medape", "within3", "within5")


class FigureError(ValueError):
    """A figure spec that names a missing file, field or table."""


def pipeline() -> tuple[dict, dict]:
    """dvc.yaml's stages and the values their commands read (params.yaml and dvc.yaml vars)."""
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    return dvc["stages"], params


def fill(cmd: str, params: dict) -> str:
    """A stage's command with `${a.b}` filled from params.yaml; a mapping is spelled as
    `--key value` flags (as DVC does); a name params.yaml lacks (a dvc.yaml var) stays."""

    def value(match: re.Match) -> str:
        node = params
        for part in match.group(1).split("."):
            if not isinstance(node, dict) or part not in node:
                return match.group(0)
            node = node[part]
        if isinstance(node, dict):
            return " ".join(f"--{k} {v}" for k, v in node.items())
        return str(node)

    return re.sub(r"(?<!\\)\$\{([\w.-]+)\}", value, cmd).replace("\\${", "${")


def stage_command(stage: dict, params: dict) -> str:
    cmds = stage["cmd"] if isinstance(stage["cmd"], list) else [stage["cmd"]]
    return " && ".join(" ".join(fill(c, params).split()) for c in cmds)


def stage_outputs(stage: dict) -> list[str]:
    """The paths a stage writes (outs, metrics, plots), without their options."""
    paths = []
    for key in ("outs", "metrics", "plots"):
        for item in stage.get(key, []):
            paths.append(next(iter(item)) if isinstance(item, dict) else item)
    return paths


def producer(path: str, stages: dict) -> str:
    """The stage that writes `path`."""
    for name, stage in stages.items():
        if path in stage_outputs(stage):
            return name
    raise FigureError(f"no stage of dvc.yaml writes {path}")


def made_by_stage(path: str, stages: dict) -> str | None:
    try:
        return producer(path, stages)
    except FigureError:
        return None


def stages_table() -> str:
    """The stages as an HTML table (a command may hold `|`, which a markdown table cannot
    carry inside code), after one line giving their order."""
    stages, params = pipeline()
    rows = []
    for name, stage in stages.items():
        writes = ", ".join(f"<code>{html.escape(p)}</code>" for p in stage_outputs(stage))
        rows.append(f"<tr><td><code>{name}</code></td>"
                    f"<td><code>{html.escape(stage_command(stage, params))}</code></td>"
                    f"<td>{writes}</td></tr>")
    order = " -> ".join(stages)
    return "\n".join([f"Stages in `dvc.yaml`'s order: {order}.", "",
                      "<table><thead><tr><th>stage</th><th>command</th><th>writes</th></tr>"
                      "</thead><tbody>", *rows, "</tbody></table>"])


def number(value, digits: int = 2, percent: bool = False) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if percent:
        return f"{100 * value:.1f}%"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def lookup(doc, key: str, file: str):
    node = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise FigureError(f"{file} has no field {key!r}")
        node = node[part]
    return node


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows)]


def render_fields(doc, spec: dict, file: str) -> list[str]:
    percent = set(spec.get("percent", []))
    rows = [[label, number(lookup(doc, key, file), spec.get("digits", 2), key in percent)]
            for label, key in spec["fields"].items()]
    return table(["figure", "value"], rows)


def render_by_k(doc, spec: dict, file: str) -> list[str]:
    stat = spec.get("stat", "medae")
    found: dict[str, dict[int, dict[str, float]]] = {}
    for key, value in doc.items():
        m = BY_K.match(key)
        if m and m["stat"] in STATS and not key.startswith("vs_"):
            found.setdefault(m["method"], {}).setdefault(int(m["k"]), {})[m["stat"]] = value
    if not found:
        raise FigureError(f"{file} has no <method>_k<k>_{stat} fields")
    methods = spec.get("methods") or sorted(found)
    ks = sorted({k for m in methods for k in lookup(found, m, file)})
    covered = [m for m in methods if any("coverage90" in found[m][k] for k in found[m])]
    header = ["method", *(f"k={k}" for k in ks)]
    if covered:
        header.append("90% coverage, k=" + " / ".join(map(str, ks)))
    rows = []
    for m in methods:
        row = [f"`{m}`", *(number(found[m].get(k, {}).get(stat)) for k in ks)]
        if covered:
            row.append(" / ".join(f"{found[m][k]['coverage90']:.1f}%" for k in ks
                                  if "coverage90" in found[m].get(k, {})) or "")
        rows.append(row)
    return table(header, rows)


def render_ratios(doc, spec: dict, file: str) -> list[str]:
    cells: dict[tuple, dict] = {}
    if isinstance(doc.get("vs_baselines"), list):
        for r in doc["vs_baselines"]:
            if all(r.get(k) == v for k, v in spec.get("where", {}).items()):
                cells[(r["baseline"], r["k"])] = r
    else:
        for key, value in doc.items():
            m = VS_FLAT.match(key)
            if m:
                cells.setdefault((m["baseline"], int(m["k"])), {})[m["part"]] = value
    if not cells:
        raise FigureError(f"{file} has no ratios over baselines (vs_...)")
    baselines = sorted({b for b, _ in cells})
    ks = sorted({k for _, k in cells})
    rows = []
    for b in baselines:
        row = [f"/ `{b}`"]
        for k in ks:
            c = cells.get((b, k))
            row.append("-" if c is None else f"{c['ratio']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]")
        rows.append(row)
    return table([f"`{doc.get('method', 'default')}` / baseline", *(f"k={k}" for k in ks)], rows)


def render_records(doc, spec: dict, file: str) -> list[str]:
    records = doc if spec.get("key", ".") == "." else lookup(doc, spec["key"], file)
    if not isinstance(records, list):
        raise FigureError(f"{file}: {spec.get('key')} is not a list of records")
    where = spec.get("where", {})
    percent = set(spec.get("percent", []))
    rows = []
    for r in records:
        if all(r.get(k) == v for k, v in where.items()):
            missing = [f for f in spec["columns"].values() if f not in r]
            if missing:
                raise FigureError(f"{file}: a record of {spec.get('key', '.')} has no {missing}")
            rows.append([number(r[f], spec.get("digits", 2), f in percent)
                         for f in spec["columns"].values()])
    if not rows:
        raise FigureError(f"{file}: no record of {spec.get('key', '.')} matches {where}")
    return table(list(spec["columns"]), rows)


RENDERERS = {"fields": render_fields, "by_k": render_by_k, "ratios": render_ratios,
             "records": render_records}


def render_figure(spec: dict) -> str:
    """The markdown of one figure: its table, then the stage and command that make it."""
    file = spec["file"]
    path = ROOT / file
    if not path.is_file():
        raise FigureError(f"{file} does not exist (the pipeline writes it: make main)")
    if spec.get("table") not in RENDERERS:
        raise FigureError(f"unknown table {spec.get('table')!r} (one of {sorted(RENDERERS)})")
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = RENDERERS[spec["table"]](doc, spec, file)
    stages, params = pipeline()
    name = producer(file, stages)
    made = [f"`dvc repro {name}` runs `{stage_command(stages[name], params)}`"]
    # a stage that only reshapes other stages' files (plot_data): name those stages too
    deps = stages[name].get("deps", [])
    made_by = {dep: made_by_stage(dep, stages) for dep in deps}
    if deps and all(made_by.values()):
        made += [f"after `{up}`: `{stage_command(stages[up], params)}`"
                 for up in dict.fromkeys(made_by.values())]
    head = [f"*{spec['title']}*", ""] if spec.get("title") else []
    return "\n".join([*head, *lines, "", f"From `{file}`; made by " + "; ".join(made) + "."])


def on_page_markdown(markdown: str, page, config, files) -> str:
    def figure(match: re.Match) -> str:
        try:
            return render_figure(yaml.safe_load(match.group(1)))
        except (FigureError, KeyError, TypeError, yaml.YAMLError) as exc:
            log.warning("%s: figure not rendered: %s", page.file.src_path, exc)
            return match.group(0)

    markdown = FIGURE.sub(figure, markdown)
    if STAGES in markdown:
        markdown = markdown.replace(STAGES, stages_table())
    return markdown

"""The data side at scale, on small data: a folder of JSON parts is one source (each part
under the per-file cap, every row still validated), the cells of the faster resolution equal
a straightforward one, the chunked snapshot digest equals the one-shot digest, the streamed
`matrix` equals the whole pivot, and a query decodes only the tables it reads."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import polars as pl
import pytest

from benchpress.errors import BadInputError
from benchpress.home import Home
from benchpress.store import snapshot, sql, tables, wide
from benchpress.store.build import build, reuse_prepared
from benchpress.store.ingest import ingest
from benchpress.store.resolve import NOT_OBSERVED, resolve_cells
from benchpress.validate.schemas import Cells
from tests.test_scale import _ladder

URL = "https://example.org/synthetic"


def _home(tmp_path) -> Home:
    from benchpress.cli import main
    from click.testing import CliRunner

    res = CliRunner().invoke(main, ["init", str(tmp_path / "home"), "--no-git"])
    assert res.exit_code == 0, res.output
    return Home(tmp_path / "home")


@pytest.fixture(scope="module")
def cells_data():
    rows, cols, scores = _ladder().make_scores(90, 12, 0.3, 5)
    return rows, cols, scores


def test_a_folder_of_parts_is_one_source_like_the_single_file(tmp_path, cells_data):
    mod, (rows, cols, scores) = _ladder(), cells_data
    one = mod.write_json(tmp_path / "one.json", 90, 12, rows, cols, scores)
    parts = mod.write_json(tmp_path / "parts.json", 90, 12, rows, cols, scores, part_rows=100)
    assert one.is_file() and parts.is_dir()
    assert len(list(parts.iterdir())) == -(-rows.size // 100) > 2
    a, b = _home(tmp_path / "a"), _home(tmp_path / "b")
    ingest(a, str(one), source_id="syn")
    _, report = ingest(b, str(parts), source_id="syn")
    assert report.counts["scores"] == rows.size and report.sources[0].rows_quarantined == 0
    key = ["model_id", "benchmark_id"]
    got_a = tables.read_table(a.registry, "cells").drop("reference_url").sort(key)
    got_b = tables.read_table(b.registry, "cells").drop("reference_url").sort(key)
    assert got_a.equals(got_b)
    assert tables.read_table(a.registry, "models").equals(tables.read_table(b.registry, "models"))
    pointers = tables.read_table(b.registry, "scores")["row"]
    assert pointers[0] == "part-000.json scores[0]" and pointers[100] == "part-001.json scores[0]"
    assert tables.read_table(a.registry, "scores")["row"][100] == "scores[100]"


def test_every_part_is_validated_and_bad_rows_name_their_part(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    doc = {"models": [{"id": "m1"}, {"id": "m2"}],
           "benchmarks": [{"id": "b1", "metric": "accuracy"}], "scores": [
               {"model_id": "m1", "benchmark_id": "b1", "score": 50, "reference_url": URL}]}
    (folder / "part-000.json").write_text(json.dumps(doc))
    bad = {"scores": [{"model_id": "m2", "benchmark_id": "b1", "score": 50, "reference_url": URL},
                      {"model_id": "m2", "benchmark_id": "b1", "score": 150, "reference_url": URL},
                      {"model_id": "m1", "benchmark_id": "b1", "score": 50, "reference_url": URL}]}
    (folder / "part-001.json").write_text(json.dumps(bad))
    home = _home(tmp_path)
    _, report = ingest(home, str(folder), source_id="syn")
    q = tables.read_table(home.registry, "quarantine").sort("row")
    assert q["row"].to_list() == ["part-001.json scores[1]", "part-001.json scores[2]"]
    assert "outside" in q["reason"][0] and "duplicate of an earlier row" in q["reason"][1]
    assert "part-000.json scores[0]" in q["reason"][1]  # duplicates are found across parts
    assert report.counts["cells"] == 2


def test_a_part_over_the_cap_is_refused_whole_and_nothing_is_saved(tmp_path, monkeypatch, cells_data):
    rows, cols, scores = cells_data
    parts = _ladder().write_json(tmp_path / "p.json", 90, 12, rows, cols, scores, part_rows=400)
    home = _home(tmp_path)
    biggest = max(p.stat().st_size for p in parts.iterdir())
    monkeypatch.setenv("BENCHPRESS_MAX_MEMBER_BYTES", str(biggest - 1))
    with pytest.raises(BadInputError) as info:
        ingest(home, str(parts), source_id="syn")
    message = str(info.value)
    assert "part-000.json" in message and "cap per file" in message and "\n" not in message
    assert not list(home.sources.glob("syn*")) and not (home.registry / "build.json").exists()


def test_a_file_prepared_once_is_refused_when_the_cap_is_lowered(tmp_path, monkeypatch, cells_data):
    """The tests' builds reuse each prepared file (conftest: `reuse_prepared`), as a
    replay's do; the limits in force are part of that key, so a rebuild of the same parts
    under a lower cap refuses them instead of serving the first read, and keeps the
    registry as it was."""
    rows, cols, scores = cells_data
    parts = _ladder().write_json(tmp_path / "p.json", 90, 12, rows, cols, scores, part_rows=400)
    home = _home(tmp_path)
    with reuse_prepared():
        _, report = ingest(home, str(parts), source_id="syn")
        assert report.counts["cells"] > 0
        before = (home.registry / "build.json").read_bytes()
        biggest = max(p.stat().st_size for p in parts.iterdir())
        monkeypatch.setenv("BENCHPRESS_MAX_MEMBER_BYTES", str(biggest - 1))
        with pytest.raises(BadInputError, match="cap per file"):
            build(home)
    assert (home.registry / "build.json").read_bytes() == before


def _reference_cells(scores: pl.DataFrame, priority: dict, rank: dict) -> pl.DataFrame:
    """The rule of `store.resolve` written the plain way: rank every observation, then one
    ordered group per cell."""
    worst = max(priority.values(), default=0) + 1
    newest = pl.col("source_version").max().over("source_id")
    kept = (scores.filter(newest.is_null() | (pl.col("source_version") == newest))
            .filter(~pl.col("audit_status").fill_null("").is_in(NOT_OBSERVED)))
    ranked = (kept.with_row_index("_pos").with_columns(
                  (pl.col("audit_status").fill_null("") == "dropped").alias("_d"),
                  # a vendor quoting another maker's model ranks as a third party
                  pl.Series([priority.get({"other_vendor": "third_party", "leaderboard":
                                           "leaderboard"}.get(m, t), worst)
                             for t, m in zip(kept["source_type"], kept["measured_by"])],
                            dtype=pl.Int64).alias("_p"),
                  (-pl.col("source_id").replace_strict(rank, default=0,
                                                       return_dtype=pl.Int64)).alias("_a"))
              .sort("_d", "_p", "_a", "_pos"))
    return (ranked.group_by(["model_id", "benchmark_id"], maintain_order=True).agg(
        pl.col("score", "source_id", "reference_url", "source_type", "reported_setting",
               "audit_status", "source_version", "measured_by").first(),
        pl.len().cast(pl.Int64).alias("n_observations"),
        ((pl.col("score") - pl.col("score").first()).abs() > 1e-9).sum().cast(pl.Int64)
        .alias("n_disagreeing"),
        pl.col("score").min().alias("min_score"), pl.col("score").max().alias("max_score"))
        .select(list(Cells.to_schema().columns)).sort("model_id", "benchmark_id"))


@pytest.mark.parametrize("repeat", [True, False])
def test_resolved_cells_equal_the_plain_rule(repeat):
    rng = np.random.default_rng(7)
    n = 3000
    scores = pl.DataFrame({
        "model_id": [f"m{k}" for k in rng.integers(0, 60 if repeat else 10**6, n)],
        "benchmark_id": [f"b{k}" for k in rng.integers(0, 20 if repeat else 10**6, n)],
        "score": np.round(rng.uniform(0, 100, n), 1),
        "source_id": rng.choice(["s1", "s2", "s3"], n),
        "reference_url": rng.choice([URL, None], n),
        "source_type": rng.choice(["official_blog", "leaderboard", "model_card"], n),
        "reported_setting": None,
        "audit_status": rng.choice([None, "dropped", "estimated", None], n),
        "source_version": rng.choice([None, "2026-01-01", "2026-02-01"], n),
        "measured_by": rng.choice(["own_vendor", "other_vendor", "leaderboard", "vendor"], n),
    }, schema_overrides={"reported_setting": pl.String})
    if not repeat:
        scores = scores.unique(["model_id", "benchmark_id"], keep="first", maintain_order=True)
    priority = {"official_blog": 1, "model_card": 2, "leaderboard": 3, "third_party": 4}
    rank = {"s1": 1, "s2": 3, "s3": 2}
    got = resolve_cells(scores, priority, rank)
    want = _reference_cells(scores, priority, rank)
    assert got.equals(want) and got.height > 100
    assert (got["n_observations"] > 1).any() == repeat
    empty = resolve_cells(scores.head(0), priority, rank)
    assert empty.height == 0 and empty.schema == want.schema


def test_the_chunked_snapshot_digest_is_the_one_shot_digest(monkeypatch):
    rng = np.random.default_rng(2)
    n = 1000
    df = pl.DataFrame({
        # long runs of one first-column value (a run longer than a chunk), and nulls
        "a": rng.choice(["x", "y", None, "z"], n, p=[0.6, 0.2, 0.1, 0.1]).tolist(),
        "b": rng.integers(0, 5, n), "c": rng.choice(["p,q", 'r"s', None], n).tolist(),
        "d": rng.normal(size=n), "retrieved_at": ["2026"] * n})

    def one_shot(frame):
        frame = frame.drop("retrieved_at")
        h = hashlib.sha256(json.dumps([[c, str(t)] for c, t in frame.schema.items()]).encode())
        h.update(frame.sort(frame.columns, nulls_last=True).write_csv().encode("utf-8"))
        return h.hexdigest()

    for rows in (7, 100, 10_000):
        monkeypatch.setattr(snapshot, "_DIGEST_ROWS", rows)
        assert snapshot.table_digest(df) == one_shot(df)
        assert snapshot.table_digest(df.sample(fraction=1.0, shuffle=True, seed=1)) == one_shot(df)
    changed = df.with_columns(pl.when(pl.int_range(n) == 500).then(0.5).otherwise("d").alias("d"))
    assert snapshot.table_digest(changed) != one_shot(df)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reg")
    rows, cols, scores = _ladder().make_scores(90, 12, 0.3, 5)
    keep = rows != 40  # model 40 keeps no cell: its row is all null
    data = _ladder().write_json(tmp / "d.json", 90, 12, rows[keep], cols[keep], scores[keep])
    home = _home(tmp)
    ingest(home, str(data), source_id="syn")
    return home.registry


def test_the_streamed_matrix_equals_the_whole_pivot(registry, monkeypatch):
    models, benchmarks = (tables.read_table(registry, n) for n in ("models", "benchmarks"))
    cells = tables.read_table(registry, "cells")
    whole = wide.pivot(models, benchmarks, cells)
    assert whole.height == 90 and whole.row(40)[1:] == (None,) * 12
    for batch in (1, 7, 89, 90, 1000):
        got = pl.from_arrow(wide.matrix_reader(models, benchmarks, lambda: cells,
                                               batch=batch).read_all())
        assert got.equals(whole), batch
    monkeypatch.setattr(wide, "BATCH_MODELS", 8)
    assert sql.query(registry, "SELECT * FROM matrix", max_rows=None).equals(whole)
    # two reads of the matrix in one query: the whole pivot
    pair = sql.query(registry, "SELECT a.model_id, a.b0003, b.b0003 AS again FROM matrix a "
                               "JOIN matrix b USING (model_id) ORDER BY a.model_id")
    assert pair["b0003"].equals(pair["again"].alias("b0003"))


def _run(con, query: str) -> sql.QueryResult:
    """One query in this process (where the spies see), by the steps of the query's child."""
    sql.prepare_select(con, query)
    return sql.result_of(sql.fetch(con, query), None)


def test_limit_pivots_one_batch_and_only_named_tables_are_decoded(registry, monkeypatch):
    monkeypatch.setattr(wide, "BATCH_MODELS", 8)
    positions, decoded = [], []
    real_positions, real_read, real_arrow = wide._positions, tables.read_table, tables.read_arrow

    def spy_positions(cells, model_ids, order):
        positions.append(len(model_ids))
        return real_positions(cells, model_ids, order)

    def spy_read(folder, name, columns=None):
        decoded.append(name)
        return real_read(folder, name, columns)

    monkeypatch.setattr(wide, "_positions", spy_positions)
    def spy_arrow(folder, name):
        decoded.append(name)
        return real_arrow(folder, name)

    monkeypatch.setattr(sql, "read_table", spy_read)
    monkeypatch.setattr(sql, "read_arrow", spy_arrow)
    con = sql.connect(registry)  # in this process, where the spies see (`query` runs a child)
    try:
        got = _run(con, "SELECT * FROM matrix LIMIT 5").frame
        assert got.height == 5 and positions == [8]  # the first batch's 8 models, nothing more
        decoded.clear()
        n = _run(con, "SELECT count(*) AS n FROM models").frame["n"][0]
        assert n == 90 and "scores" not in decoded and "cells" not in decoded
        listed = _run(con, "SELECT table_name FROM information_schema.tables").frame
        assert {"scores", "cells", "matrix", "conflicts"} <= set(listed["table_name"])
        # a view decodes what it reads, once per connection
        for _ in range(2):
            k = _run(con, "SELECT count(*) AS n FROM source_values").frame["n"][0]
            assert k == tables.read_table(registry, "cells").height
        assert decoded.count("scores") == 1
    finally:
        con.close()
    con = sql.connect(registry)
    try:  # the views' own table, named directly, is decoded too (never an empty stand-in)
        n = _run(con, "SELECT count(*) AS n FROM _scores_in_file_order").frame["n"][0]
        assert n == tables.read_table(registry, "scores").height > 0
    finally:
        con.close()


def test_scores_in_file_order_shares_the_scores_columns(registry):
    """The views' `_scores_in_file_order` is the scores' Arrow table with a row number put
    first, not a second conversion (12 million scores: a 14 GB peak to load them for a
    query, 7.4 GB, then read as Arrow straight from the file: see the README)."""
    derived = sql._with_derived({"scores": tables.read_arrow(registry, "scores")})
    scores, ordered = derived["scores"], derived["_scores_in_file_order"]
    assert ordered.column_names == ["file_row_number", *scores.column_names]
    assert ordered.column("file_row_number").to_pylist() == list(range(scores.num_rows))
    for name in scores.column_names:
        mine, theirs = scores.column(name).chunks, ordered.column(name).chunks
        assert [b.address for c in mine for b in c.buffers() if b is not None] == \
               [b.address for c in theirs for b in c.buffers() if b is not None], name

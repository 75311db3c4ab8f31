"""SQL that builds huge strings (issue 27, Medium 6): DuckDB makes strings outside its
buffer manager, so a constant size over the cap is refused before the query runs; and a
failure met while Arrow reads the result is a SQL error, not a file fault."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from benchpress.cli import main
from benchpress.errors import BadInputError
from benchpress.store.sql_bounds import MAX_STRING_CHARS

URL = "https://acme.example/blog"


@pytest.fixture
def built(home, tmp_path):
    path = tmp_path / "src.csv"
    path.write_text("model_id,name,provider,release_date,benchmark_id,score,reference_url,"
                    f"source_type\nacme-1,Acme,Acme,2026-01-02,hle,30,{URL},official_blog\n",
                    encoding="utf-8")
    result = CliRunner().invoke(main, ["ingest", str(path), "--id", "src", "--adapter",
                                       "releases-csv", "--home", str(home.root)])
    assert result.exit_code == 0, result.stderr
    return home


@pytest.mark.parametrize("sql", [
    "SELECT length(repeat('x', 2000000000)) AS n",   # the reported query: 4 GB past a 1 GB limit
    "SELECT length(repeat('x', 1.5e9)) AS n",
    f"SELECT length(repeat('ab', {MAX_STRING_CHARS // 2 + 1})) AS n",  # over by the text's length
    "SELECT length(lpad('a', 3000000000::BIGINT, 'x')) AS n",
    "SELECT length(rpad(model_id, 100000000, '.')) AS n FROM models",
])
def test_a_constant_string_size_over_the_cap_is_refused_at_once(built, sql):
    t0 = time.perf_counter()
    result = CliRunner().invoke(main, ["sql", sql, "--home", str(built.root)])
    assert time.perf_counter() - t0 < 5
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "would build a string of more than" in lines[0]


def test_a_string_under_the_cap_is_built(built):
    result = CliRunner().invoke(main, ["sql", "SELECT length(repeat('#', 1000)) AS n",
                                       "--home", str(built.root), "--format", "json"])
    assert result.exit_code == 0 and '"n": 1000' in result.stdout


def test_a_failure_in_the_result_stream_is_a_sql_error_not_a_file_fault():
    """DuckDB's out-of-memory met while Arrow reads the result arrives as an OSError
    without an errno: a query's fault, one line; an OSError with one is left as it is."""
    from benchpress.store.sql import query_error

    error = query_error(OSError("Out of Memory Error: failed to allocate data of size 1.9 GiB "
                                "(953.6 MiB/953.6 MiB used)"))
    assert isinstance(error, BadInputError)
    assert str(error) == ("SQL error: the query needs more memory than its limit (Out of "
                          "Memory Error: failed to allocate data of size 1.9 GiB)")
    gone = FileNotFoundError(2, "No such file or directory")
    assert query_error(gone) is gone

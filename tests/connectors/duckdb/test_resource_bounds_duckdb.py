"""Issue 15 items 4 and 5 on the real DuckDB: values DuckDB would build outside its memory limit
are refused before they run, a result's bytes are bounded per value and in all, the buffer
manager's memory and the temp files are bounded, and after each stop the same connector serves
the next question.

Bounds are tiny (a value of 1,000 bytes, a result of 64 KiB, 64 MiB of memory, 8 MiB of temp
files) so each attack hits them at once; each test also shows what the statement does without
the bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.duckdb.connector import DuckDBConnector
from connectors.limits import MIB, ResourceLimitExceeded, RunLimits

TINY = RunLimits(
    max_cell_bytes=1000, max_result_bytes=64 * 1024, engine_memory_mb=64, engine_temp_mb=8
)


@pytest.fixture
def tiny(shop_file: Path) -> Iterator[DuckDBConnector]:
    connector = DuckDBConnector(shop_file, threads=1, limits=TINY)
    yield connector
    connector.close()


def serves(connector: DuckDBConnector) -> None:
    result = connector.run("SELECT count(*) FROM sales", max_rows=10, timeout_s=30)
    assert result.rows == [(2,)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT repeat('x', 10000000) FROM range(1000)",
        "SELECT len(range(1000000000))",
        "SELECT length(repeat('x', 2000000000))",
        "SELECT lpad('x', 1000000000, 'y')",
        "SELECT printf('%1000000000d', 1)",
        "SELECT repeat(region, 100000000) FROM sales",
    ],
)
def test_values_built_outside_the_memory_limit_are_refused_before_they_run(
    tiny: DuckDBConnector, sql: str
) -> None:
    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=10, timeout_s=30)
    assert "QUERYBOT_MAX_CELL_BYTES" in caught.value.message
    assert "outside its memory limit" in caught.value.message
    serves(tiny)


def test_small_built_values_still_run_and_a_row_of_them_adds_up(tiny: DuckDBConnector) -> None:
    # The bound for built values here is 64 KiB / 2,048 rows = 32 bytes a row.
    sql = "SELECT repeat('ab', 8) AS r, lpad(region, 16, '.') AS p FROM sales ORDER BY p"
    result = tiny.run(sql, max_rows=10, timeout_s=30)
    assert result.rows == [("ab" * 8, "." * 11 + "North"), ("ab" * 8, "." * 11 + "South")]
    assert tiny.run("SELECT len(range(3))", max_rows=1, timeout_s=30).rows == [(3,)]
    with pytest.raises(ResourceLimitExceeded, match="add up to 33 bytes"):
        tiny.run(sql.replace("16", "17"), max_rows=10, timeout_s=30)
    with pytest.raises(ResourceLimitExceeded, match="cannot check"):
        tiny.run("SELECT repeat('x', 2000000000) FROM sales WHERE ?!", max_rows=1, timeout_s=30)


@pytest.mark.slow
def test_a_long_value_from_the_data_stops_the_run(tiny: DuckDBConnector, shop_file: Path) -> None:
    # string_agg is in the buffer manager (not refused up front): its value is measured instead.
    sql = "SELECT string_agg('x', '') AS long_text FROM range(5000)"
    roomy = DuckDBConnector(shop_file, threads=1, limits=TINY)  # same file: same instance
    roomy.limits = RunLimits(max_cell_bytes=10 * MIB)  # only the reading side differs
    try:
        assert len(roomy.run(sql, max_rows=1, timeout_s=30).rows[0][0]) == 5000
    finally:
        roomy.close()
    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=1, timeout_s=30)
    assert "'long_text'" in caught.value.message
    assert "QUERYBOT_MAX_CELL_BYTES" in caught.value.message
    serves(tiny)


def test_kept_rows_over_the_result_bound_stop_the_run(tiny: DuckDBConnector) -> None:
    sql = "SELECT repeat('y', 30) || i AS v FROM range(100000) t(i)"
    few = tiny.run(sql, max_rows=100, timeout_s=30)
    assert len(few.rows) == 100 and few.total_rows == 100000  # the rest counted, not kept
    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=100000, timeout_s=30)
    assert "QUERYBOT_MAX_RESULT_MB" in caught.value.message
    serves(tiny)


@pytest.mark.slow
def test_the_memory_limit_stops_a_large_aggregate(tiny: DuckDBConnector) -> None:
    sql = "SELECT length(string_agg('xxxxxxxxxx', ',')) FROM range(200000000)"
    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=1, timeout_s=30)
    assert "QUERYBOT_ENGINE_MEMORY_MB" in caught.value.message
    assert "Out of Memory" in caught.value.engine_message
    serves(tiny)


def test_temp_files_past_the_bound_stop_the_run(tiny: DuckDBConnector) -> None:
    sql = (
        "SELECT count(*) FROM (SELECT i % 100000000 AS g, count(*) FROM range(1000000000) t(i)"
        " GROUP BY g)"
    )
    with pytest.raises(ResourceLimitExceeded) as caught:
        tiny.run(sql, max_rows=1, timeout_s=60)
    assert "QUERYBOT_ENGINE_TEMP_MB" in caught.value.message
    assert tiny.temp_dir.name.startswith("querybot-duckdb-")
    serves(tiny)

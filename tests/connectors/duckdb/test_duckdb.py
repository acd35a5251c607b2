"""DuckDBConnector against real DuckDB files: metadata, limits, timeouts and the read-only lock."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from connectors.base import (
    Connector,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.duckdb.connector import DuckDBConnector

#: Ten billion pairs: far longer than any timeout used here.
SLOW_SQL = "SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range + b.range = 7"


def fingerprint(path: Path) -> tuple[str, int]:
    """The file's bytes hash and modification time."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


# -- opening -----------------------------------------------------------------------------------


def test_is_a_connector(shop: DuckDBConnector) -> None:
    assert isinstance(shop, Connector)
    assert (shop.name, shop.dialect) == ("duckdb", "duckdb")


def test_missing_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable) as caught:
        DuckDBConnector(tmp_path / "nope.duckdb")
    assert "nope.duckdb" in caught.value.message
    assert caught.value.hint
    assert not (tmp_path / "nope.duckdb").exists()


def test_directory_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable):
        DuckDBConnector(tmp_path)


def test_file_that_is_not_duckdb_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_text("not a database\n" * 1000)
    with pytest.raises(WarehouseUnavailable) as caught:
        DuckDBConnector(path)
    assert caught.value.engine_message
    assert path.read_text() == "not a database\n" * 1000


def test_closed_connector_is_unavailable(shop_file: Path) -> None:
    connector = DuckDBConnector(shop_file)
    connector.close()
    with pytest.raises(WarehouseUnavailable):
        connector.run("SELECT 1", max_rows=1, timeout_s=5)


# -- metadata ----------------------------------------------------------------------------------


def test_list_tables_qualifies_names_and_reads_comments(shop: DuckDBConnector) -> None:
    tables = {t.name: t for t in shop.list_tables()}
    assert set(tables) == {
        "shop.main.sales",
        "shop.main.big_sales",
        "shop.archive.sales",
        "shop.archive.notes",
    }
    sales = tables["shop.main.sales"]
    assert sales.description == "One row per sale"
    assert sales.row_count == 2
    assert [(c.name, c.type, c.description) for c in sales.columns] == [
        ("region", "VARCHAR", ""),
        ("amount", "DECIMAL(10,2)", "Sale amount in USD"),
        ("sold_on", "DATE", ""),
    ]
    view = tables["shop.main.big_sales"]
    assert [c.name for c in view.columns] == ["region", "amount", "sold_on"]
    assert view.row_count is None


def test_list_tables_is_read_once(shop: DuckDBConnector) -> None:
    first, second = shop.list_tables(), shop.list_tables()
    assert first == second
    assert all(a is b for a, b in zip(first, second, strict=True))
    first.clear()  # callers get a copy
    assert shop.list_tables() == second


@pytest.mark.parametrize(
    "name",
    ["shop.main.big_sales", "main.big_sales", "big_sales", "BIG_SALES", '"main"."big_sales"'],
)
def test_describe_accepts_full_schema_and_short_names(shop: DuckDBConnector, name: str) -> None:
    assert shop.describe(name).name == "shop.main.big_sales"


def test_describe_unknown_table_suggests_a_close_name(shop: DuckDBConnector) -> None:
    with pytest.raises(QueryFailed) as caught:
        shop.describe("big_sale")
    assert "big_sale" in caught.value.message
    assert "Did you mean" in caught.value.message
    assert "big_sales" in caught.value.message


def test_describe_unknown_table_without_anything_close(shop: DuckDBConnector) -> None:
    with pytest.raises(QueryFailed) as caught:
        shop.describe("zzzzzz")
    assert "Did you mean" not in caught.value.message


def test_describe_ambiguous_short_name_lists_candidates(shop: DuckDBConnector) -> None:
    with pytest.raises(QueryFailed) as caught:
        shop.describe("sales")
    assert "shop.main.sales" in caught.value.message
    assert "shop.archive.sales" in caught.value.message
    assert shop.describe("archive.sales").columns[0].name == "region"


# -- running -----------------------------------------------------------------------------------


def test_run_caps_rows_and_counts_the_rest(shop: DuckDBConnector) -> None:
    result = shop.run("SELECT range AS n FROM range(25003)", max_rows=100, timeout_s=30)
    assert result.columns == ["n"]
    assert result.column_types == ["BIGINT"]
    assert result.rows == [(n,) for n in range(100)]
    assert result.total_rows == 25003
    assert result.truncated
    assert result.elapsed_s >= 0


def test_run_under_the_cap_is_not_truncated(shop: DuckDBConnector) -> None:
    result = shop.run("SELECT * FROM sales ORDER BY sold_on", max_rows=100, timeout_s=30)
    assert result.total_rows == len(result.rows) == 2
    assert not result.truncated


def test_run_with_zero_rows_still_counts(shop: DuckDBConnector) -> None:
    result = shop.run("SELECT * FROM range(7)", max_rows=0, timeout_s=30)
    assert (result.rows, result.total_rows, result.truncated) == ([], 7, True)


def test_run_returns_raw_engine_values(shop: DuckDBConnector) -> None:
    result = shop.run(
        "SELECT region, amount, sold_on FROM sales ORDER BY sold_on", max_rows=10, timeout_s=30
    )
    assert result.rows[0] == ("North", Decimal("10.50"), date(2026, 1, 5))
    assert result.column_types == ["VARCHAR", "DECIMAL(10,2)", "DATE"]


@pytest.mark.slow
def test_run_returns_times_with_a_zone(shop: DuckDBConnector) -> None:
    # DuckDB needs pytz to hand a TIMESTAMPTZ to Python; without it every such column fails
    result = shop.run("SELECT TIMESTAMPTZ '2024-01-01 10:00:00+02' AS at", max_rows=1, timeout_s=30)
    assert result.rows == [(datetime(2024, 1, 1, 8, tzinfo=UTC),)]


@pytest.mark.slow
def test_run_timeout_interrupts_and_connector_recovers(shop: DuckDBConnector) -> None:
    with pytest.raises(QueryTimeout) as caught:
        shop.run(SLOW_SQL, max_rows=10, timeout_s=0.2)
    assert caught.value.timeout_s == 0.2
    assert not caught.value.retryable_by_repair
    assert shop.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql", [SLOW_SQL, "SELECT * FROM range(10000000000)"], ids=["executing", "counting"]
)
def test_cancel_interrupts_the_run_and_connector_recovers(shop: DuckDBConnector, sql: str) -> None:
    context = RunContext(job_key="p-cancel")
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(shop.run, sql, max_rows=5, timeout_s=600, context=context)
        while not shop.cancel("p-cancel"):  # True once the run is under way
            assert not running.done(), running.result()
        with pytest.raises(QueryCancelled) as caught:
            running.result(timeout=60)  # a guard only: the statement would run for minutes
    assert not caught.value.retryable_by_repair
    assert not shop.cancel("p-cancel"), "nothing runs under that key any more"
    assert shop.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]


@pytest.mark.slow
def test_cancel_stops_only_its_own_run(shop: DuckDBConnector) -> None:
    assert not shop.cancel("never-started")
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(
            shop.run, SLOW_SQL, max_rows=1, timeout_s=600, context=RunContext(job_key="a")
        )
        other = shop.run("SELECT 7", max_rows=1, timeout_s=5, context=RunContext(job_key="b"))
        assert other.rows == [(7,)]
        assert not shop.cancel("b"), "b finished"
        while not shop.cancel("a"):
            assert not running.done(), running.result()
        with pytest.raises(QueryCancelled):
            running.result(timeout=60)


@pytest.mark.slow
def test_run_timeout_while_counting_rows(shop: DuckDBConnector) -> None:
    """A cheap statement with a huge result is stopped while its rows are being counted."""
    with pytest.raises(QueryTimeout):
        shop.run("SELECT * FROM range(10000000000)", max_rows=5, timeout_s=0.2)


@pytest.mark.parametrize(
    ("sql", "engine_text"),
    [
        ("SELECT nope FROM sales", "Binder Error"),
        ("SELECT * FROM nowhere", "Catalog Error"),
        ("SELEC 1", "Parser Error"),
        ("SELECT 'x'::INTEGER", "Conversion Error"),
    ],
)
def test_engine_errors_are_query_failed(shop: DuckDBConnector, sql: str, engine_text: str) -> None:
    with pytest.raises(QueryFailed) as caught:
        shop.run(sql, max_rows=10, timeout_s=5)
    error = caught.value
    assert error.retryable_by_repair
    assert engine_text in error.engine_message
    assert engine_text in error.message
    assert error.hint


def test_binder_error_names_the_column(shop: DuckDBConnector) -> None:
    with pytest.raises(QueryFailed) as caught:
        shop.run("SELECT amout FROM sales", max_rows=10, timeout_s=5)
    assert '"amout"' in caught.value.engine_message


# -- the read-only lock ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO sales VALUES ('East', 1, '2026-03-03')",
        "UPDATE sales SET amount = 0",
        "DELETE FROM sales",
        "DROP TABLE sales",
        "CREATE TABLE evil (x INTEGER)",
        "ALTER TABLE sales ADD COLUMN x INTEGER",
        "COMMENT ON TABLE sales IS 'changed'",
        "COPY sales TO '{out}'",
        "EXPORT DATABASE '{out}'",
        "ATTACH '{out}' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET threads = 8",
        "RESET memory_limit",
        "SET enable_external_access = true",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM 'https://example.com/data.csv'",
        "SELECT 1; DROP TABLE sales",
    ],
)
def test_writes_and_outside_access_are_refused(
    shop: DuckDBConnector, module_shop_file: Path, tmp_path: Path, sql: str
) -> None:
    out = tmp_path / "out"
    before = fingerprint(module_shop_file)
    with pytest.raises(PermissionDenied) as caught:
        shop.run(sql.format(out=out), max_rows=10, timeout_s=5)
    assert not caught.value.retryable_by_repair
    assert caught.value.engine_message
    assert fingerprint(module_shop_file) == before
    assert not out.exists()
    assert shop.run("SELECT count(*) FROM sales", max_rows=1, timeout_s=5).rows == [(2,)]


def test_file_is_unchanged_after_the_connector_closes(shop_file: Path) -> None:
    """What the lock still allows (temporary tables, CHECKPOINT) leaves the file alone too."""
    before = fingerprint(shop_file)
    connector = DuckDBConnector(shop_file)
    connector.run("CREATE TEMP TABLE t AS SELECT 1", max_rows=1, timeout_s=5)
    connector.run("CHECKPOINT", max_rows=1, timeout_s=5)
    with pytest.raises(PermissionDenied):
        connector.run("DELETE FROM sales", max_rows=1, timeout_s=5)
    connector.close()
    assert fingerprint(shop_file) == before
    con = duckdb.connect(str(shop_file), read_only=True)
    assert con.execute("SELECT count(*) FROM sales").fetchone() == (2,)
    con.close()


# -- threads -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_concurrent_runs_from_threads(shop: DuckDBConnector) -> None:
    """Queries from many threads at once get their own results; a timeout stops only its own."""

    def count(n: int) -> int:
        return shop.run(f"SELECT count(*) FROM range({n})", max_rows=1, timeout_s=30).rows[0][0]

    def slow() -> str:
        try:
            shop.run(SLOW_SQL, max_rows=1, timeout_s=0.5)
        except QueryTimeout:
            return "timeout"
        return "finished"

    sizes = list(range(0, 2_000_000, 25_000))
    with ThreadPoolExecutor(max_workers=8) as pool:
        slow_future = pool.submit(slow)
        counts = list(pool.map(count, sizes))
        metadata = list(pool.map(lambda _: len(shop.list_tables()), range(16)))
    assert counts == sizes
    assert slow_future.result() == "timeout"
    assert metadata == [4] * 16


def test_two_connectors_on_one_file_in_one_process(demo_file: Path) -> None:
    first = DuckDBConnector(demo_file)
    second = DuckDBConnector(demo_file)
    try:
        assert second.run("SELECT 1", max_rows=1, timeout_s=5).rows == [(1,)]
        with pytest.raises(PermissionDenied):
            second.run("SET threads = 1", max_rows=1, timeout_s=5)
    finally:
        first.close()
        second.close()

"""Value profiling on Snowflake (QUERYBOT_PROFILE_VALUES=on): one query of approximate functions
per table (APPROX_COUNT_DISTINCT, APPROX_TOP_K), each explained first and skipped over the
connector's bytes cap. fakesnow runs APPROX_COUNT_DISTINCT but has no APPROX_TOP_K (its DuckDB
`approx_top_k` takes two arguments and returns no counts), so a query with it is answered at the
connector's boundary (recording.py) with what Snowflake returns, an ARRAY of [value, count]
pairs; the rest (the catalog, the logins, a table without text columns) runs on fakesnow."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agent.catalog.profiling import ProfileLimits, is_text, one_scan_sql, top_values
from agent.catalog.snapshot import Catalog
from bot.settings import Settings
from bot.wiring import Deployment
from connectors.base import ColumnInfo, ColumnProfile, ConnectorError, TableInfo, TableProfile
from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.session import Credentials
from tests.connectors.snowflake.conftest import Seeded, make_connector
from tests.connectors.snowflake.test_session import explain
from tests.support.snowflake_recording import Recorder

#: Listed in full up to 20 values, else the 5 most frequent: SALES.ORDERS.NOTE's 30 values are
#: more than that, its REGION's 3 fewer.
LIMITS = ProfileLimits(complete_values=20, top_values=5)
COUNTS_AND_TOPS = "SELECT COUNT(*), APPROX_COUNT_DISTINCT("


def scan_sql(table: TableInfo) -> str:
    """What the profiler sends for `table`, whose row count INFORMATION_SCHEMA.TABLES gave: the
    distinct counts and values of its text columns."""
    texts = [c for c in table.columns if is_text(c)]
    return one_scan_sql(table, texts, texts, "snowflake", LIMITS)


def pairs(*counted: tuple[str | None, int]) -> str:
    """APPROX_TOP_K's result as the driver returns an ARRAY: JSON text."""
    return json.dumps([list(pair) for pair in counted])


def by_name(connector: SnowflakeConnector) -> dict[str, TableInfo]:
    return {t.name.split(".", 1)[1]: t for t in connector.list_tables()}


def test_the_scan_counts_and_lists_with_approximate_functions() -> None:
    columns = (
        ColumnInfo("ID", "NUMBER"),
        ColumnInfo("REGION", "TEXT"),
        ColumnInfo("PLACED_ON", "DATE"),
    )
    table = TableInfo("DB.SALES.ORDERS", columns)
    sql = one_scan_sql(table, columns, [columns[1]], "snowflake", LIMITS)
    assert sql == (
        'SELECT COUNT(*), APPROX_COUNT_DISTINCT("ID"), APPROX_COUNT_DISTINCT("REGION"), '
        'APPROX_COUNT_DISTINCT("PLACED_ON"), APPROX_TOP_K("REGION", 22, 10000) '
        'FROM (SELECT "ID", "REGION", "PLACED_ON" FROM DB.SALES.ORDERS LIMIT 1000000) AS scanned'
    )


def test_top_values_are_the_non_null_values_most_frequent_first() -> None:
    found = pairs(("US", 10), (None, 12), ("APAC", 10), ("EU", 11))
    assert top_values(found) == ("EU", "APAC", "US")
    assert top_values([["a", 1]]) == ("a",) and top_values(None) == ()
    with pytest.raises(ConnectorError, match="APPROX_TOP_K gave no"):
        top_values("[1, 2]")


@pytest.mark.slow  # a server in its own venv
def test_one_query_per_table_gives_counts_and_values(
    connector: SnowflakeConnector, recorder: Recorder
) -> None:
    tables = by_name(connector)
    orders, customers = tables["SALES.ORDERS"], tables["SALES.CUSTOMERS"]
    region = pairs(("EU", 10), ("US", 10), ("APAC", 10))
    # NOTE holds 'x' repeated 1 to 30 times, once each: APPROX_TOP_K gives as many as asked.
    note = pairs(*(("x" * n, 1) for n in range(1, 23)))
    recorder.script_run(scan_sql(orders), ["n", "region", "note", "top_region", "top_note"], [
        (30, 3, 30, region, note)
    ])  # fmt: skip
    recorder.script_run(scan_sql(customers), ["n", "name", "top"], [
        (2, 2, pairs(("Grace", 1), ("Ada", 1)))
    ])  # fmt: skip
    recorder.script_run(scan_sql(tables["ARCHIVE.ORDERS"]), ["n", "region", "top"], [
        (1, 1, pairs(("EU", 1), (None, 0)))
    ])  # fmt: skip
    profiles = Catalog(connector, limits=LIMITS).refresh().profiles
    db = connector.scope.database.lower()
    assert profiles[f"{db}.sales.orders"].columns["REGION"] == ColumnProfile(
        3, ("APAC", "EU", "US"), complete=True
    )
    note_values = tuple("x" * n for n in range(1, 6))  # ties by value
    assert profiles[f"{db}.sales.orders"].columns["NOTE"] == ColumnProfile(30, note_values)
    assert profiles[f"{db}.sales.orders"].row_count == 30
    assert profiles[f"{db}.sales.customers"].columns["NAME"].values == ("Ada", "Grace")
    assert profiles[f"{db}.archive.orders"].columns["REGION"] == ColumnProfile(1, ("EU",), True)
    # The view has no text column: COUNT(*) and APPROX_COUNT_DISTINCT ran on fakesnow itself.
    assert profiles[f"{db}.sales.big_orders"] == TableProfile(
        20, {"ID": ColumnProfile(20), "AMOUNT": ColumnProfile(20)}
    )
    submitted = [s.sql for s in recorder.submitted_queries()]
    assert len(submitted) == 4 and all(s.startswith(COUNTS_AND_TOPS) for s in submitted)
    explained = [s for s in recorder.statements() if s.startswith("EXPLAIN USING JSON")]
    assert sorted(explained) == sorted(f"EXPLAIN USING JSON {s}" for s in submitted)


@pytest.mark.slow  # a server in its own venv
def test_a_table_over_the_cap_is_not_scanned_and_the_log_says_so(
    seeded: Seeded, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    connector = make_connector(seeded, recorder, max_bytes_scanned=1024**2)
    try:
        tables = by_name(connector)
        orders, customers = tables["SALES.ORDERS"], tables["SALES.CUSTOMERS"]
        recorder.script_run(scan_sql(tables["ARCHIVE.ORDERS"]), ["n", "region", "top"], [
            (1, 1, pairs(("EU", 1)))
        ])  # fmt: skip
        recorder.script(f"EXPLAIN USING JSON {scan_sql(orders)}", ["content"], [
            (explain(40, 40, 2 * 1024**2),)
        ])  # fmt: skip
        recorder.script_run(scan_sql(customers), ["n", "name", "top"], [
            (2, 2, pairs(("Ada", 1), ("Grace", 1)))
        ])  # fmt: skip
        with caplog.at_level(logging.WARNING, logger="agent.catalog.profiling"):
            profiles = Catalog(connector, limits=LIMITS).refresh().profiles
    finally:
        connector.close()
    db = seeded.database.lower()
    assert profiles[f"{db}.sales.orders"] == TableProfile(30)  # INFORMATION_SCHEMA's count only
    assert profiles[f"{db}.sales.customers"].columns["NAME"].complete
    submitted = [s.sql for s in recorder.submitted_queries()]
    assert scan_sql(orders) not in submitted and scan_sql(customers) in submitted
    [skipped] = [r.getMessage() for r in caplog.records if orders.name in r.getMessage()]
    assert skipped.startswith(f"could not profile {orders.name}: This query would read 2 MiB")
    assert "more than the 1 MiB this bot may read per query, so it was not run" in skipped


def test_auto_leaves_snowflake_unprofiled_and_on_profiles_it(tmp_path: Path) -> None:
    script = tmp_path / "none.jsonl"
    script.write_text("", encoding="utf-8")
    connector = SnowflakeConnector(
        "myorg-acct",
        database="DB",
        schemas=["SALES"],
        warehouse="WH",
        credentials=Credentials("QB", password="pw"),
    )
    for setting, profiled in (("auto", False), ("on", True), ("off", False)):
        env = {
            "QUERYBOT_MODEL": f"scripted:{script}",
            "QUERYBOT_DATA_DIR": str(tmp_path),
            "QUERYBOT_PROFILE_VALUES": setting,
        }
        deployment = Deployment(Settings.from_env(env, dotenv=False))
        try:
            agent = deployment.agent_for(connector, name="snowflake")
            assert agent.deps.limits.profile_values is profiled, setting
        finally:
            deployment.close()

"""Per-identity table allowlists (connectors/allowlist.py) on the real DuckDB and SQLite engines:
a run naming an identity reads only the tables its allowlist names, decided on the parsed
statement before anything reaches the engine (a refused statement that calls `error()` would
fail differently had the engine seen it), CTE names are not tables, and what is unreadable is
everything outside the list."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.allowlist import TableAllowlist, tables_read
from connectors.base import PermissionDenied, QueryFailed, RunContext, acts_as
from connectors.duckdb.connector import DuckDBConnector
from connectors.sql.connector import SqlConnector

# the shop (build_shop_file, tests/connectors/conftest.py): shop.main.sales, shop.main.big_sales
# (a view over sales), shop.archive.sales, shop.archive.notes
SALES, NOTES = "shop.main.sales", "shop.archive.notes"
ALLOWLISTS = {"seller": ["main.sales"], "archivist": ["archive.notes", "archive.sales"]}
#: DuckDB's error(): had the engine run the statement, it would fail with this text.
REACHED = "error('reached the engine') IS NULL"


@pytest.fixture
def duck(shop: DuckDBConnector) -> TableAllowlist:
    return TableAllowlist(shop, ALLOWLISTS)


def rows(connector: TableAllowlist, sql: str, identity: str) -> list[tuple[object, ...]]:
    context = RunContext(identity=identity)
    return connector.run(sql, max_rows=100, timeout_s=10, context=context).rows


def refused(connector: TableAllowlist, sql: str, identity: str) -> str:
    with pytest.raises(PermissionDenied) as caught:
        rows(connector, sql, identity)
    return caught.value.message


def test_an_identity_reads_its_tables_and_nothing_else(duck: TableAllowlist) -> None:
    assert acts_as(duck)
    assert rows(duck, "SELECT region FROM sales ORDER BY region", "seller") == [
        ("North",),
        ("South",),
    ]
    message = refused(duck, f"SELECT note FROM archive.notes WHERE {REACHED}", "seller")
    assert NOTES in message and "'seller' may not read" in message
    # a view over an allowed table is a table of its own: not listed, not readable
    view = refused(duck, f"SELECT * FROM big_sales WHERE {REACHED}", "seller")
    assert "shop.main.big_sales" in view
    # the bot's own login (no identity) reads everything, as without run_as
    assert rows(duck, "SELECT count(*) FROM archive.notes", "") == [(0,)]


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT * FROM sales WHERE region IN (SELECT note FROM archive.notes) AND {REACHED}",
        f"SELECT region FROM sales UNION ALL SELECT note FROM archive.notes WHERE {REACHED}",
        f"SELECT (SELECT max(note) FROM archive.notes) FROM sales WHERE {REACHED}",
        f"SELECT * FROM sales s JOIN archive.notes n ON n.note = s.region WHERE {REACHED}",
        f"WITH x AS (SELECT * FROM archive.notes) SELECT * FROM x WHERE {REACHED}",
        # a CTE named like a table hides it only where it is in scope
        f"SELECT * FROM (WITH notes AS (SELECT 1 AS a) SELECT * FROM notes) s, archive.notes "
        f"WHERE {REACHED}",
        # a CTE's own body, or one before it, sees the table, not the CTE (as DuckDB does)
        f"WITH notes AS (SELECT * FROM notes) SELECT * FROM notes WHERE {REACHED}",
        f"WITH a AS (SELECT * FROM notes), notes AS (SELECT 1) SELECT * FROM a WHERE {REACHED}",
        f"SELECT * FROM information_schema.tables WHERE {REACHED}",
        f"SELECT * FROM duckdb_tables() WHERE {REACHED}",
        f"SELECT * FROM 'shop.duckdb' WHERE {REACHED}",
        f"SELECT * FROM shop.archive.notes WHERE {REACHED}",
    ],
)
def test_every_table_reference_is_checked_before_the_engine_runs(
    duck: TableAllowlist, sql: str
) -> None:
    refused(duck, sql, "seller")


@pytest.mark.parametrize(
    "sql",
    [
        "FROM archive.notes SELECT *",
        "TABLE archive.notes",
        "SELECT * FROM sales UNION BY NAME SELECT * FROM archive.notes",
        "SELECT * FROM sales POSITIONAL JOIN archive.notes",
        "SELECT note FROM archive.notes AS sales",
        "WITH sales AS (FROM archive.notes) FROM sales",
        'SELECT * FROM "archive"."notes"',
        "SELECT * FROM sales LIMIT (SELECT count(*) FROM archive.notes)",
        "SUMMARIZE archive.notes",
        "PIVOT archive.notes ON note",
    ],
)
def test_duckdb_forms_of_reading_a_table_are_checked_too(duck: TableAllowlist, sql: str) -> None:
    refused(duck, sql, "seller")


@pytest.mark.parametrize(
    "sql",
    ["SELECT * FROM", "SELECT 1; SELECT 2", "DESCRIBE sales", "PRAGMA show_tables"],
)
def test_what_cannot_be_read_as_one_query_is_refused(duck: TableAllowlist, sql: str) -> None:
    assert "could not check which tables" in refused(duck, sql, "seller")


def test_cte_names_are_not_tables(duck: TableAllowlist) -> None:
    # `notes` names the CTE, not shop.archive.notes
    sql = "WITH notes AS (SELECT region FROM sales) SELECT count(*) FROM notes"
    assert rows(duck, sql, "seller") == [(2,)]
    recursive = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) "
        "SELECT count(*) FROM n, sales"
    )
    assert rows(duck, recursive, "seller") == [(6,)]
    assert rows(duck, "SELECT count(*) FROM range(3)", "seller") == [(3,)]
    assert tables_read(sql, "duckdb", duck.list_tables()) == [SALES]


def test_unreadable_is_everything_outside_the_allowlist(duck: TableAllowlist) -> None:
    names = sorted(t.name for t in duck.list_tables())
    assert duck.unreadable("archivist", names) == ["shop.main.big_sales", SALES]
    assert duck.unreadable("seller", [SALES, "shop.nothing"]) == ["shop.nothing"]


def test_an_identity_without_an_allowlist_is_refused(duck: TableAllowlist) -> None:
    with pytest.raises(PermissionDenied, match="no table allowlist names it") as caught:
        duck.unreadable("stranger", [SALES])
    assert "run_as.tables" in caught.value.hint
    assert "no table allowlist" in refused(duck, "SELECT 1 FROM sales", "stranger")


def test_entries_that_name_no_single_table_are_reported(shop: DuckDBConnector) -> None:
    # a bare name is the table in `main`, as the engine reads it; `sales` is in two schemas
    wrapped = TableAllowlist(shop, {"seller": ["sales", "salez"], "other": ["shop.sales"]})
    problems = wrapped.problems()
    assert set(problems) == {"seller.salez", "other.shop.sales"}
    assert "Did you mean" in problems["seller.salez"]
    assert "no table named" in problems["other.shop.sales"]
    # an entry that names nothing allows nothing
    assert wrapped.unreadable("seller", [SALES, "shop.archive.sales"]) == ["shop.archive.sales"]
    assert wrapped.unreadable("other", [SALES]) == [SALES]


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[TableAllowlist]:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as con:
        con.executescript(
            "CREATE TABLE orders (id INTEGER, amount INTEGER);"
            "CREATE TABLE salaries (name TEXT, salary INTEGER);"
            "INSERT INTO orders VALUES (1, 10), (2, 20);"
            "INSERT INTO salaries VALUES ('ann', 100);"
        )
    connector = SqlConnector(f"sqlite:///{path}")
    yield TableAllowlist(connector, {"seller": ["orders"]})
    connector.close()


def test_sqlite_holds_an_identity_to_its_allowlist(lite: TableAllowlist) -> None:
    assert rows(lite, "SELECT sum(amount) FROM orders", "seller") == [(30,)]
    # the engine would fail this one (integer overflow) had it run it
    overflow = "abs(-9223372036854775808) > 0"
    message = refused(lite, f"SELECT * FROM orders, salaries WHERE {overflow}", "seller")
    assert "main.salaries" in message
    refused(lite, f"SELECT * FROM sqlite_master WHERE {overflow}", "seller")
    with pytest.raises(QueryFailed, match="integer overflow"):
        rows(lite, f"SELECT * FROM orders WHERE {overflow}", "seller")
    assert lite.unreadable("seller", ["main.orders", "main.salaries"]) == ["main.salaries"]

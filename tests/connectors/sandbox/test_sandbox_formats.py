"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: each
format becomes tables with its types.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from connectors.sandbox.files import FileRejected
from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    load,
    make_sqlite,
    tables,
    upload,
)


@pytest.mark.slow
def test_csv_becomes_a_table_with_sniffed_types_and_descriptions(
    sandboxes: Sandboxes, tmp_path: Path, query
) -> None:
    [loaded] = load(sandboxes, tmp_path, "sales.csv")
    assert (loaded.name, loaded.source, loaded.rows, loaded.columns) == (
        "sales",
        "sales.csv",
        8,
        6,
    )
    table = tables(sandboxes)["sales"]
    assert table.name == "files.main.sales"
    assert [(c.name, c.type) for c in table.columns] == [
        ("order_id", "BIGINT"),
        ("order_date", "DATE"),
        ("region", "VARCHAR"),
        ("product", "VARCHAR"),
        ("quantity", "BIGINT"),
        ("amount", "DOUBLE"),
    ]
    assert table.columns[1].description == 'Column "Order Date" of the file sales.csv.'
    assert table.description.startswith("Loaded from the file sales.csv on ")
    top = "SELECT region, round(sum(amount), 2) FROM sales GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
    assert query(top) == [("East", 96.45)]
    assert query("SELECT min(order_date) FROM files.main.sales") == [(dt.date(2026, 9, 1),)]


@pytest.mark.slow
def test_tsv(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    [loaded] = load(sandboxes, tmp_path, "cities.tsv")
    assert (loaded.name, loaded.rows, loaded.columns) == ("cities", 2, 3)
    assert query("SELECT city FROM cities WHERE population > 400000") == [("Lyon",)]


@pytest.mark.slow
def test_parquet_written_by_duckdb(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    parquet = tmp_path / "written" / "payments.parquet"
    parquet.parent.mkdir()
    with duckdb.connect() as con:
        con.execute(
            f"""COPY (
                SELECT i AS payment_id,
                       (i * 1.25)::DECIMAL(10, 2) AS amount,
                       TIMESTAMP '2026-01-01 00:00:00' + INTERVAL (i) HOUR AS paid_at,
                       CASE WHEN i % 2 = 0 THEN 'card' ELSE 'cash' END AS method
                FROM range(1, 101) t(i)
            ) TO '{parquet}' (FORMAT parquet)"""
        )
    [loaded] = sandboxes.load(THREAD, parquet, "payments.parquet")
    assert (loaded.name, loaded.rows, loaded.columns) == ("payments", 100, 4)
    types = {c.name: c.type for c in tables(sandboxes)["payments"].columns}
    assert types == {
        "payment_id": "BIGINT",
        "amount": "DECIMAL(10,2)",
        "paid_at": "TIMESTAMP",
        "method": "VARCHAR",
    }
    assert query("SELECT method, sum(amount) FROM payments GROUP BY 1 ORDER BY 1") == [
        ("card", Decimal("3187.50")),
        ("cash", Decimal("3125.00")),
    ]


@pytest.mark.slow
def test_times_with_a_zone_are_kept_in_utc(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    csv = b"id,at\n1,2026-01-01T10:00:00+02:00\n2,2026-01-02 11:30:00+00\n"
    sandboxes.load(THREAD, upload(tmp_path, "logins.csv", csv), "logins.csv")
    parquet = tmp_path / "written" / "visits.parquet"
    parquet.parent.mkdir()
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(
            f"COPY (SELECT TIMESTAMPTZ '2026-03-01 12:00:00+01' AS seen) TO '{parquet}' "
            "(FORMAT parquet)"
        )
    sandboxes.load(THREAD, parquet, "visits.parquet")
    found = tables(sandboxes)
    at = found["logins"].columns[1]
    assert (at.name, at.type, at.description) == (
        "at_",  # `at` is a keyword to DuckDB
        "TIMESTAMP",
        'Column "at" of the file logins.csv. Times in UTC.',
    )
    assert found["visits"].columns[0].type == "TIMESTAMP"
    # fetched without pytz (which the bot does not depend on)
    assert query("SELECT at_ FROM logins ORDER BY id") == [
        (dt.datetime(2026, 1, 1, 8, 0),),
        (dt.datetime(2026, 1, 2, 11, 30),),
    ]
    assert query("SELECT seen FROM visits") == [(dt.datetime(2026, 3, 1, 11, 0),)]


@pytest.mark.slow
def test_ndjson_and_a_json_array(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    [events] = load(sandboxes, tmp_path, "events.ndjson")
    [budget] = load(sandboxes, tmp_path, "budget.json")
    assert (events.name, events.rows, events.columns) == ("events", 3, 4)
    assert (budget.name, budget.rows, budget.columns) == ("budget", 2, 3)
    assert query("SELECT count(DISTINCT user_id) FROM events WHERE event = 'signup'") == [(2,)]
    assert query("SELECT team FROM budget ORDER BY budget DESC") == [("Sales",), ("Data",)]
    found = tables(sandboxes)
    assert {c.name: c.type for c in found["events"].columns}["at_"] == "TIMESTAMP"


@pytest.mark.slow
def test_sqlite_file_tables_are_copied_with_their_real_types(
    sandboxes: Sandboxes, tmp_path: Path, query
) -> None:
    source = make_sqlite(tmp_path / "crm.sqlite")
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    loaded = sandboxes.load(THREAD, source, "crm.sqlite")
    assert [(t.name, t.rows, t.columns) for t in loaded] == [("customers", 3, 5), ("orders", 3, 4)]
    found = tables(sandboxes)
    assert set(found) == {"customers", "orders"}  # the view is not copied
    customers = {c.name: c.type for c in found["customers"].columns}
    # declared types are hints in SQLite; the values decide
    assert customers == {
        "id": "BIGINT",
        "name": "VARCHAR",
        "joined": "DATE",  # text dates that all cast
        "score": "DOUBLE",  # 4.5 and 3
        "note": "VARCHAR",  # an integer, a text and a blob
    }
    orders = {c.name: c.type for c in found["orders"].columns}
    assert orders["total"] == "DOUBLE"
    assert orders["placed_at"] == "VARCHAR"  # 'not a time' does not cast: kept as text
    assert found["customers"].columns[1].description == (
        'Column "name" of table Customers of the file crm.sqlite.'
    )
    assert query("SELECT name, joined FROM customers ORDER BY id") == [
        ("Ada", dt.date(2026, 1, 5)),
        ("Grace", dt.date(2026, 2, 11)),
        ("Linus", None),
    ]
    assert query("SELECT note FROM customers ORDER BY id") == [("7",), ("vip",), ("\x00\ufffd",)]
    assert query("SELECT sum(total) FROM orders WHERE customer_id = 1") == [(24.5,)]
    # read-only and immutable: the uploaded file is untouched (the trigger never ran)
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before


@pytest.mark.slow
def test_a_sqlite_file_without_tables_is_refused(sandboxes: Sandboxes, tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    with closing(sqlite3.connect(path)) as con:
        con.execute("CREATE VIEW v AS SELECT 1 AS x")
        con.commit()
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, path, "empty.sqlite")
    assert caught.value.message == "empty.sqlite has no tables to load."
    assert not sandboxes.directory(THREAD).exists()


@pytest.mark.slow
def test_latin1_csv(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    load(sandboxes, tmp_path, "latin1.csv")
    assert query("SELECT name, city FROM latin1 ORDER BY name") == [
        ("José", "São Paulo"),
        ("Renée", "Québec"),
    ]

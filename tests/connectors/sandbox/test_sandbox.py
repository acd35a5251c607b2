"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from connectors.base import PermissionDenied, TableInfo
from connectors.duckdb.connector import DuckDBConnector
from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.files import FileRejected, identifier
from connectors.sandbox.sandboxes import Sandboxes
from tests.support import canary
from tests.support.fixture_files import load_harmful

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
THREAD = "T0TEST:C0FILES:1800000001.000100"


@pytest.fixture
def sandboxes(tmp_path: Path) -> Sandboxes:
    return Sandboxes(tmp_path / "sandboxes")


def upload(tmp_path: Path, name: str, content: bytes | None = None) -> Path:
    """A copy of a fixture file (or `content`) where the bot keeps a download."""
    target = tmp_path / "incoming" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copy(FILES / name, target)
    else:
        target.write_bytes(content)
    return target


def load(sandboxes: Sandboxes, tmp_path: Path, name: str, thread: str = THREAD) -> list:
    return sandboxes.load(thread, upload(tmp_path, name), name)


@pytest.fixture
def query(sandboxes: Sandboxes) -> Iterator:
    """Opens the thread's sandbox the way the bot does and runs SQL on it."""
    opened: list[DuckDBConnector] = []

    def run(sql: str, thread: str = THREAD) -> list[tuple]:
        connector = sandboxes.open(thread)
        opened.append(connector)
        try:
            return connector.run(sql, max_rows=1000, timeout_s=10).rows
        finally:
            connector.close()

    yield run


def tables(sandboxes: Sandboxes, thread: str = THREAD) -> dict[str, TableInfo]:
    connector = sandboxes.open(thread)
    try:
        return {t.short_name: t for t in connector.list_tables()}
    finally:
        connector.close()


def rejected(sandboxes: Sandboxes, tmp_path: Path, name: str, content: bytes | None = None) -> str:
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, upload(tmp_path, name, content), name)
    assert caught.value.hint
    return caught.value.message


# -- each format -------------------------------------------------------------------------------


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


def make_sqlite(path: Path) -> Path:
    with closing(sqlite3.connect(path)) as con:
        con.executescript(
            """
            CREATE TABLE "Customers" (id INTEGER PRIMARY KEY, name TEXT, joined DATE,
                                      score REAL, note);
            INSERT INTO "Customers" VALUES (1, 'Ada', '2026-01-05', 4.5, 7),
                                         (2, 'Grace', '2026-02-11', 3, 'vip'),
                                         (3, 'Linus', NULL, NULL, x'00ff');
            CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, total NUMERIC,
                                 placed_at DATETIME);
            INSERT INTO orders VALUES (10, 1, 19.5, '2026-03-01 10:00:00'),
                                      (11, 1, 5, '2026-03-02 11:30:00'),
                                      (12, 2, 42, 'not a time');
            CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 10;
            CREATE TRIGGER log_orders AFTER INSERT ON orders BEGIN
                DELETE FROM "Customers";
            END;
            """
        )
        con.commit()
    return path


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


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_broken_csv_names_the_line(sandboxes: Sandboxes, tmp_path: Path) -> None:
    message = rejected(sandboxes, tmp_path, "broken.csv")
    assert message == (
        "could not read broken.csv as CSV: line 3 has 4 fields but the header has 2 "
        "(separated by commas)."
    )
    assert not sandboxes.exists(THREAD)
    assert not sandboxes.directory(THREAD).exists(), "a refused first file leaves nothing"


def test_binary_file_named_csv(sandboxes: Sandboxes, tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    message = rejected(sandboxes, tmp_path, "chart.csv", png)
    assert message == "could not read chart.csv as CSV: it holds binary data, not text."


def test_other_kinds_of_file(sandboxes: Sandboxes, tmp_path: Path) -> None:
    xlsx = b"PK\x03\x04" + b"\x00" * 200
    assert rejected(sandboxes, tmp_path, "report.xlsx", xlsx) == (
        "report.xlsx is not a CSV, Parquet, JSON or SQLite file."
    )
    assert rejected(sandboxes, tmp_path, "notes", b"just some text\n") == (
        "notes is not a CSV, Parquet, JSON or SQLite file."
    )


@pytest.mark.slow
def test_files_that_do_not_hold_what_their_name_says(sandboxes: Sandboxes, tmp_path: Path) -> None:
    parquet = rejected(sandboxes, tmp_path, "data.parquet", b"id,name\n1,x\n")
    assert parquet.startswith("could not read data.parquet as Parquet: ")
    json_ = rejected(sandboxes, tmp_path, "data.json", b'{"a": 1,,}')
    assert json_.startswith("could not read data.json as JSON: ")
    db = rejected(sandboxes, tmp_path, "data.sqlite", b"not a database at all" * 100)
    assert db == "could not read data.sqlite as SQLite: file is not a database"
    assert rejected(sandboxes, tmp_path, "blank.csv", b"") == "blank.csv is empty."
    assert not sandboxes.directory(THREAD).exists()


@pytest.mark.slow
def test_magic_bytes_win_over_the_name(sandboxes: Sandboxes, tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "export")
    loaded = sandboxes.load(THREAD, db, "export")  # no extension: read as what it is
    assert [t.name for t in loaded] == ["customers", "orders"]


def test_oversized_file(tmp_path: Path) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_file_bytes=200))
    message = rejected(sandboxes, tmp_path, "sales.csv")
    assert message == "sales.csv is 317 bytes; the limit is 200 bytes."


@pytest.mark.slow
def test_row_limit_counts_every_table_of_the_thread(tmp_path: Path, query) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_rows=10))
    load(sandboxes, tmp_path, "sales.csv")  # 8 rows
    with pytest.raises(FileRejected) as caught:
        load(sandboxes, tmp_path, "events.ndjson")  # 3 more
    assert caught.value.message == (
        "events.ndjson has more rows than fit: a conversation holds at most 10 rows in all "
        "and 8 are taken."
    )
    assert set(tables(sandboxes)) == {"sales"}, "the refused file left no table behind"
    load(sandboxes, tmp_path, "budget.json")  # 2 more: fits
    assert set(tables(sandboxes)) == {"sales", "budget"}


@pytest.mark.slow
def test_table_limit(tmp_path: Path) -> None:
    sandboxes = Sandboxes(tmp_path / "sb", SandboxLimits(max_tables=2))
    load(sandboxes, tmp_path, "sales.csv")
    with pytest.raises(FileRejected) as caught:
        sandboxes.load(THREAD, make_sqlite(tmp_path / "crm.sqlite"), "crm.sqlite")
    assert caught.value.message == (
        "crm.sqlite would add 2 tables, but this conversation has room for 1 more (at most 2)."
    )
    assert set(tables(sandboxes)) == {"sales"}


# -- names ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_unicode_file_and_column_names(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    [loaded] = load(sandboxes, tmp_path, "Umsätze Größe 2024.csv")
    assert loaded.name == "umsatze_grosse_2024"
    table = tables(sandboxes)[loaded.name]
    assert [c.name for c in table.columns] == ["stadt", "strasse", "grosse"]
    assert table.columns[1].description == 'Column "Straße" of the file Umsätze Größe 2024.csv.'
    assert query("SELECT stadt FROM umsatze_grosse_2024 WHERE grosse > 10") == [("München",)]
    csv = "日付,売上\n2026-01-01,5\n".encode()
    [cjk] = sandboxes.load(THREAD, upload(tmp_path, "売上.csv", csv), "売上.csv")
    assert cjk.name == "file"
    assert [c.name for c in tables(sandboxes)["file"].columns] == ["column", "column_2"]


@pytest.mark.slow
def test_name_collisions(sandboxes: Sandboxes, tmp_path: Path) -> None:
    assert [t.name for t in load(sandboxes, tmp_path, "sales.csv")] == ["sales"]
    assert [t.name for t in load(sandboxes, tmp_path, "sales.csv")] == ["sales_2"]
    content = b"Amount,amount ,select,2024\n1,2,3,4\n"
    [odd] = sandboxes.load(THREAD, upload(tmp_path, "Sales.csv", content), "Sales.csv")
    assert odd.name == "sales_3"
    columns = [c.name for c in tables(sandboxes)["sales_3"].columns]
    # DuckDB tells duplicate headers apart itself ("amount_1"), ignoring case
    assert columns == ["amount", "amount_1", "select_", "column_2024"]
    [year] = sandboxes.load(THREAD, upload(tmp_path, "2024.csv", b"a\n1\n"), "2024.csv")
    assert year.name == "file_2024"


def test_identifier() -> None:
    assert identifier("Order Date", fallback="column") == "order_date"
    assert identifier("  --Net € (EUR)--  ", fallback="column") == "net_eur"
    assert identifier("Ærø Œuvre", fallback="file") == "aero_oeuvre"
    assert identifier("order", fallback="column", reserved={"order"}) == "order_"
    # words the gate's parser (sqlglot) takes for keywords
    assert identifier("Map", fallback="column") == "map_"
    assert identifier("values", fallback="column") == "values_"
    assert identifier("date", fallback="column") == "date"
    assert identifier("9lives", fallback="file") == "file_9lives"
    assert identifier("🙂", fallback="file") == "file"


@pytest.mark.slow
def test_threads_have_separate_sandboxes(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    other = "T0TEST:C0FILES:1800000002.000100"
    load(sandboxes, tmp_path, "sales.csv")
    load(sandboxes, tmp_path, "budget.json", thread=other)
    assert set(tables(sandboxes)) == {"sales"}
    assert set(tables(sandboxes, other)) == {"budget"}
    assert sandboxes.directory(THREAD) != sandboxes.directory(other)
    assert THREAD not in str(sandboxes.path(THREAD)), "the path is a hash, not the thread id"


# -- read-only and deletion ------------------------------------------------------------------------


@pytest.mark.slow
def test_the_query_connection_cannot_change_the_sandbox(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    path = sandboxes.path(THREAD)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    connector = sandboxes.open(THREAD)
    try:
        for sql in (
            "INSERT INTO sales (order_id) VALUES (99)",
            "DROP TABLE sales",
            "CREATE TABLE extra AS SELECT 1 AS x",
            "COMMENT ON TABLE sales IS 'changed'",
            f"COPY sales TO '{tmp_path / 'out.csv'}'",
            f"SELECT * FROM read_csv('{secret}')",
            f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        ):
            with pytest.raises(PermissionDenied):
                connector.run(sql, max_rows=10, timeout_s=5)
    finally:
        connector.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


@pytest.mark.slow
def test_the_harmful_catalogue_sent_past_the_gate_changes_and_reveals_nothing(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    """The canary tables the catalogue targets (customers, orders, users) uploaded as CSV files
    through the loader, then every statement of the catalogue (every dialect's) and DuckDB's own
    escapes, as written and aimed at a directory holding a secret, sent straight to the
    sandbox's query connector (no gate): a write fails on the lock, not on a missing table."""
    for upload_file in canary.write_csvs(tmp_path / "incoming"):
        sandboxes.load(THREAD, upload_file, upload_file.name)
    assert set(tables(sandboxes)) == set(canary.COLUMNS)
    directory = tmp_path / "secrets"
    canary.write_secrets(directory)
    harmful = load_harmful()
    statements = canary.aimed([h.sql for h in harmful] + canary.ESCAPES["duckdb"], directory)
    db = sandboxes.path(THREAD)
    connector = sandboxes.open(THREAD)
    try:
        watched = [directory, db.parent, Path.home() / ".duckdb"]
        run = canary.contain(connector, statements, lambda: canary.duckdb_snapshot(db), watched)
    finally:
        connector.close()
    print(f"\nsandbox: {run.executed} statements, {dict(run.errors)}; ran: {run.ran}")
    assert run.executed == len(statements) > len(harmful)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    assert not run.stopped, "every statement reached DuckDB: the engine held, not a check"
    writes = [h.sql for h in harmful if h.dialect == "duckdb" and h.code in ("write", "ddl")]
    refused = {sql for sql, _ in run.blocked}  # refused as a write to the read-only file
    assert [sql for sql in writes if sql not in refused] == [
        "INSERT OR REPLACE INTO customers VALUES (1, 'a', 'b')",  # no key: the binder stops it
        # DuckDB allows data-modifying WITH only at the top level
        "SELECT * FROM (WITH d AS (UPDATE users SET password = 'x' RETURNING *) SELECT * FROM d)"
        " AS t",
        "CREATE TEMP TABLE t AS SELECT 1",  # in the run's own memory, gone when it ends
    ]


def used_at(sandboxes: Sandboxes, thread: str, when: float) -> None:
    """Pretend the thread's sandbox was last used at `when` (its record's modification time)."""
    os.utime(sandboxes.directory(thread) / "thread.json", (when, when))


@pytest.mark.slow
def test_sweep_removes_idle_sandboxes_and_keeps_a_tombstone(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    idle_thread, busy_thread = THREAD, "T0TEST:C0FILES:1800000009.000100"
    load(sandboxes, tmp_path, "sales.csv", thread=idle_thread)
    load(sandboxes, tmp_path, "budget.json", thread=busy_thread)
    start = time.time()
    used_at(sandboxes, idle_thread, start - 1000)
    used_at(sandboxes, busy_thread, start - 100)
    assert sandboxes.sweep(idle_s=2000) == []
    assert sandboxes.sweep(idle_s=500) == [idle_thread]
    assert not sandboxes.exists(idle_thread)
    assert not sandboxes.path(idle_thread).exists()
    assert sandboxes.exists(busy_thread)
    tomb = sandboxes.info(idle_thread)
    assert tomb is not None and tomb.removed_at is not None
    assert tomb.thread_id == idle_thread and tomb.file_names == ["sales.csv"]
    # a tombstone is not swept again, and is purged after tombstone_s
    assert idle_thread not in sandboxes.idle(idle_s=0)
    sandboxes.tombstone_s = 0
    assert sandboxes.sweep(idle_s=10**9) == []
    assert sandboxes.info(idle_thread) is None
    assert not sandboxes.directory(idle_thread).exists()
    assert sandboxes.exists(busy_thread)


@pytest.mark.slow
def test_touch_restarts_the_idle_clock(sandboxes: Sandboxes, tmp_path: Path) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    first = sandboxes.info(THREAD).last_used
    assert sandboxes.idle(idle_s=60, now=first + 61) == [THREAD]
    sandboxes.touch(THREAD)
    touched = sandboxes.info(THREAD).last_used
    assert touched >= first
    assert sandboxes.idle(idle_s=60, now=touched + 59) == []


@pytest.mark.slow
def test_remove_then_a_new_file_starts_afresh(sandboxes: Sandboxes, tmp_path: Path) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    assert sandboxes.remove(THREAD) is True
    assert sandboxes.remove(THREAD) is False
    assert sandboxes.info(THREAD).removed_at is not None
    load(sandboxes, tmp_path, "budget.json")
    info = sandboxes.info(THREAD)
    assert info.removed_at is None and info.file_names == ["budget.json"]
    assert set(tables(sandboxes)) == {"budget"}


def test_staging_directories_are_removed_after_use_or_a_crash(sandboxes: Sandboxes) -> None:
    with sandboxes.staging() as directory:
        (directory / "upload.csv").write_text("a\n1\n")
        assert directory.parent == sandboxes.root
    assert not directory.exists()
    with sandboxes.staging() as left:  # as if the process died mid-download
        shutil.copytree(left, sandboxes.root / (left.name + "-crashed"))
    crashed = sandboxes.root / (left.name + "-crashed")
    sandboxes.purge()
    assert crashed.exists(), "a download may still be running"
    old = time.time() - 7200
    os.utime(crashed, (old, old))
    sandboxes.purge()
    assert not crashed.exists()

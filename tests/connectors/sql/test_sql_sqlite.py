"""SqlConnector on SQLite files: the shared contract, and the authorizer's refusals."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import PermissionDenied, QueryFailed, WarehouseUnavailable
from connectors.sql.connector import SqlConnector
from tests.connectors.sql.sql_contract import SqlConnectorContract
from tests.support.sql_fixtures import EMPLOYEES, Sample, sqlite_sample


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sample]:
    with sqlite_sample(tmp_path_factory.mktemp("sqlite")) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def connector(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url)
    yield connector
    connector.close()


class TestSQLite(SqlConnectorContract):
    pass


#: SQLite-specific ways to write, reach other files or change the connection; `{d}` is the
#: sample's folder.
SQLITE_REFUSALS = {
    "attach_new_file": "ATTACH '{d}/new.db' AS x",
    "attach_uri_rwc": "ATTACH 'file:{d}/new2.db?mode=rwc' AS y",
    "temp_table": "CREATE TEMP TABLE t (a INTEGER)",
    "temp_view": "CREATE TEMP VIEW v AS SELECT 1",
    "temp_trigger": "CREATE TEMP TRIGGER tr AFTER INSERT ON employees BEGIN SELECT 1; END",
    "create_index": "CREATE INDEX main.ix_last ON employees (last_name)",
    "virtual_table": "CREATE VIRTUAL TABLE docs USING fts5(body)",
    "replace": "REPLACE INTO departments VALUES ('d001', 'Gone')",
    "insert_returning": "INSERT INTO departments VALUES ('d998', 'x') RETURNING *",
    "pragma_user_version": "PRAGMA user_version = 7",
    "pragma_writable_schema": "PRAGMA writable_schema = ON",
    "pragma_query_only_off": "PRAGMA query_only = OFF",
    "pragma_journal_mode": "PRAGMA journal_mode = DELETE",
    "pragma_table_function": "SELECT * FROM pragma_table_info('employees')",
    "load_extension": "SELECT load_extension('{d}/evil.so')",
    "fts3_tokenizer": "SELECT fts3_tokenizer('simple')",
    "vacuum": "VACUUM",
    "vacuum_into": "VACUUM INTO '{d}/copy.db'",
    "reindex": "REINDEX",
    "analyze": "ANALYZE",
    "begin": "BEGIN IMMEDIATE",
    "savepoint": "SAVEPOINT s1",
    "detach": "DETACH DATABASE main",
}


@pytest.mark.parametrize("kind", list(SQLITE_REFUSALS))
def test_sqlite_refusals(sample: Sample, connector: SqlConnector, kind: str) -> None:
    folder = sample.extra["path"].parent
    before = sample.fingerprint()
    with pytest.raises(PermissionDenied) as caught:
        connector.run(SQLITE_REFUSALS[kind].format(d=folder), max_rows=10, timeout_s=5)
    assert "authoriz" in caught.value.engine_message
    assert sample.fingerprint() == before  # no new file in the folder, the file unchanged


def test_attach_then_create_makes_no_file(sample: Sample, tmp_path: Path) -> None:
    """The platform-notes trap: `mode=ro` alone lets ATTACH + CREATE TABLE create a file."""
    connector = SqlConnector(sample.url, pool_size=1)  # one connection: both on the same one
    try:
        with pytest.raises(PermissionDenied):
            connector.run(f"ATTACH '{tmp_path}/new.db' AS x", max_rows=1, timeout_s=5)
        with pytest.raises(QueryFailed, match="unknown database x"):
            connector.run("CREATE TABLE x.t (a INTEGER)", max_rows=1, timeout_s=5)
    finally:
        connector.close()
    assert list(tmp_path.iterdir()) == []


def test_views_run_with_the_files_functions_but_never_those_that_reach_outside(
    tmp_path: Path,
) -> None:
    """A warehouse file's views may use SQLite's JSON functions (not marked innocuous before
    SQLite 3.45, so `trusted_schema` stays on for the operator's own file), while a view that
    calls `load_extension` or `fts3_tokenizer` is refused (SQLite lets only a query itself call
    them, and the authorizer refuses the query too)."""
    path = tmp_path / "views.db"
    with closing(sqlite3.connect(path)) as con:
        con.execute("CREATE TABLE t (a INTEGER, doc TEXT)")
        con.execute("""INSERT INTO t (a, doc) VALUES (1, '{"k": "v"}')""")
        con.execute("CREATE VIEW j AS SELECT a, json_extract(doc, '$.k') AS k FROM t")
        con.execute("CREATE VIEW lib AS SELECT a, load_extension('/tmp/x') AS x FROM t")
        con.execute("CREATE VIEW tok AS SELECT a, fts3_tokenizer('simple') AS x FROM t")
        con.execute("CREATE VIEW w AS SELECT a FROM lib")
        con.commit()
    connector = SqlConnector(f"sqlite:///{path}")
    try:
        assert connector.run("SELECT a, k FROM j", max_rows=1, timeout_s=5).rows == [(1, "v")]
        for sql in ("SELECT x FROM lib", "SELECT x FROM tok", "SELECT a FROM w"):
            with pytest.raises(QueryFailed, match=r"unsafe use of (load_extension|fts3_tokenizer)"):
                connector.run(sql, max_rows=1, timeout_s=5)
        for sql in ("SELECT load_extension('/tmp/x')", "SELECT fts3_tokenizer('simple')"):
            with pytest.raises(PermissionDenied):
                connector.run(sql, max_rows=1, timeout_s=5)
    finally:
        connector.close()


def test_introspection_pragmas_are_allowed(connector: SqlConnector) -> None:
    result = connector.run("PRAGMA table_info(employees)", max_rows=10, timeout_s=5)
    assert [row[1] for row in result.rows][:2] == ["emp_no", "first_name"]


def test_values_are_sqlite_values(sample: Sample, connector: SqlConnector) -> None:
    result = connector.run(
        "SELECT emp_no, hire_date FROM employees ORDER BY emp_no", max_rows=1, timeout_s=5
    )
    assert result.rows == [(EMPLOYEES[0][0], EMPLOYEES[0][3].isoformat())]
    assert result.column_types == []  # sqlite3 reports no result types


def test_recursive_ctes_are_allowed(connector: SqlConnector) -> None:
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 500)"
        " SELECT n FROM r"
    )
    result = connector.run(sql, max_rows=3, timeout_s=5)
    assert (result.rows, result.total_rows) == ([(1,), (2,), (3,)], 500)


# -- opening -----------------------------------------------------------------------------------


def test_missing_file_is_unavailable_and_not_created(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(f"sqlite:///{tmp_path}/missing.db")
    assert "missing.db" in caught.value.message
    assert "sqlite:///" in caught.value.hint
    assert list(tmp_path.iterdir()) == []


def test_directory_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable):
        SqlConnector(f"sqlite:///{tmp_path}")


def test_file_that_is_not_sqlite_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 1000)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(f"sqlite:///{path}")
    assert "not a database" in caught.value.engine_message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file:x.db?mode=rw"])
def test_memory_and_uri_forms_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="file path"):
        SqlConnector(url)


def test_factory_opens_a_sqlite_url(sample: Sample, tmp_path: Path) -> None:
    connector = open_connector(sample.url, data_dir=tmp_path)
    try:
        assert isinstance(connector, SqlConnector)
        assert connector.describe("employees").name == "main.employees"
    finally:
        connector.close()
    assert list(tmp_path.iterdir()) == []

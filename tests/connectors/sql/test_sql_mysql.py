"""SqlConnector on MySQL/MariaDB: the shared contract, MySQL's own ways to write or reach the
server, the refusal of logins with server-wide privileges, and connection failures."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryFailed,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.sql.connector import SqlConnector
from tests.connectors.sql.sql_contract import SqlConnectorContract
from tests.support.sql_fixtures import (
    EMPLOYEES,
    HOST,
    MYSQL_PORT,
    SALARIES,
    Sample,
    closed_port,
    mysql_connect,
    mysql_sample,
)


@pytest.fixture(scope="module")
def sample() -> Iterator[Sample]:
    with mysql_sample() as loaded:
        yield loaded


@pytest.fixture(scope="module")
def connector(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url)
    yield connector
    connector.close()


class TestMySQL(SqlConnectorContract):
    pass


def test_names_are_database_dot_table(sample: Sample, connector: SqlConnector) -> None:
    assert {t.name for t in connector.list_tables()} >= {f"{sample.schema}.employees"}
    view = connector.describe("current_salaries")
    assert view.description == ""  # MySQL reports 'VIEW' as a view's comment


def test_values_and_types(sample: Sample, connector: SqlConnector) -> None:
    s = sample.schema
    result = connector.run(
        f"SELECT e.emp_no, e.hire_date, s.amount FROM {s}.employees e"
        f" JOIN {s}.salaries s USING (emp_no) ORDER BY e.emp_no, s.from_date",
        max_rows=1,
        timeout_s=5,
    )
    assert result.rows == [(EMPLOYEES[0][0], EMPLOYEES[0][3], SALARIES[0][1])]
    assert isinstance(result.rows[0][1], date) and isinstance(result.rows[0][2], Decimal)
    assert result.column_types == ["LONG", "DATE", "NEWDECIMAL"]


OUTFILE = Path(f"/tmp/querybot_out_{uuid.uuid4().hex[:8]}.txt")

#: MySQL's ways to write, reach the server's files or change the server, with the error each
#: must raise.
MYSQL_REFUSALS: dict[str, tuple[str, type[ConnectorError]]] = {
    "temp_table": ("CREATE TEMPORARY TABLE t (a INTEGER)", PermissionDenied),
    "create_index": ("CREATE INDEX ix_last ON {s}.employees (last_name)", PermissionDenied),
    "truncate": ("TRUNCATE TABLE {s}.salaries", PermissionDenied),
    "replace": ("REPLACE INTO {s}.departments VALUES ('d001', 'Gone')", PermissionDenied),
    "rename": ("RENAME TABLE {s}.salaries TO {s}.pay", PermissionDenied),
    "into_outfile": (f"SELECT * FROM {{s}}.employees INTO OUTFILE '{OUTFILE}'", PermissionDenied),
    "into_dumpfile": (f"SELECT 'x' INTO DUMPFILE '{OUTFILE}'", PermissionDenied),
    "load_data": ("LOAD DATA INFILE '/etc/hostname' INTO TABLE {s}.departments", PermissionDenied),
    # PyMySQL leaves LOCAL INFILE off: the server is told the client will not send files.
    "load_data_local": (
        "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE {s}.departments",
        ConnectorError,
    ),
    "create_database": ("CREATE DATABASE querybot_stolen", PermissionDenied),
    "create_user": ("CREATE USER 'querybot_stolen'@'%'", PermissionDenied),
    "set_global": ("SET GLOBAL max_connections = 10", PermissionDenied),
    "shutdown": ("SHUTDOWN", PermissionDenied),
}


@pytest.mark.parametrize("kind", list(MYSQL_REFUSALS))
def test_mysql_refusals(sample: Sample, connector: SqlConnector, kind: str) -> None:
    sql, error = MYSQL_REFUSALS[kind]
    before = sample.fingerprint()
    with pytest.raises(error) as caught:
        connector.run(sql.format(s=sample.schema), max_rows=10, timeout_s=5)
    assert caught.value.engine_message
    assert sample.fingerprint() == before
    assert not OUTFILE.exists()


def test_load_file_reads_nothing(connector: SqlConnector) -> None:
    result = connector.run("SELECT LOAD_FILE('/etc/hostname')", max_rows=1, timeout_s=5)
    assert result.rows == [(None,)]


@pytest.mark.parametrize(
    "first", ["SET SESSION TRANSACTION READ WRITE", "COMMIT", "SET SESSION max_statement_time = 0"]
)
def test_session_changes_do_not_outlive_their_run(sample: Sample, first: str) -> None:
    """DDL commits implicitly and then runs outside the read-only transaction: it must meet a
    read-only session too, whatever an earlier run on the same connection set."""
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        connector.run(first, max_rows=1, timeout_s=5)
        before = sample.fingerprint()
        for sql in (
            "CREATE TABLE {s}.stolen (x INTEGER)",
            "INSERT INTO {s}.departments VALUES ('d997', 'x')",
        ):
            with pytest.raises(PermissionDenied):
                connector.run(sql.format(s=sample.schema), max_rows=1, timeout_s=5)
        assert sample.fingerprint() == before
        with pytest.raises(ConnectorError):  # still time-limited
            connector.run(sample.slow_sql, max_rows=1, timeout_s=0.3)
    finally:
        connector.close()


@pytest.mark.parametrize(
    ("first", "check", "clean"),
    [
        ("SELECT GET_LOCK('{name}', 1)", "SELECT IS_USED_LOCK('{name}')", (None,)),
        ("SET @stolen = 'x'", "SELECT @stolen", (None,)),
        ("SELECT @stolen := 'x'", "SELECT @stolen", (None,)),
        (
            "SET SESSION sql_mode = 'ANSI_QUOTES'",
            "SELECT @@session.sql_mode = @@global.sql_mode",
            (1,),
        ),
        ("PREPARE s FROM 'SELECT 1'", "SELECT 1 FROM {name}.departments LIMIT 1", (1,)),
        ("USE information_schema", "SELECT DATABASE()", ("{name}",)),
    ],
)
def test_session_state_does_not_outlive_its_run(
    sample: Sample, first: str, check: str, clean: tuple[object, ...]
) -> None:
    """Locks, variables, settings, prepared statements and the default database one run left
    in its session are gone when the pooled connection serves the next run."""
    name = sample.extra["name"]
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        with contextlib.suppress(ConnectorError):
            connector.run(first.format(name=name), max_rows=1, timeout_s=5)
        result = connector.run(check.format(name=name), max_rows=1, timeout_s=5)
        assert result.rows == [
            tuple(str(v).format(name=name) if isinstance(v, str) else v for v in clean)
        ]
        if first.startswith("PREPARE"):
            with pytest.raises(QueryFailed, match="Unknown prepared statement"):
                connector.run("EXECUTE s", max_rows=1, timeout_s=5)
    finally:
        connector.close()


# -- logins ------------------------------------------------------------------------------------


def test_root_is_refused(sample: Sample) -> None:
    with pytest.raises(PermissionDenied, match="ALL PRIVILEGES") as caught:
        SqlConnector(f"mysql://root@{HOST}:{MYSQL_PORT}/{sample.schema}")
    assert "GRANT SELECT" in caught.value.hint


@pytest.mark.parametrize(
    ("grant", "through_role"),
    [("FILE", False), ("SUPER", False), ("SHUTDOWN", False), ("FILE", True)],
)
def test_users_with_server_privileges_are_refused(
    sample: Sample, grant: str, through_role: bool
) -> None:
    user = f"{sample.schema}_{uuid.uuid4().hex[:6]}"
    admin = mysql_connect()
    cur = admin.cursor()
    try:
        cur.execute(f"CREATE USER '{user}'@'%'")
        cur.execute(f"GRANT SELECT ON {sample.schema}.* TO '{user}'@'%'")
        if through_role:  # a role the user may enable with SET ROLE at any time
            cur.execute(f"CREATE ROLE {user}_r")
            cur.execute(f"GRANT {grant} ON *.* TO {user}_r")
            cur.execute(f"GRANT {user}_r TO '{user}'@'%'")
        else:
            cur.execute(f"GRANT {grant} ON *.* TO '{user}'@'%'")
        with pytest.raises(PermissionDenied, match=grant):
            SqlConnector(f"mysql://{user}@{HOST}:{MYSQL_PORT}/{sample.schema}")
    finally:
        cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        cur.execute(f"DROP ROLE IF EXISTS {user}_r")
        admin.close()


@pytest.mark.parametrize(
    ("grant", "on", "shown"),
    [
        ("ALL PRIVILEGES", "{db}.*", "ALL PRIVILEGES ON {db}.*"),
        ("CREATE", "{db}.*", "CREATE ON {db}.*"),
        ("INSERT", "{db}.departments", "INSERT ON {db}.departments"),
        ("UPDATE (dept_name)", "{db}.departments", "UPDATE ON {db}.departments"),
    ],
)
def test_users_that_may_write_are_refused(sample: Sample, grant: str, on: str, shown: str) -> None:
    """With CREATE, `SET STATEMENT tx_read_only=0 FOR CREATE TABLE ...` would escape the
    read-only transaction (MariaDB), so a login that may write is refused at the door."""
    user = f"{sample.schema}_{uuid.uuid4().hex[:6]}"
    admin = mysql_connect()
    cur = admin.cursor()
    try:
        cur.execute(f"CREATE USER '{user}'@'%'")
        cur.execute(f"GRANT SELECT ON {sample.schema}.* TO '{user}'@'%'")
        cur.execute(f"GRANT {grant} ON {on.format(db=sample.schema)} TO '{user}'@'%'")
        with pytest.raises(PermissionDenied) as caught:
            SqlConnector(f"mysql://{user}@{HOST}:{MYSQL_PORT}/{sample.schema}")
        assert shown.format(db=sample.schema) in caught.value.message
        assert "GRANT SELECT" in caught.value.hint
    finally:
        cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        admin.close()


def test_set_statement_cannot_lift_the_read_only_transaction(sample: Sample) -> None:
    """What a SELECT-only login meets when it tries MariaDB's per-statement override."""
    before = sample.fingerprint()
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        for sql in (
            "SET STATEMENT tx_read_only=0 FOR CREATE TABLE {s}.stolen (a INT)",
            "SET STATEMENT tx_read_only=0 FOR DROP TABLE {s}.salaries",
            "SET STATEMENT tx_read_only=0 FOR INSERT INTO {s}.departments VALUES ('d998', 'x')",
        ):
            with pytest.raises(PermissionDenied):
                connector.run(sql.format(s=sample.schema), max_rows=1, timeout_s=5)
    finally:
        connector.close()
    assert sample.fingerprint() == before


@pytest.mark.slow
def test_a_lifted_time_limit_meets_the_watchdog(sample: Sample) -> None:
    """`SET STATEMENT max_statement_time=0 FOR ...` switches MariaDB's limit off for one
    statement: the connector's watchdog stops it anyway, as a timeout, and the pool recovers."""
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        with pytest.raises(QueryTimeout):
            connector.run(
                "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(30)",
                max_rows=1,
                timeout_s=0.5,
            )
        assert connector.run("SELECT 1", max_rows=1, timeout_s=5).rows == [(1,)]
    finally:
        connector.close()


# -- connecting --------------------------------------------------------------------------------


def test_connection_refused_is_unavailable_with_a_hint() -> None:
    port = closed_port()
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(f"mysql://someone:s3cret@{HOST}:{port}/db")
    error = caught.value
    assert f"{HOST}:{port}" in error.hint
    assert "'someone'" in error.hint
    assert all("s3cret" not in text for text in (error.message, error.hint, error.engine_message))


@pytest.mark.parametrize("part", ["database", "user"])
def test_unknown_database_or_user_is_unavailable(sample: Sample, part: str) -> None:
    name = sample.schema
    url = (
        f"mysql://{name}@{HOST}:{MYSQL_PORT}/no_such_database"
        if part == "database"
        else f"mysql://no_such_user@{HOST}:{MYSQL_PORT}/{name}"
    )
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(url)
    assert "Access denied" in caught.value.engine_message


@pytest.mark.parametrize("scheme", ["mysql", "mariadb", "mysql+pymysql"])
def test_factory_and_url_schemes(sample: Sample, tmp_path: Path, scheme: str) -> None:
    url = sample.url.replace("mysql://", f"{scheme}://")
    connector = SqlConnector(url) if "+" in scheme else open_connector(url, data_dir=tmp_path)
    try:
        assert isinstance(connector, SqlConnector)
        assert connector.name == "mysql"
        result = connector.run(
            f"SELECT count(*) FROM {sample.schema}.employees", max_rows=1, timeout_s=5
        )
        assert result.rows == [(len(EMPLOYEES),)]
    finally:
        connector.close()

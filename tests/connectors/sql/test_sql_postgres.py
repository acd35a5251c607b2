"""SqlConnector on PostgreSQL: the shared contract, PostgreSQL's own ways to write or read the
server, the refusal of logins a read-only transaction cannot hold, and connection failures."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import ConnectorError, PermissionDenied, WarehouseUnavailable
from connectors.sql.connector import SqlConnector
from tests.connectors.sql.sql_contract import SqlConnectorContract
from tests.support.sql_fixtures import (
    EMPLOYEES,
    HOST,
    PG_PORT,
    SALARIES,
    Sample,
    bound_temp_files,
    closed_port,
    pg_connect,
    postgres_sample,
)


@pytest.fixture(scope="module")
def sample() -> Iterator[Sample]:
    with postgres_sample() as loaded:
        yield loaded


@pytest.fixture(scope="module")
def connector(sample: Sample) -> Iterator[SqlConnector]:
    connector = SqlConnector(sample.url)
    yield connector
    connector.close()


class TestPostgres(SqlConnectorContract):
    pass


def test_names_are_schema_dot_table_and_ungranted_schemas_are_hidden(
    connector: SqlConnector,
) -> None:
    names = {t.name for t in connector.list_tables()}
    assert "hr.employees" in names
    assert not any(name.startswith("secret.") for name in names)


def test_values_and_types(connector: SqlConnector) -> None:
    result = connector.run(
        "SELECT e.emp_no, e.hire_date, s.amount FROM hr.employees e"
        " JOIN hr.salaries s USING (emp_no) ORDER BY e.emp_no, s.from_date",
        max_rows=1,
        timeout_s=5,
    )
    assert result.rows == [(EMPLOYEES[0][0], EMPLOYEES[0][3], SALARIES[0][1])]
    assert isinstance(result.rows[0][1], date) and isinstance(result.rows[0][2], Decimal)
    assert result.column_types == ["int4", "date", "numeric"]


COPY_TARGET = Path(f"/tmp/querybot_copy_{uuid.uuid4().hex[:8]}.csv")

#: PostgreSQL's ways to write, or to reach the server's files, from one statement.
PG_REFUSALS = {
    "temp_table": "CREATE TEMP TABLE t (a INTEGER)",
    "create_index": "CREATE INDEX ix_last ON hr.employees (last_name)",
    "truncate": "TRUNCATE hr.salaries",
    "nextval": "SELECT nextval('hr.ticket_seq')",
    "setval": "SELECT setval('hr.ticket_seq', 99)",
    "delete_in_cte": "WITH gone AS (DELETE FROM hr.salaries RETURNING *) SELECT count(*) FROM gone",
    "select_for_update": "SELECT * FROM hr.salaries FOR UPDATE",
    "do_block": "DO $$ BEGIN INSERT INTO hr.departments VALUES ('d998', 'x'); END $$",
    "comment": "COMMENT ON TABLE hr.salaries IS 'changed'",
    "grant": "GRANT SELECT ON hr.salaries TO PUBLIC",
    "copy_to_file": f"COPY hr.employees TO '{COPY_TARGET}'",
    "copy_to_program": "COPY hr.employees TO PROGRAM 'cat > /dev/null'",
    "copy_from_file": "COPY hr.departments FROM '/etc/hostname'",
    "pg_read_file": "SELECT pg_read_file('/etc/hostname')",
    "pg_ls_dir": "SELECT pg_ls_dir('/')",
    "lo_import": "SELECT lo_import('/etc/hostname')",
    "set_role": "SET ROLE postgres",
    "role_via_set_config": "SELECT set_config('role', 'postgres', false)",
}


@pytest.mark.parametrize("kind", list(PG_REFUSALS))
def test_postgres_refusals(sample: Sample, connector: SqlConnector, kind: str) -> None:
    before = sample.fingerprint()
    with pytest.raises(PermissionDenied) as caught:
        connector.run(PG_REFUSALS[kind], max_rows=10, timeout_s=5)
    assert caught.value.engine_message
    assert sample.fingerprint() == before
    assert not COPY_TARGET.exists()


@pytest.mark.parametrize(
    "first",
    [
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "COMMIT",
        "SET statement_timeout = 0",
    ],
)
def test_session_changes_do_not_outlive_their_run(sample: Sample, first: str) -> None:
    """Whatever one run does to its session, the next run on the same connection is read-only
    and time-limited again."""
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        with contextlib.suppress(ConnectorError):  # some are refused: the next run matters
            connector.run(first, max_rows=1, timeout_s=5)
        with pytest.raises(PermissionDenied):
            connector.run(
                "INSERT INTO hr.departments VALUES ('d997', 'x')", max_rows=1, timeout_s=5
            )
        settings = connector.run(
            "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout')",
            max_rows=1,
            timeout_s=5,
        )
        assert settings.rows == [("on", "5s")]
    finally:
        connector.close()


def test_advisory_locks_do_not_outlive_their_run(sample: Sample) -> None:
    connector = SqlConnector(sample.url, pool_size=1)
    try:
        connector.run("SELECT pg_advisory_lock(42)", max_rows=1, timeout_s=5)
        held = connector.run(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
            max_rows=1,
            timeout_s=5,
        )
        assert held.rows == [(0,)]
    finally:
        connector.close()


# -- logins ------------------------------------------------------------------------------------


def test_superuser_login_is_refused(sample: Sample) -> None:
    with pytest.raises(PermissionDenied) as caught:
        SqlConnector(f"postgresql://postgres@{HOST}:{PG_PORT}/{sample.extra['name']}")
    assert "'postgres': it is a superuser, which" in caught.value.message
    assert "can become" not in caught.value.message
    assert "pg_read_server_files" not in caught.value.message  # implied, not listed
    assert "not a superuser" in caught.value.hint and "pg_read_all_data" in caught.value.hint


def test_a_login_that_can_set_role_to_a_superuser_is_refused_naming_that_role(
    sample: Sample,
) -> None:
    login = f"{sample.extra['name']}_{uuid.uuid4().hex[:6]}"
    admin = f"{login}_admin"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {admin} NOLOGIN SUPERUSER")
        server.execute(f"CREATE ROLE {login} LOGIN IN ROLE {admin}")
        bound_temp_files(server, login)
        try:
            with pytest.raises(PermissionDenied) as caught:
                SqlConnector(f"postgresql://{login}@{HOST}:{PG_PORT}/{sample.extra['name']}")
        finally:
            server.execute(f"DROP ROLE {login}")
            server.execute(f"DROP ROLE {admin}")
    message = caught.value.message
    assert f"{login!r}: it can SET ROLE {admin}, a superuser." in message
    assert "it is a superuser" not in message and "can become" not in message
    assert f"REVOKE {admin} FROM {login};" in caught.value.hint


@pytest.mark.parametrize(
    ("role", "inherit"),
    [
        ("pg_read_server_files", True),
        ("pg_write_server_files", True),
        ("pg_execute_server_program", True),
        ("pg_write_server_files", False),  # NOINHERIT: it could still SET ROLE to it
    ],
)
def test_logins_that_can_reach_server_files_are_refused(
    sample: Sample, role: str, inherit: bool
) -> None:
    login = f"{sample.extra['name']}_{uuid.uuid4().hex[:6]}"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {login} LOGIN {'INHERIT' if inherit else 'NOINHERIT'}")
        bound_temp_files(server, login)
        try:
            server.execute(f"GRANT {role} TO {login}")
            with pytest.raises(PermissionDenied, match=role) as caught:
                SqlConnector(f"postgresql://{login}@{HOST}:{PG_PORT}/{sample.extra['name']}")
            # INHERIT: it holds the role's privileges; NOINHERIT: it may only SET ROLE to it
            how = "it holds the privileges of" if inherit else "it can SET ROLE"
            assert f"{login!r}: {how} {role} (" in caught.value.message
            assert "superuser" not in caught.value.message
            assert f"REVOKE {role} FROM {login};" in caught.value.hint
        finally:
            server.execute(f"DROP ROLE {login}")


@pytest.mark.parametrize("function", ["pg_read_file(text)", "lo_export(oid, text)"])
def test_logins_granted_a_server_file_function_are_refused(sample: Sample, function: str) -> None:
    login = f"{sample.extra['name']}_{uuid.uuid4().hex[:6]}"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {login} LOGIN")
        bound_temp_files(server, login)
    try:
        with pg_connect(sample.extra["name"]) as admin:  # EXECUTE grants are per database
            admin.execute(f"GRANT EXECUTE ON FUNCTION pg_catalog.{function} TO {login}")
            with pytest.raises(PermissionDenied, match=function.partition("(")[0]) as caught:
                SqlConnector(f"postgresql://{login}@{HOST}:{PG_PORT}/{sample.extra['name']}")
            assert "REVOKE EXECUTE" in caught.value.hint
            admin.execute(f"REVOKE EXECUTE ON FUNCTION pg_catalog.{function} FROM {login}")
    finally:
        with pg_connect("postgres") as server:
            server.execute(f"DROP ROLE {login}")


def test_login_with_pg_read_all_data_is_accepted(sample: Sample) -> None:
    login = f"{sample.extra['name']}_{uuid.uuid4().hex[:6]}"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {login} LOGIN")
        bound_temp_files(server, login)
        try:
            server.execute(f"GRANT pg_read_all_data TO {login}")
            connector = SqlConnector(
                f"postgresql://{login}@{HOST}:{PG_PORT}/{sample.extra['name']}"
            )
            try:
                names = {t.name for t in connector.list_tables()}
                assert {"hr.employees", "secret.payroll"} <= names
            finally:
                connector.close()
        finally:
            server.execute(f"DROP ROLE {login}")


# -- connecting --------------------------------------------------------------------------------


def test_connection_refused_is_unavailable_with_a_hint() -> None:
    port = closed_port()
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(f"postgresql://someone:s3cret@{HOST}:{port}/db")
    error = caught.value
    assert f"{HOST}:{port}" in error.hint
    assert "'someone'" in error.hint
    assert all("s3cret" not in text for text in (error.message, error.hint, error.engine_message))


@pytest.mark.parametrize("part", ["database", "user"])
def test_unknown_database_or_user_is_unavailable(sample: Sample, part: str) -> None:
    name = sample.extra["name"]
    url = (
        f"postgresql://{name}@{HOST}:{PG_PORT}/no_such_database_{name}"
        if part == "database"
        else f"postgresql://no_such_user_{name}@{HOST}:{PG_PORT}/{name}"
    )
    with pytest.raises(WarehouseUnavailable) as caught:
        SqlConnector(url)
    assert f"no_such_{part}" in caught.value.engine_message


def test_factory_alias_and_explicit_driver(sample: Sample, tmp_path: Path) -> None:
    heroku_style = sample.url.replace("postgresql://", "postgres://")
    explicit = sample.url.replace("postgresql://", "postgresql+psycopg://")
    for url in (sample.url, heroku_style, explicit):
        connector = open_connector(url, data_dir=tmp_path) if url != explicit else SqlConnector(url)
        try:
            assert isinstance(connector, SqlConnector)
            assert connector.run(
                "SELECT count(*) FROM hr.employees", max_rows=1, timeout_s=5
            ).rows == [(len(EMPLOYEES),)]
        finally:
            connector.close()

"""The issue's attack statements on the real engines: each answers through the connector as the
bot's own restricted login (so the gate alone stands in the way), and the gate refuses it, with
the schema the connector lists and with no schema. A function the deployment lists runs.

PostgreSQL (127.0.0.1:5432): a throwaway database with a `secret.payroll` table the login may
not read but whose comment `obj_description` would show, and a SECURITY DEFINER function in
`public` that sums it. MariaDB (127.0.0.1:3306): a throwaway database and a SELECT-only user.
SQLite: a file in the test's directory.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.gate import GateSchema, check_sql
from connectors import open_connector
from connectors.base import Connector
from tests.support.needs import unavailable
from tests.support.sql_fixtures import bound_temp_files

COMMENT = "salaries: ceo 900"

POSTGRES_ATTACKS = (
    "SELECT obj_description(to_regclass('secret.payroll'), 'pg_class')",
    "SELECT obj_description('secret.payroll'::regclass)",
    "SELECT has_table_privilege('secret.payroll', 'select')",
    "SELECT current_setting('server_version')",
    "SELECT version()",
    "SELECT inet_server_addr()",
    "SELECT payroll_total()",  # SECURITY DEFINER: reads secret.payroll as its owner
    "SELECT user",
    "SELECT current_user",
)
MARIADB_ATTACKS = (
    "SELECT @@datadir",
    "SELECT @@hostname",
    "SELECT @@global.version",
    "SELECT version()",
    "SELECT database()",
    "SELECT user()",
    "SELECT current_user()",
    "SELECT connection_id()",
)
SQLITE_ATTACKS = (
    "SELECT sqlite_compileoption_get(0)",
    "SELECT sqlite_compileoption_used('THREADSAFE')",
    "SELECT sqlite_version()",
    "SELECT sqlite_source_id()",
)


def answer(connector: Connector, sql: str) -> object:
    """The first value the statement returns when sent straight to the connector."""
    return connector.run(sql, max_rows=10, timeout_s=10).rows[0][0]


def assert_answers_but_is_refused(connector: Connector, attacks: tuple[str, ...]) -> None:
    known = GateSchema.from_tables(connector.list_tables(), connector.dialect)
    unknown = GateSchema.from_tables([], connector.dialect)
    for sql in attacks:
        assert answer(connector, sql) not in (None, ""), f"{sql} does not answer here"
        for schema in (known, unknown):
            verdict = check_sql(sql, schema)
            assert not verdict.ok, f"the gate let {sql} through"
            assert "internal_error" not in [r.code for r in verdict.reasons]


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Connector]:
    import psycopg

    name = f"querybot_fn_{uuid.uuid4().hex[:8]}"
    reader = f"{name}_ro"
    try:
        server = psycopg.connect(host="127.0.0.1", user="postgres", autocommit=True)
    except psycopg.Error as error:
        unavailable(f"PostgreSQL at 127.0.0.1:5432 is unreachable ({error})")
    try:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {reader} LOGIN")
        bound_temp_files(server, reader)
        with psycopg.connect(
            host="127.0.0.1", user="postgres", dbname=name, autocommit=True
        ) as admin:
            admin.execute("CREATE SCHEMA secret")
            admin.execute("CREATE TABLE secret.payroll (who text, pay integer)")
            admin.execute("INSERT INTO secret.payroll VALUES ('ceo', 900)")
            admin.execute(f"COMMENT ON TABLE secret.payroll IS '{COMMENT}'")
            admin.execute(f"GRANT USAGE ON SCHEMA secret TO {reader}")  # names, not rows
            admin.execute(
                "CREATE FUNCTION public.payroll_total() RETURNS bigint LANGUAGE sql"
                " SECURITY DEFINER AS 'SELECT sum(pay) FROM secret.payroll'"
            )
            admin.execute(
                "CREATE FUNCTION public.fiscal_week(d date) RETURNS integer LANGUAGE sql"
                " IMMUTABLE AS 'SELECT extract(week FROM d + 3)::integer'"
            )
            admin.execute("CREATE TABLE public.orders (id integer, ordered_at date)")
            admin.execute("INSERT INTO public.orders VALUES (1, '2026-01-05')")
            admin.execute(f"GRANT SELECT ON public.orders TO {reader}")
        connector = open_connector(
            f"postgresql://{reader}@127.0.0.1:5432/{name}", data_dir=tmp_path
        )
        try:
            yield connector
        finally:
            connector.close()
    finally:
        server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        server.execute(f"DROP ROLE IF EXISTS {reader}")
        server.close()


@pytest.mark.slow
def test_postgres_attacks_answer_but_the_gate_refuses_them(postgres: Connector) -> None:
    comment = answer(postgres, POSTGRES_ATTACKS[0])
    assert comment == COMMENT, "the login reads the comment of a table it may not read"
    assert answer(postgres, "SELECT payroll_total()") == 900
    assert_answers_but_is_refused(postgres, POSTGRES_ATTACKS)


def test_postgres_runs_a_function_the_deployment_lists(postgres: Connector) -> None:
    sql = "SELECT id, fiscal_week(ordered_at) AS week FROM orders"
    tables = postgres.list_tables()
    refused = check_sql(sql, GateSchema.from_tables(tables, "postgres"))
    assert [r.code for r in refused.reasons] == ["unknown_function"]
    trusted = GateSchema.from_tables(tables, "postgres", functions=["public.fiscal_week"])
    qualified = check_sql(sql.replace("fiscal_week", "public.fiscal_week"), trusted)
    assert qualified.ok, qualified.reasons
    assert postgres.run(qualified.sql, max_rows=10, timeout_s=10).rows == [(1, 2)]
    bare = check_sql(sql, GateSchema.from_tables(tables, "postgres", functions=["fiscal_week"]))
    assert bare.ok, bare.reasons
    assert postgres.run(bare.sql, max_rows=10, timeout_s=10).rows == [(1, 2)]


@pytest.fixture
def mariadb(tmp_path: Path) -> Iterator[Connector]:
    import pymysql

    name = f"qb_fn_{uuid.uuid4().hex[:8]}"
    password = uuid.uuid4().hex
    try:
        root = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    except pymysql.MySQLError as error:
        unavailable(f"MariaDB at 127.0.0.1:3306 is unreachable ({error})")
    try:
        with root.cursor() as cur:
            cur.execute(f"CREATE DATABASE {name}")
            cur.execute(f"CREATE TABLE {name}.orders (id INTEGER, ordered_at DATE)")
            cur.execute(f"INSERT INTO {name}.orders VALUES (1, '2026-01-05')")
            cur.execute(f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
            cur.execute(f"GRANT SELECT ON {name}.* TO '{name}'@'%'")
        connector = open_connector(
            f"mysql://{name}:{password}@127.0.0.1:3306/{name}", data_dir=tmp_path
        )
        try:
            yield connector
        finally:
            connector.close()
    finally:
        with root.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {name}")
            cur.execute(f"DROP USER IF EXISTS '{name}'@'%'")
        root.close()


def test_mariadb_attacks_answer_but_the_gate_refuses_them(mariadb: Connector) -> None:
    assert str(answer(mariadb, "SELECT @@datadir")).startswith("/")
    assert_answers_but_is_refused(mariadb, MARIADB_ATTACKS)


def test_sqlite_attacks_answer_but_the_gate_refuses_them(tmp_path: Path) -> None:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, ordered_at TEXT)")
    connector = open_connector(f"sqlite:///{path}", data_dir=tmp_path)
    try:
        assert answer(connector, "SELECT sqlite_version()") == sqlite3.sqlite_version
        assert_answers_but_is_refused(connector, SQLITE_ATTACKS)
    finally:
        connector.close()

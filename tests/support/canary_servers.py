"""The canaries on database servers: a database with a SELECT-only login and one holding every
privilege on it, on the local MariaDB and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.canary_data import COLUMNS, MARIADB_DB, ROWS, checksum
from tests.support.canary_runs import TIMEOUT_S, Run, run_connector
from tests.support.sql_fixtures import bound_temp_files

MARIADB_USER = "querybot_gate_ro"
MARIADB_WRITER = "querybot_gate_rw"
MARIADB_PASSWORD = "canary-read-only"


class MariaDBCanary:
    """A canary database and a SELECT-only user on the local MariaDB (root, no password)."""

    CONNECTIONS = ("SqlConnector as a SELECT-only user", "root, read-only transaction")

    def __init__(self, host: str = "127.0.0.1", port: int = 3306) -> None:
        import pymysql

        self.pymysql = pymysql
        self.host, self.port = host, port
        # one test session at a time owns the canary database and user
        self.lock = pymysql.connect(host=host, port=port, user="root", password="", autocommit=True)
        with self.lock.cursor() as cur:
            cur.execute("SELECT GET_LOCK(%s, 120)", (MARIADB_DB,))
            if cur.fetchone() != (1,):
                raise pymysql.OperationalError(f"another test session holds {MARIADB_DB}")
        with self._root() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {MARIADB_DB}")
            cur.execute(f"CREATE DATABASE {MARIADB_DB}")
            for table, cols in COLUMNS.items():
                columns = ", ".join(f"{c} {t}" for c, t in cols)
                cur.execute(f"CREATE TABLE {MARIADB_DB}.{table} ({columns})")
                marks = ", ".join(["%s"] * len(cols))
                cur.executemany(f"INSERT INTO {MARIADB_DB}.{table} VALUES ({marks})", ROWS[table])
            cur.execute(f"DROP USER IF EXISTS '{MARIADB_USER}'@'%'")
            cur.execute(f"CREATE USER '{MARIADB_USER}'@'%' IDENTIFIED BY '{MARIADB_PASSWORD}'")
            cur.execute(f"GRANT SELECT ON {MARIADB_DB}.* TO '{MARIADB_USER}'@'%'")
            # Every privilege on the canary (none on the server): only the connector's
            # read-only session and transaction stand between this user and a write.
            cur.execute(f"DROP USER IF EXISTS '{MARIADB_WRITER}'@'%'")
            cur.execute(f"CREATE USER '{MARIADB_WRITER}'@'%' IDENTIFIED BY '{MARIADB_PASSWORD}'")
            cur.execute(f"GRANT ALL PRIVILEGES ON {MARIADB_DB}.* TO '{MARIADB_WRITER}'@'%'")

    @contextmanager
    def _root(self) -> Iterator[Any]:
        con = self.pymysql.connect(
            host=self.host, port=self.port, user="root", password="", autocommit=True
        )
        try:
            with con.cursor() as cur:
                yield cur
        finally:
            con.close()

    def snapshot(self) -> dict[str, object]:
        with self._root() as cur:
            cur.execute(
                "SELECT table_name, table_type FROM information_schema.tables "
                "WHERE table_schema = %s ORDER BY 1",
                (MARIADB_DB,),
            )
            names = cur.fetchall()
            sums = {}
            for name, _ in names:
                cur.execute(f"SELECT * FROM {MARIADB_DB}.{name}")
                sums[name] = checksum(cur.fetchall())
            # Other sessions create and drop their own users meanwhile: only the canary's,
            # root and the one the catalogue would create count.
            cur.execute(
                "SELECT user, host FROM mysql.user WHERE user IN (%s, %s, %s, %s) ORDER BY 1, 2",
                ("root", "evil", MARIADB_USER, MARIADB_WRITER),
            )
            users = cur.fetchall()
            cur.execute("SELECT IS_USED_LOCK('x')")  # the catalogue's GET_LOCK('x', 10)
            lock = cur.fetchall()
        return {"tables": sums, "names": names, "users": users, "lock": lock}

    def url(self, *, writer: bool = False) -> str:
        """The connector URL of the SELECT-only user, or of the user holding every privilege on
        the canary database."""
        user = MARIADB_WRITER if writer else MARIADB_USER
        return f"mysql://{user}:{MARIADB_PASSWORD}@{self.host}:{self.port}/{MARIADB_DB}"

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        """Through the connector as the SELECT-only user when `hardened`, else each statement
        in `START TRANSACTION READ ONLY` as root (who could write files and tables but for the
        gate)."""
        if hardened:
            return run_connector(self.url(), statements)
        con = self.pymysql.connect(
            host=self.host, port=self.port, user="root", password="", database=MARIADB_DB
        )
        run = Run()
        try:
            with con.cursor() as cur:
                cur.execute(f"SET SESSION max_statement_time = {TIMEOUT_S}")
                for sql in statements:
                    rows, error = None, None
                    cur.execute("START TRANSACTION READ ONLY")
                    try:
                        cur.execute(sql)
                        rows = cur.fetchmany(2000)
                    except self.pymysql.MySQLError as exc:
                        error = exc
                    con.rollback()
                    run.record(sql, rows, error)
        finally:
            con.close()
        return run

    def drop(self) -> None:
        with self._root() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {MARIADB_DB}")
            cur.execute(f"DROP USER IF EXISTS '{MARIADB_USER}'@'%'")
            cur.execute(f"DROP USER IF EXISTS '{MARIADB_WRITER}'@'%'")
        self.lock.close()  # releases the lock


class PostgresCanary:
    """A canary database on the local PostgreSQL (127.0.0.1:5432, trust) with two logins: one
    holding SELECT only (as docs/warehouses.md tells a team), one owning the canary tables and
    sequence (so only the connector's read-only transaction stands in the way of a write). Neither
    is a superuser nor may reach server files: the connector refuses such logins."""

    CONNECTIONS = ("SqlConnector as a SELECT-only login", "superuser, read-only transaction")

    def __init__(self, host: str = "127.0.0.1", port: int = 5432) -> None:
        import psycopg

        self.psycopg = psycopg
        self.host, self.port = host, port
        self.name = f"querybot_gate_canary_{uuid.uuid4().hex[:8]}"
        self.reader, self.writer = f"{self.name}_ro", f"{self.name}_rw"
        with self._connect("postgres") as server:
            server.execute(f"CREATE DATABASE {self.name}")
            server.execute(f"CREATE ROLE {self.reader} LOGIN")
            bound_temp_files(server, self.reader)
            server.execute(f"ALTER ROLE {self.reader} SET default_transaction_read_only = on")
            server.execute(f"CREATE ROLE {self.writer} LOGIN")
            bound_temp_files(server, self.writer)
        with self._connect(self.name) as admin:
            for table, cols in COLUMNS.items():
                admin.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
                with admin.cursor() as cur:
                    marks = ", ".join(["%s"] * len(cols))
                    cur.executemany(f"INSERT INTO {table} VALUES ({marks})", ROWS[table])
                admin.execute(f"ALTER TABLE {table} OWNER TO {self.writer}")
            admin.execute("CREATE SEQUENCE orders_id_seq")
            admin.execute(f"ALTER SEQUENCE orders_id_seq OWNER TO {self.writer}")
            admin.execute(f"GRANT ALL ON SCHEMA public TO {self.writer}")
            admin.execute(f"GRANT ALL ON DATABASE {self.name} TO {self.writer}")
            admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {self.reader}")

    def _connect(self, database: str, user: str = "postgres") -> Any:
        return self.psycopg.connect(
            host=self.host, port=self.port, user=user, dbname=database, autocommit=True
        )

    def url(self, *, writer: bool = False) -> str:
        login = self.writer if writer else self.reader
        return f"postgresql://{login}@{self.host}:{self.port}/{self.name}"

    def snapshot(self) -> dict[str, object]:
        """Tables, every relation, function, rule and comment in the database, the sequence,
        large objects, extensions, roles (and the postgres password) and ALTER SYSTEM settings."""
        with self._connect(self.name) as admin:

            def rows(sql: str) -> list[tuple[Any, ...]]:
                return admin.execute(sql).fetchall()

            return {
                "tables": {t: checksum(rows(f"SELECT * FROM {t}")) for t in COLUMNS},
                "relations": rows(
                    "SELECT relname, relkind, relowner::regrole::text FROM pg_class"
                    " WHERE relnamespace = 'public'::regnamespace ORDER BY 1"
                ),
                "functions": rows(
                    "SELECT oid::regprocedure::text FROM pg_proc"
                    " WHERE pronamespace = 'public'::regnamespace ORDER BY 1"
                ),
                "rules": rows("SELECT rulename FROM pg_rules ORDER BY 1"),
                "comments": rows("SELECT objoid, description FROM pg_description ORDER BY 1, 2"),
                "sequence": rows("SELECT last_value, is_called FROM orders_id_seq"),
                "large_objects": rows("SELECT count(*) FROM pg_largeobject_metadata"),
                "advisory_locks": rows(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                    " (SELECT oid FROM pg_database WHERE datname = current_database())"
                ),
                "extensions": rows("SELECT extname FROM pg_extension ORDER BY 1"),
                # Other sessions create and drop their own roles meanwhile: only the canary's,
                # the superuser's and those the catalogue would create count.
                "roles": rows(
                    "SELECT rolname, rolsuper, md5(coalesce(rolpassword, '')) FROM pg_authid"
                    f" WHERE rolname IN ('postgres', 'evil') OR rolname LIKE '{self.name}%'"
                    " ORDER BY 1"
                ),
                "auto_conf": rows(
                    "SELECT name, setting FROM pg_file_settings"
                    " WHERE sourcefile LIKE '%postgresql.auto.conf' ORDER BY 1"
                ),
            }

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        """Through the connector as the SELECT-only login when `hardened`, else each statement
        as the superuser in a read-only transaction (who could read and write server files but
        for the gate)."""
        if hardened:
            return run_connector(self.url(), statements)
        run = Run()
        with self._connect(self.name) as con:
            for sql in statements:
                rows, error = None, None
                con.execute(
                    f"BEGIN READ ONLY; SET LOCAL statement_timeout = {int(TIMEOUT_S * 1000)}"
                )
                try:
                    cursor = con.execute(sql)
                    rows = cursor.fetchmany(2000) if cursor.description else []
                except self.psycopg.Error as exc:
                    error = exc
                con.execute("ROLLBACK")
                run.record(sql, rows, error)
        return run

    def drop(self) -> None:
        with self._connect("postgres") as server:
            server.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
            for role in (self.reader, self.writer):
                server.execute(f"DROP ROLE IF EXISTS {role}")

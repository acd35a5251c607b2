"""Canary databases: run statements and prove nothing changed or leaked.

Each canary holds three small tables and sits beside a secret file. A run executes every
statement on the hardened read-only path production uses (the connector's own `run`:
`DuckDBConnector` opened from `duckdb:PATH`, `SqlConnector` as the bot's login for SQLite,
MariaDB and PostgreSQL), and on a connection that would allow harm (for DuckDB and SQLite
read-write, for MariaDB and PostgreSQL the administrator inside a read-only transaction), so that
a pass proves the gate alone kept the statements harmless. Before and after: every table's
checksum, the list of tables, and the files beside the database. During: no result may contain
the secret or a line of /etc/passwd, and no statement may be refused by the engine for trying to
write or reach a file (that refusal would mean the gate let it through).

`contain` runs the other way round: statements the gate REJECTS (the harmful catalogue), sent
straight to a connector's `run`, must be stopped by the connector and the engine alone.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import sqlite3
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR as stat_is_dir
from typing import Any

import duckdb
from sqlglot.errors import SqlglotError

from agent.gate import GateSchema
from connectors import open_connector
from connectors.base import ColumnInfo, Connector, ConnectorError, PermissionDenied, TableInfo
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import bound_temp_files

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "customers": (("id", "INTEGER"), ("name", "VARCHAR(100)"), ("email", "VARCHAR(100)")),
    "orders": (
        ("id", "INTEGER"),
        ("customer_id", "INTEGER"),
        ("amount", "DECIMAL(10,2)"),
        ("ordered_at", "DATE"),
    ),
    "users": (("id", "INTEGER"), ("username", "VARCHAR(100)"), ("password", "VARCHAR(100)")),
}
ROWS: dict[str, list[tuple[Any, ...]]] = {
    "customers": [(1, "Ada", "ada@example.com"), (2, "Grace", "grace@example.com"), (3, "x", "")],
    "orders": [
        (1, 1, "10.50", "2026-01-05"),
        (2, 1, "4.50", "2026-02-01"),
        (3, 2, "7.00", "2026-01-20"),
        (4, 3, "1.25", "2026-03-03"),
    ],
    "users": [(1, "admin", "hash-of-admin"), (2, "guest", "hash-of-guest")],
}
MARIADB_DB = "querybot_gate_canary"
MARIADB_USER = "querybot_gate_ro"
MARIADB_WRITER = "querybot_gate_rw"
MARIADB_PASSWORD = "canary-read-only"
TIMEOUT_S = 2.0
#: Engine refusals that mean "this writes or reaches outside": the gate should have rejected
#: such a statement first. DuckDB and SQLite by message, MariaDB by error code (read-only
#: transaction, table privileges, access denied, SUPER needed, secure_file_priv, read-only table).
BLOCKED = ("read-only", "read only", "readonly", "permission", "external access", "not authorized")
MARIADB_BLOCKED = frozenset({1792, 1142, 1044, 1045, 1227, 1290, 1036})
PASSWD_LINE = "root:x:0:0"


def table_names(dialect: str) -> dict[str, str]:
    """Each canary table's fully qualified name as the `dialect` connector would list it."""
    prefix = {
        "duckdb": "canary.main.",
        "sqlite": "main.",
        "mysql": f"{MARIADB_DB}.",
        "postgres": "public.",
        "bigquery": "querybot-demo.canary.",
    }[dialect]
    return {table: f"{prefix}{table}" for table in COLUMNS}


def tables(dialect: str) -> list[TableInfo]:
    names = table_names(dialect)
    return [
        TableInfo(names[t], tuple(ColumnInfo(c, ty) for c, ty in cols))
        for t, cols in COLUMNS.items()
    ]


def schema(dialect: str) -> GateSchema:
    return GateSchema.from_tables(tables(dialect), dialect)


@dataclass
class Run:
    """What executing a batch of statements did."""

    executed: int = 0
    failed: int = 0
    #: (statement, engine error) for refusals that mean the gate let harm through.
    blocked: list[tuple[str, str]] = field(default_factory=list)
    #: (statement, what leaked) for results holding the secret or /etc/passwd.
    leaked: list[tuple[str, str]] = field(default_factory=list)

    #: Connector error class name -> how many statements ended with it.
    errors: Counter[str] = field(default_factory=Counter)
    #: Statements the connector ran without an error (the engine found nothing to refuse).
    ran: list[str] = field(default_factory=list)
    #: Statements the connector refused itself, before any engine saw them (its error has no
    #: engine error behind it: BigQuery's own checks, never a database's refusal).
    stopped: list[str] = field(default_factory=list)
    #: What `contain` saw change meanwhile: "the database", "files under ...".
    changed: list[str] = field(default_factory=list)

    def record(self, sql: str, rows: Iterable[Any] | None, error: BaseException | None) -> None:
        self.executed += 1
        if error is not None:
            self.failed += 1
            code = error.args[0] if error.args else None
            text = str(error)
            if code in MARIADB_BLOCKED or any(hint in text.lower() for hint in BLOCKED):
                self.blocked.append((sql, text[:200]))
            return
        self._check_leak(sql, repr(list(rows or [])))

    def record_connector(
        self, sql: str, rows: Iterable[Any] | None, error: Exception | None
    ) -> None:
        """A `SqlConnector.run` outcome: the engine refusing is a PermissionDenied; what a user
        would read (rows, or the error's message, hint and engine text) must hold no secret."""
        self.executed += 1
        if error is None:
            self.ran.append(sql)
            self._check_leak(sql, repr(list(rows or [])))
            return
        self.failed += 1
        self.errors[type(error).__name__] += 1
        cause = error.__cause__
        if cause is None or isinstance(cause, SqlglotError):
            self.stopped.append(sql)
        code = cause.args[0] if cause is not None and cause.args else None
        text = getattr(error, "engine_message", str(error)).lower()
        if isinstance(error, PermissionDenied) and (
            code in MARIADB_BLOCKED or any(hint in text for hint in BLOCKED)
        ):
            self.blocked.append((sql, error.message[:200]))
        if isinstance(error, ConnectorError):
            self._check_leak(sql, f"{error.message} {error.hint} {error.engine_message}")

    def _check_leak(self, sql: str, dump: str) -> None:
        for secret in (_secret(), PASSWD_LINE):
            if secret in dump:
                self.leaked.append((sql, secret))


def _secret() -> str:
    return f"CANARY-SECRET-{os.getpid()}"


def _checksum(rows: Iterable[tuple[Any, ...]]) -> str:
    return hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()[:16]


def files(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under `directory` with its size and modification time."""
    listing = {}
    for path in sorted(directory.rglob("*")):
        stat = path.stat()
        listing[str(path.relative_to(directory))] = (stat.st_size, stat.st_mtime_ns)
    return listing


def write_secrets(directory: Path) -> None:
    """Files a leaking statement would read: their content is the secret marker."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "secret.txt").write_text(_secret() + "\n")
    (directory / "secret.csv").write_text(f"secret\n{_secret()}\n")


def run_on(connector: Connector, statements: Iterable[str], *, timeout_s: float = TIMEOUT_S) -> Run:
    """Every statement through `connector.run`, as the bot runs an approved query (no gate in
    between)."""
    run = Run()
    for sql in statements:
        try:
            result = connector.run(sql, max_rows=2000, timeout_s=timeout_s)
        except ConnectorError as exc:
            run.record_connector(sql, None, exc)
        else:
            run.record_connector(sql, result.rows, None)
    return run


def run_connector(url: str, statements: Iterable[str], *, timeout_s: float = TIMEOUT_S) -> Run:
    """`run_on` a `SqlConnector` opened from `url`, closed afterwards."""
    connector = SqlConnector(url, pool_size=1)
    try:
        return run_on(connector, statements, timeout_s=timeout_s)
    finally:
        connector.close()


def contain(
    connector: Connector,
    statements: Sequence[str],
    snapshot: Callable[[], object],
    directories: Iterable[Path],
    *,
    timeout_s: float = 1.0,
) -> Run:
    """`run_on`, recording in `Run.changed` whatever changed meanwhile: the database (as
    `snapshot` sees it), the files under `directories` and every file the statements name."""
    watched = list(directories)
    before, listed, named = snapshot(), [files(d) for d in watched], named_files(statements)
    run = run_on(connector, statements, timeout_s=timeout_s)
    if snapshot() != before:
        run.changed.append("the database")
    run.changed += [
        f"files under {d}" for d, was in zip(watched, listed, strict=True) if files(d) != was
    ]
    if named_files(statements) != named:
        run.changed.append("a file the statements name")
    return run


@contextmanager
def _watchdog(interrupt: Callable[[], None]) -> Iterator[None]:
    timer = threading.Timer(TIMEOUT_S, interrupt)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def duckdb_snapshot(path: Path) -> dict[str, object]:
    """Every table's checksum, the views, functions and macros, settings and attached databases
    of the DuckDB file at `path`, read through a `DuckDBConnector` of its own.

    DuckDB keeps one database instance per file in a process, so while another connector on the
    file is open this one shares its instance and sees what a statement left in it (a setting,
    an attached database, a loaded extension), not only what reached the file.
    """
    connector = open_connector(f"duckdb:{path}", data_dir=path.parent)

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return connector.run(sql, max_rows=100_000, timeout_s=30).rows

    try:
        names = rows(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL"
        )
        return {
            "tables": {
                n: _checksum(rows('SELECT * FROM "{}"."{}"."{}"'.format(*n))) for n in names
            },
            "views": rows("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"),
            # a loaded extension adds functions; a macro is one that is not internal
            "functions": rows(
                "SELECT count(*), list_sort(list(function_name) FILTER (WHERE NOT internal))"
                " FROM duckdb_functions()"
            ),
            "settings": rows("SELECT name, value FROM duckdb_settings() ORDER BY name"),
            "databases": rows(
                "SELECT database_name, path, readonly FROM duckdb_databases() ORDER BY 1"
            ),
        }
    finally:
        connector.close()


class DuckDBCanary:
    """`canary.duckdb` (catalog `canary`) in its own directory."""

    CONNECTIONS = ("DuckDBConnector: read-only, external access off", "read-write")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "canary.duckdb"
        write_secrets(directory)
        con = duckdb.connect(str(self.path))
        for table, cols in COLUMNS.items():
            con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
            con.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", ROWS[table]
            )
        con.close()

    @property
    def spec(self) -> str:
        """The warehouse spec a deployment would configure for this file."""
        return f"duckdb:{self.path}"

    def snapshot(self) -> dict[str, object]:
        return {**duckdb_snapshot(self.path), "files": files(self.directory)}

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # the connector production opens for `duckdb:PATH`
            connector = open_connector(self.spec, data_dir=self.directory)
            try:
                return run_on(connector, statements)
            finally:
                connector.close()
        # read-write, files and network reachable: only the gate stands in the way
        con = duckdb.connect(str(self.path))
        run = Run()
        try:
            for sql in statements:
                rows, error = None, None
                with _watchdog(con.interrupt):
                    try:
                        rows = con.execute(sql).fetchmany(2000)
                    except duckdb.Error as exc:
                        error = exc
                run.record(sql, rows, error)
        finally:
            con.close()
        return run


def write_csvs(directory: Path) -> list[Path]:
    """Each canary table as `<table>.csv` (a header, then its rows) in `directory`, the way a
    person would upload it into a thread."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table, cols in COLUMNS.items():
        path = directory / f"{table}.csv"
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(name for name, _ in cols)
            writer.writerows(ROWS[table])
        written.append(path)
    return written


class SQLiteCanary:
    """`canary.sqlite` in its own directory."""

    CONNECTIONS = ("SqlConnector: mode=ro and a read-only authorizer", "read-write")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "canary.sqlite"
        write_secrets(directory)
        con = sqlite3.connect(self.path)
        for table, cols in COLUMNS.items():
            con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
            con.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", ROWS[table]
            )
        con.commit()
        con.close()

    def snapshot(self) -> dict[str, object]:
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            names = con.execute("SELECT type, name FROM sqlite_schema ORDER BY 1, 2").fetchall()
            sums = {
                n: _checksum(con.execute(f'SELECT * FROM "{n}"').fetchall())
                for kind, n in names
                if kind == "table"
            }
        finally:
            con.close()
        return {"schema": names, "tables": sums, "files": files(self.directory)}

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # the connector: read-only URI plus an authorizer allowing only reads
            return run_connector(self.url, statements)
        con = sqlite3.connect(self.path)
        run = Run()
        try:
            for sql in statements:
                deadline = _Deadline()
                con.set_progress_handler(deadline, 1000)
                rows, error = None, None
                try:
                    rows = con.execute(sql).fetchmany(2000)
                except (sqlite3.Error, OverflowError, ValueError) as exc:
                    error = exc
                run.record(sql, rows, error)
            con.rollback()
        finally:
            con.close()
        return run


class _Deadline:
    """A SQLite progress handler that aborts a statement after the timeout."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self) -> int:
        return int(time.monotonic() - self.start > TIMEOUT_S)


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
                sums[name] = _checksum(cur.fetchall())
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
                "tables": {t: _checksum(rows(f"SELECT * FROM {t}")) for t in COLUMNS},
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


#: BigQuery column types for the canary's SQL types.
_BIGQUERY_TYPES = {"INTEGER": "INT64", "VARCHAR": "STRING", "DECIMAL": "NUMERIC", "DATE": "DATE"}


class BigQueryCanary:
    """Dataset `canary` holding the canary tables on a BigQuery endpoint without credentials
    (the local emulator, whose anonymous login may write anything: BigQuery has no read-only
    session, so only the connector's own checks stand in the way)."""

    def __init__(self, endpoint: str, project: str, dataset: str = "canary") -> None:
        from google.cloud import bigquery

        from connectors.bigquery.connector import endpoint_client

        self.endpoint, self.project, self.dataset = endpoint, project, dataset
        self.client = endpoint_client(project, endpoint)
        self.client.delete_dataset(dataset, delete_contents=True, not_found_ok=True)
        self.client.create_dataset(dataset)
        for table, cols in COLUMNS.items():
            ref = f"{project}.{dataset}.{table}"
            schema = [
                bigquery.SchemaField(name, _BIGQUERY_TYPES[kind.partition("(")[0]])
                for name, kind in cols
            ]
            self.client.create_table(bigquery.Table(ref, schema=schema))
            names = [name for name, _ in cols]
            rows = [dict(zip(names, row, strict=True)) for row in ROWS[table]]
            if errors := self.client.insert_rows_json(ref, rows):
                raise RuntimeError(f"loading {ref} failed: {errors}")

    def connector(self) -> Connector:
        """The connector a deployment configures as `bigquery:PROJECT/canary` with
        BIGQUERY_API_ENDPOINT pointing at the endpoint."""
        from connectors.bigquery.connector import from_spec
        from connectors.settings import BigQuerySettings

        settings = BigQuerySettings(bigquery_api_endpoint=self.endpoint)
        return from_spec(f"{self.project}/{self.dataset}", settings)

    def snapshot(self) -> dict[str, object]:
        """The project's datasets; the canary dataset's tables (kind, schema, rows), routines
        and models; and every table and database the emulator's DuckDB engine holds, since it
        keeps some the REST API never lists (`SELECT * INTO dataset.t ...` makes one)."""
        client = self.client
        tables = {}
        for item in client.list_tables(self.dataset):
            table = client.get_table(item)
            rows = (tuple(row.values()) for row in client.list_rows(table))
            schema = [(f.name, f.field_type) for f in table.schema]
            tables[item.table_id] = (table.table_type, schema, _checksum(rows))
        engine = [
            tuple(row.values())
            for sql in (
                "SELECT schema_name, table_name, estimated_size FROM duckdb_tables()",
                "SELECT database_name, path FROM duckdb_databases()",
            )
            for row in client.query(sql).result()
        ]
        return {
            "datasets": sorted(d.dataset_id for d in client.list_datasets()),
            "tables": tables,
            "routines": sorted(r.routine_id for r in client.list_routines(self.dataset)),
            "models": sorted(m.model_id for m in client.list_models(self.dataset)),
            "engine": sorted(engine, key=repr),
        }

    def drop(self) -> None:
        self.client.delete_dataset(self.dataset, delete_contents=True, not_found_ok=True)
        self.client.close()


# -- containment: statements the gate rejects, sent to the connector anyway ---------------------

#: Engine-specific escapes tried on top of the gate's catalogue.
ESCAPES = {
    "mysql": [
        "SET STATEMENT tx_read_only=0 FOR CREATE TABLE stolen (a INT)",
        "SET STATEMENT tx_read_only=0 FOR DROP TABLE orders",
        "SET STATEMENT tx_read_only=0 FOR INSERT INTO customers VALUES (9, 'x', 'y')",
        "SET STATEMENT tx_read_only=0 FOR SELECT * FROM users INTO OUTFILE '/tmp/users.txt'",
        "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(5)",
    ],
    # DuckDB's configuration, attached databases, secrets, logging and extensions: what the
    # connector's locked, read-only, no-external-access connection has to hold on its own.
    "duckdb": [
        "SET lock_configuration = false",
        "RESET lock_configuration",
        "SET access_mode = 'read_write'",
        "SET allowed_directories = ['/']",
        "SET temp_directory = '/tmp/querybot-spill'",
        "SET profiling_output = '/tmp/querybot-profile.json'",
        "CALL enable_logging(storage = 'file', storage_path = '/tmp/querybot-log')",
        "ATTACH ':memory:' AS scratch",
        "ATTACH '/tmp/canary.duckdb' AS rw (READ_WRITE)",
        "EXPORT DATABASE '/tmp/querybot-export'",
        "IMPORT DATABASE '/tmp/'",
        "CREATE SECRET leak (TYPE s3, KEY_ID 'x', SECRET 'y')",
        "CREATE PERSISTENT SECRET leak (TYPE s3, KEY_ID 'x', SECRET 'y')",
        "INSTALL '/tmp/querybot.duckdb_extension'",
        "LOAD '/tmp/querybot.duckdb_extension'",
        "FORCE CHECKPOINT",
        "VACUUM",
        "SELECT * FROM read_text('/tmp/secret.txt')",
    ],
    # GoogleSQL spellings the BigQuery connector must stop before a job exists (the emulator's
    # engine is DuckDB, which would read files and write tables given the chance).
    "bigquery": [
        "SELECT * INTO canary.stolen FROM canary.users",
        "SELECT * FROM canary.users FOR UPDATE",
        "SELECT `demo.canary.remote_fn`(name) FROM canary.customers",
        "SELECT * FROM canary.users, EXTERNAL_QUERY('c', 'SELECT 1 AS x')",
        "(SELECT 1 AS x) UNION ALL (SELECT x FROM EXTERNAL_QUERY('c', 'SELECT 1 AS x'))",
        "SELECT AI.GENERATE_BOOL('is this a secret?')",
        "SELECT * FROM VECTOR_SEARCH(TABLE canary.users, 'id', TABLE canary.orders, 'id')",
        "SELECT * FROM canary.users WHERE id IN UNNEST(canary.tvf(1))",
    ],
    "postgres": [
        "SELECT set_config('transaction_read_only', 'off', true)",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SELECT set_config('role', 'postgres', false)",
        "SELECT set_config('statement_timeout', '0', true), pg_sleep(5)",
    ],
}

_QUOTED_PATH = re.compile(r"'(/[^']*)'")


def server_directory() -> Path:
    """A fresh directory holding the secret files that the database servers (running as other
    OS users) could read and write into: a statement that got past every guard would read the
    secret from it or leave a file in it. Remove it with `shutil.rmtree`."""
    directory = Path(tempfile.mkdtemp(prefix="querybot-canary-"))
    write_secrets(directory)
    directory.chmod(0o777)
    for path in directory.iterdir():
        path.chmod(0o644)
    return directory


def aimed(statements: Iterable[str], directory: Path) -> list[str]:
    """Each statement as written and, when it names a file, once more aimed at `directory`:
    `/etc/passwd` (or any file read) becomes the secret file, `/tmp/x` becomes `directory/x`."""
    secret = directory / "secret.txt"
    out: list[str] = []
    for sql in statements:
        out.append(sql)
        if _QUOTED_PATH.search(sql):
            out.append(
                sql.replace("'/tmp/", f"'{directory}/").replace("'/etc/passwd'", f"'{secret}'")
            )
    return list(dict.fromkeys(out))


def named_files(statements: Iterable[str]) -> dict[str, tuple[int, int] | None]:
    """Every absolute path quoted in the statements, with its size and modification time (None
    when it does not exist): a write anywhere they name shows as a change."""
    found: dict[str, tuple[int, int] | None] = {}
    for sql in statements:
        for path in _QUOTED_PATH.findall(sql):
            try:
                stat = os.stat(path)
            except OSError:
                found[path] = None
            else:  # directories ('/', '/etc') change as other programs work: files only
                if not stat_is_dir(stat.st_mode):
                    found[path] = (stat.st_size, stat.st_mtime_ns)
    return found


def secret_text() -> str:
    """What the secret files hold (to prove a server could read them without the guards)."""
    return _secret()

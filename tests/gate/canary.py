"""Canary databases: run statements the gate accepted and prove nothing changed or leaked.

Each canary holds three small tables and sits beside a secret file. A run executes every
statement on the hardened read-only connection production uses, and (for DuckDB, SQLite and,
through a read-only transaction, MariaDB) on a connection that would allow harm, so that a pass
proves the gate alone kept the statements harmless. Before and after: every table's checksum,
the list of tables, and the files beside the database. During: no result may contain the secret
or a line of /etc/passwd, and no statement may be refused by the engine for trying to write or
reach a file (that refusal would mean the gate let it through).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from agent.gate import GateSchema
from connectors.base import ColumnInfo, TableInfo

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

    def record(self, sql: str, rows: Iterable[Any] | None, error: BaseException | None) -> None:
        self.executed += 1
        if error is not None:
            self.failed += 1
            code = error.args[0] if error.args else None
            text = str(error)
            if code in MARIADB_BLOCKED or any(hint in text.lower() for hint in BLOCKED):
                self.blocked.append((sql, text[:200]))
            return
        dump = repr(list(rows or []))
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


@contextmanager
def _watchdog(interrupt: Callable[[], None]) -> Iterator[None]:
    timer = threading.Timer(TIMEOUT_S, interrupt)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


class DuckDBCanary:
    """`canary.duckdb` (catalog `canary`) in its own directory."""

    CONNECTIONS = ("read-only, external access off", "read-write")

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

    def snapshot(self) -> dict[str, object]:
        con = duckdb.connect(str(self.path), read_only=True)
        try:
            names = con.execute(
                "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL"
            ).fetchall()
            sums = {n: _checksum(con.execute(f"SELECT * FROM {n[2]}").fetchall()) for n in names}
            views = con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        finally:
            con.close()
        return {"tables": sums, "views": views, "files": files(self.directory)}

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # the connection production uses (platform notes)
            con = duckdb.connect(
                str(self.path),
                read_only=True,
                config={
                    "enable_external_access": False,
                    "autoload_known_extensions": False,
                    "autoinstall_known_extensions": False,
                    "allow_community_extensions": False,
                    "threads": 1,
                    "memory_limit": "256MB",
                },
            )
            con.execute("SET lock_configuration = true")
        else:  # read-write, files and network reachable: only the gate stands in the way
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


class SQLiteCanary:
    """`canary.sqlite` in its own directory."""

    CONNECTIONS = ("mode=ro and a read-only authorizer", "read-write")

    READS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, 33})

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

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # read-only URI plus an authorizer allowing only reads (platform notes)
            con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            con.set_authorizer(
                lambda action, *_: (
                    sqlite3.SQLITE_OK if action in self.READS else sqlite3.SQLITE_DENY
                )
            )
        else:
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

    CONNECTIONS = ("SELECT-only user, read-only transaction", "root, read-only transaction")

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
            cur.execute("SELECT user, host FROM mysql.user ORDER BY 1, 2")
            users = cur.fetchall()
        return {"tables": sums, "names": names, "users": users}

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        """Each statement in `START TRANSACTION READ ONLY`, as the SELECT-only user when
        `hardened`, else as root (who could write files and tables but for the gate)."""
        user, password = (MARIADB_USER, MARIADB_PASSWORD) if hardened else ("root", "")
        con = self.pymysql.connect(
            host=self.host, port=self.port, user=user, password=password, database=MARIADB_DB
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
        self.lock.close()  # releases the lock

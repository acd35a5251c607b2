"""Sample databases on the real servers for the SqlConnector tests, and their fingerprints.

Each engine gets a uniquely named database (`querybot_test_<hex>`) holding the same small
employees schema (departments, employees, salaries, a view), with comments where the engine has
them. The PostgreSQL login may write to it, so whatever refuses a write there is the read-only
transaction, not a missing grant; the MySQL user holds SELECT only, because the connector
refuses users that may write (MariaDB's `SET STATEMENT tx_read_only=0 FOR ...` lifts the
read-only transaction). Everything is dropped afterwards.

Servers: PostgreSQL and MariaDB on 127.0.0.1 (see the platform notes). When one is unreachable
the tests that need it skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pymysql
from psycopg import sql as pg_sql

from agent.evaluation.defog import CORPORA
from tests.support.needs import unavailable

HOST = "127.0.0.1"
PG_PORT = 5432
MYSQL_PORT = 3306
PG_ADMIN = "postgres"
MYSQL_ADMIN = "root"


def payloads(every: int = 1) -> list[str]:
    """Distinct non-blank SQL-injection payload lines from the shared corpus, in file order,
    keeping one in `every`."""
    folder = CORPORA / "sqli-payloads"
    require(folder.is_dir(), f"the shared corpora are missing ({folder})")
    lines: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name != "LICENSE" and path.suffix != ".json":
            raw = path.read_bytes()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            lines.extend(line for line in text.splitlines() if line.strip())
    return list(dict.fromkeys(lines))[::every]


def require(available: bool, reason: str) -> None:
    """Skip when something a test needs is missing; fail instead under CI=true."""
    if not available:
        unavailable(reason)


def port_open(port: int, host: str = HOST) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def unique_name() -> str:
    return f"querybot_test_{uuid.uuid4().hex[:10]}"


# -- the sample data -----------------------------------------------------------------------------

DEPARTMENTS = [
    ("d001", "Marketing"),
    ("d002", "Finance"),
    ("d003", "Human Resources"),
    ("d004", "Production"),
    ("d005", "Development"),
]
FIRST = ["Georgi", "Bezalel", "Parto", "Chirstian", "Kyoichi", "Anneke", "Tzvetan", "Saniya"]
LAST = ["Facello", "Simmel", "Bamford", "Koblick", "Maliniak", "Preusig", "Zielinski", "Kalloufi"]
EMPLOYEES = [
    (
        10001 + i,
        FIRST[i % len(FIRST)],
        LAST[(i * 3) % len(LAST)],
        date(2015, 1, 1) + timedelta(days=17 * i),
        DEPARTMENTS[i % len(DEPARTMENTS)][0],
    )
    for i in range(120)
]
SALARIES = [
    (emp_no, Decimal(40000 + (emp_no % 97) * 250 + year * 1500), date(2020 + year, 1, 1))
    for emp_no, *_ in EMPLOYEES
    for year in range(3)
]
TABLE_COMMENTS = {
    "departments": "One row per department",
    "employees": "One row per employee, with the current department",
    "salaries": "Salary history: one row per employee and start date",
}
COLUMN_COMMENTS = {
    ("employees", "hire_date"): "First day of work",
    ("salaries", "amount"): "Yearly salary in USD",
}
TABLES = ("current_salaries", "departments", "employees", "salaries")
#: Rows in the three-way self-join of salaries: far more than any test can stream in time.
HUGE_ROWS = len(SALARIES) ** 3


def ddl(schema: str, *, comments: str) -> list[str]:
    """The sample schema's statements. `comments` is "inline" (MySQL), "statements"
    (PostgreSQL) or "none" (SQLite)."""

    def c(table: str, column: str = "") -> str:
        text = COLUMN_COMMENTS.get((table, column), "") if column else TABLE_COMMENTS[table]
        return f" COMMENT '{text}'" if comments == "inline" and text else ""

    statements = [
        f"CREATE TABLE {schema}.departments (dept_no CHAR(4) PRIMARY KEY,"
        f" dept_name VARCHAR(40) NOT NULL){c('departments')}",
        f"CREATE TABLE {schema}.employees (emp_no INTEGER PRIMARY KEY,"
        " first_name VARCHAR(14) NOT NULL, last_name VARCHAR(16) NOT NULL,"
        f" hire_date DATE NOT NULL{c('employees', 'hire_date')},"
        f" dept_no CHAR(4) NOT NULL REFERENCES departments (dept_no)){c('employees')}",
        f"CREATE TABLE {schema}.salaries (emp_no INTEGER NOT NULL REFERENCES employees (emp_no),"
        f" amount DECIMAL(10, 2) NOT NULL{c('salaries', 'amount')},"
        f" from_date DATE NOT NULL, PRIMARY KEY (emp_no, from_date)){c('salaries')}",
        f"CREATE VIEW {schema}.current_salaries AS SELECT emp_no, max(amount) AS amount"
        f" FROM {schema}.salaries GROUP BY emp_no",
    ]
    if schema != "main":  # SQLite resolves REFERENCES within the table's own schema
        statements = [s.replace("REFERENCES ", f"REFERENCES {schema}.") for s in statements]
    if comments == "statements":
        statements += [f"COMMENT ON TABLE {schema}.{t} IS '{x}'" for t, x in TABLE_COMMENTS.items()]
        statements += [
            f"COMMENT ON COLUMN {schema}.{t}.{col} IS '{x}'"
            for (t, col), x in COLUMN_COMMENTS.items()
        ]
    return statements


def load(cursor: Any, schema: str, *, sqlite: bool = False) -> None:
    """Insert the sample rows through a DB-API cursor (sqlite3 takes text dates, float money)."""
    for table, rows in (
        ("departments", DEPARTMENTS),
        ("employees", EMPLOYEES),
        ("salaries", SALARIES),
    ):
        if sqlite:
            rows = [tuple(_sqlite_value(v) for v in row) for row in rows]
        marks = ", ".join(["?" if sqlite else "%s"] * len(rows[0]))
        cursor.executemany(f"INSERT INTO {schema}.{table} VALUES ({marks})", rows)


def _sqlite_value(value: object) -> object:
    if isinstance(value, date):
        return value.isoformat()
    return float(value) if isinstance(value, Decimal) else value


def digest(rows: list[tuple[Any, ...]]) -> str:
    return hashlib.sha256(repr(rows).encode()).hexdigest()


# -- one sample per engine ------------------------------------------------------------------------


@dataclass
class Sample:
    """A loaded sample database and how to reach and check it."""

    #: "postgresql", "mysql" or "sqlite".
    engine: str
    #: The URL of the login the connector uses (may write, as far as grants go).
    url: str
    #: What qualifies the sample tables in the connector's names (`hr`, the database, `main`).
    schema: str
    #: A statement that runs far longer than any timeout used in the tests.
    slow_sql: str
    #: The tables, their row checksums and anything else a write could change, read as admin.
    fingerprint: Callable[[], object]
    #: Run statements as an administrator (to change the database behind a connector's back).
    admin: Callable[[list[str]], None]
    #: Whether the server is running `sql` right now (so a cancel reaches the engine); SQLite
    #: has no process list to ask, so there it is always True (and the run may not have started).
    is_running: Callable[[str], bool] = lambda sql: True
    #: Whether the engine stores table and column comments.
    comments: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}"


#: The temp_file_limit every test login gets: the connector refuses a login without one.
PG_TEMP_FILE_LIMIT = "2GB"


def bound_temp_files(server: psycopg.Connection, login: str) -> None:
    """Give PostgreSQL role `login` the temp_file_limit a DBA must set before querybot queries
    as it (run as an administrator, once the role exists)."""
    statement = pg_sql.SQL("ALTER ROLE {} SET temp_file_limit = {}")
    server.execute(statement.format(pg_sql.Identifier(login), pg_sql.Literal(PG_TEMP_FILE_LIMIT)))


def pg_connect(dbname: str, user: str = PG_ADMIN) -> psycopg.Connection:
    return psycopg.connect(host=HOST, port=PG_PORT, user=user, dbname=dbname, autocommit=True)


@contextmanager
def postgres_sample() -> Iterator[Sample]:
    """Database and login `querybot_test_<hex>`, schema `hr`, analysed (so row counts are set)."""
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    name = unique_name()
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        try:
            with pg_connect(name) as admin:
                admin.execute("CREATE SCHEMA hr")
                for statement in ddl("hr", comments="statements"):
                    admin.execute(statement)
                with admin.cursor() as cur:
                    load(cur, "hr")
                admin.execute("CREATE SEQUENCE hr.ticket_seq")
                # A schema the login is not granted: it must not be listed.
                admin.execute("CREATE SCHEMA secret")
                admin.execute("CREATE TABLE secret.payroll (emp_no INTEGER, bonus INTEGER)")
                admin.execute("ANALYZE")
                # Every write privilege: only the read-only transaction stands in the way.
                admin.execute(f"GRANT ALL ON DATABASE {name} TO {name}")
                admin.execute(f"GRANT ALL ON SCHEMA hr, public TO {name}")
                admin.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA hr TO {name}")

                def fingerprint() -> object:
                    tables = admin.execute(
                        "SELECT table_schema, table_name FROM information_schema.tables"
                        " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
                        " ORDER BY 1, 2"
                    ).fetchall()
                    rows = [
                        admin.execute(f"SELECT * FROM hr.{t} ORDER BY 1, 2").fetchall()
                        for t in ("departments", "employees", "salaries")
                    ]
                    sequence = admin.execute("SELECT last_value, is_called FROM hr.ticket_seq")
                    return tables, digest(rows), sequence.fetchall()

                def run_admin(statements: list[str]) -> None:
                    for statement in statements:
                        admin.execute(statement)

                yield Sample(
                    engine="postgresql",
                    url=f"postgresql://{name}@{HOST}:{PG_PORT}/{name}",
                    schema="hr",
                    slow_sql="SELECT pg_sleep(60)",
                    fingerprint=fingerprint,
                    admin=run_admin,
                    is_running=lambda sql: bool(
                        admin.execute(
                            # The connector runs the statement inside its bounding wrapper.
                            "SELECT 1 FROM pg_stat_activity WHERE strpos(query, %s) > 0"
                            " AND state = 'active' AND pid <> pg_backend_pid()",
                            (sql,),
                        ).fetchall()
                    ),
                    extra={"name": name},
                )
        finally:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")


def mysql_connect(user: str = MYSQL_ADMIN, database: str | None = None) -> pymysql.Connection:
    return pymysql.connect(
        host=HOST, port=MYSQL_PORT, user=user, password="", database=database, autocommit=True
    )


@contextmanager
def mysql_sample() -> Iterator[Sample]:
    """Database and user `querybot_test_<hex>`; the user may read it (SELECT, SHOW VIEW)."""
    require(port_open(MYSQL_PORT), f"MySQL/MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    name = unique_name()
    admin = mysql_connect()
    cur = admin.cursor()
    cur.execute(f"CREATE DATABASE {name}")
    try:
        cur.execute(f"CREATE USER '{name}'@'%'")
        cur.execute(f"GRANT SELECT, SHOW VIEW ON {name}.* TO '{name}'@'%'")
        cur.execute(f"USE {name}")
        for statement in ddl(name, comments="inline"):
            cur.execute(statement)
        load(cur, name)
        cur.execute(f"ANALYZE TABLE {name}.departments, {name}.employees, {name}.salaries")
        cur.fetchall()

        def fingerprint() -> object:
            cur.execute(
                "SELECT table_name FROM information_schema.tables"
                f" WHERE table_schema = '{name}' ORDER BY 1"
            )
            tables = cur.fetchall()
            rows = []
            for table in ("departments", "employees", "salaries"):
                cur.execute(f"SELECT * FROM {name}.{table} ORDER BY 1, 2")
                rows.append(cur.fetchall())
            return tables, digest(rows)

        def run_admin(statements: list[str]) -> None:
            for statement in statements:
                cur.execute(statement)

        def is_running(sql: str) -> bool:
            return bool(
                cur.execute("SELECT 1 FROM information_schema.PROCESSLIST WHERE INFO = %s", (sql,))
            )

        yield Sample(
            engine="mysql",
            url=f"mysql://{name}@{HOST}:{MYSQL_PORT}/{name}",
            schema=name,
            slow_sql="SELECT SLEEP(60)",
            fingerprint=fingerprint,
            admin=run_admin,
            is_running=is_running,
            extra={"name": name},
        )
    finally:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
        cur.execute(f"DROP USER IF EXISTS '{name}'@'%'")
        admin.close()


@contextmanager
def sqlite_sample(folder: Path) -> Iterator[Sample]:
    """`folder/sample.db`; the fingerprint covers the file's bytes and the folder's listing."""
    path = folder / "sample.db"
    with sqlite3.connect(path) as con:
        for statement in ddl("main", comments="none"):
            con.execute(statement)
        load(con.cursor(), "main", sqlite=True)
    con.close()

    def fingerprint() -> object:
        files = sorted(p.name for p in folder.iterdir())
        return files, hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns

    def run_admin(statements: list[str]) -> None:
        with sqlite3.connect(path) as admin:
            for statement in statements:
                admin.execute(statement)
        admin.close()

    yield Sample(
        engine="sqlite",
        url=f"sqlite:///{path}",
        schema="main",
        slow_sql=(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
        ),
        fingerprint=fingerprint,
        admin=run_admin,
        comments=False,
        extra={"path": path},
    )

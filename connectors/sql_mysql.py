"""MySQL and MariaDB through PyMySQL: read-only session and transaction, a statement time limit.

Each run sets the session to `READ ONLY` (so DDL, which commits implicitly and would otherwise
run outside the transaction, is refused too), sets `max_statement_time` (MariaDB, seconds) or
`max_execution_time` (MySQL, milliseconds, SELECT only), then runs in `START TRANSACTION READ
ONLY` and rolls back. PyMySQL does not enable multi-statements, so the server parses one
statement only. A read-only transaction does not stop `SELECT ... INTO OUTFILE`, `LOAD_FILE()`,
`SET GLOBAL` or `SHUTDOWN`, so logins holding FILE, SUPER and similar global privileges
(directly or through a role they can enable) are refused outright, and so are logins that may
write at all: MariaDB's `SET STATEMENT tx_read_only=0 FOR <DDL>` escapes the read-only
transaction in one statement, so only privileges stop it. After each run the session
is reset, so nothing one statement left in it (locks, variables, `sql_mode`) reaches the next.
Rows are read unbuffered, one at a time (a value is at most the server's `max_allowed_packet`;
longer ones come back NULL); each run caps in-memory temporary tables (`tmp_table_size`,
`max_heap_table_size`) from `Limits.engine_memory_mb`. Temporary tables on disk are the server's
to bound (MariaDB 11.5+ `max_tmp_session_space_usage`, otherwise the size of `tmpdir`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pymysql
from pymysql.connections import Connection
from pymysql.constants import FIELD_TYPE
from pymysql.cursors import Cursor, SSCursor
from sqlalchemy import create_engine
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import QueuePool

from connectors.base import (
    ColumnInfo,
    ConnectorError,
    PermissionDenied,
    QueryFailed,
    QueryTimeout,
    TableInfo,
    TableProfile,
    WarehouseUnavailable,
)
from connectors.limits import Limits, engine_memory, engine_temp
from connectors.sql_flavor import Stream, first_line, qualified
from connectors.sql_mysql_stats import read_statistics

#: In-memory temporary tables may use this share of `Limits.engine_memory_mb`.
_TMP_TABLE_SHARE = 8
#: Out of memory (ER_OUTOFMEMORY, ER_OUT_OF_SORTMEMORY, ER_OUT_OF_RESOURCES).
_OUT_OF_MEMORY = frozenset({1037, 1038, 1041})
#: A temporary table is full (ER_RECORD_FILE_FULL), or the session's temp space is used up
#: (MariaDB 11.5+: ER_TMP_SESSION_SPACE_USAGE, ER_TMP_TOTAL_SPACE_USAGE).
_OVER_TEMP = frozenset({1114, 4204, 4205})

#: MySQL 5.7.3+ and MariaDB 10.2.4+: reset the session without re-authenticating.
_COM_RESET_CONNECTION = 0x1F

#: Global privileges that reach past the tables: server files, server settings, shutdown.
_DANGEROUS = frozenset(
    {"ALL", "ALL PRIVILEGES", "FILE", "SUPER", "SHUTDOWN", "RELOAD", "SYSTEM_VARIABLES_ADMIN"}
)
#: Privileges that write or change objects, on any level (database, table, column). MariaDB
#: lets one statement lift the read-only transaction (`SET STATEMENT tx_read_only=0 FOR CREATE
#: TABLE ...`: DDL commits implicitly, then runs read-write), so the login itself must not be
#: able to write: only SELECT-like logins are accepted.
_WRITES = frozenset(
    {"ALL", "ALL PRIVILEGES", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX"}
    | {"CREATE VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "EVENT", "TRIGGER", "LOCK TABLES"}
    | {"DELETE HISTORY", "CREATE USER", "CREATE TABLESPACE"}
)
_GRANT = re.compile(r"^GRANT (.+?) ON (.+?) TO ", re.IGNORECASE)
#: Column lists in grants (`UPDATE (salary)`): dropped before splitting on commas.
_COLUMNS = re.compile(r"\s*\([^)]*\)")

_SYSTEM_SCHEMAS = ("information_schema", "mysql", "performance_schema", "sys")
_SCHEMA_FILTER = "TABLE_SCHEMA = COALESCE(%s, TABLE_SCHEMA) AND TABLE_SCHEMA NOT IN %s"

_TABLES_SQL = f"""
SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_COMMENT, TABLE_ROWS
FROM information_schema.TABLES
WHERE {_SCHEMA_FILTER} AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')
ORDER BY TABLE_SCHEMA, TABLE_NAME
"""

_COLUMNS_SQL = f"""
SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLUMN_COMMENT
FROM information_schema.COLUMNS
WHERE {_SCHEMA_FILTER}
ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION
"""

#: Max statement time exceeded (MariaDB 1969, MySQL 3024).
_TIMEOUTS = frozenset({1969, 3024})
#: Read-only transaction, access denied to a table, column, database, routine or privilege,
#: `--secure-file-priv`/`--read-only`.
_REFUSED = frozenset({1792, 1142, 1143, 1044, 1045, 1227, 1370, 1290})
#: Cannot connect, server gone or shutting down, connection killed, too many connections.
_GONE = frozenset({0, 1040, 1053, 1927, 2002, 2003, 2005, 2006, 2013, 2055})
_HINTS = {
    1064: "Fix the SQL syntax (one statement only).",
    1146: "Use only the tables that exist in the schema.",
    1054: "Check the column names against the schema.",
    1305: "Check the function names.",
    1052: "Qualify the column with its table.",
    1055: "Every selected column must be grouped or aggregated.",
}
_TYPE_NAMES = {
    value: name for name, value in vars(FIELD_TYPE).items() if name.isupper() and name != "CHAR"
}


class MySQLFlavor:
    """MySQL 5.7+/8 and MariaDB 10.1+ (told apart on the first connection)."""

    name = "mysql"
    dialect = "mysql"
    errors: tuple[type[BaseException], ...] = (pymysql.err.MySQLError,)

    def __init__(self, url: URL, limits: Limits) -> None:
        self.url = url.set(drivername="mysql+pymysql")
        self.mariadb = True
        self.limits = limits

    def create_engine(self, pool_size: int) -> Engine:
        connect_args: dict[str, Any] = {}
        if "connect_timeout" not in self.url.query:
            connect_args["connect_timeout"] = 10
        return create_engine(
            self.url,
            connect_args=connect_args,
            poolclass=QueuePool,
            pool_size=pool_size,
            max_overflow=0,
            pool_pre_ping=True,
        )

    def check_login(self, con: Connection) -> None:
        self.mariadb = "mariadb" in con.get_server_info().lower()
        with con.cursor() as cur:
            grants = _grants(cur)
            for role in _applicable_roles(cur, all_at_once=not self.mariadb):
                cur.execute(role)
                grants |= _grants(cur)
            cur.execute("SELECT CURRENT_USER()")
            user = cur.fetchone()[0]  # type: ignore[index]
        privileges = {p for p, on in grants if on == "*.*"}
        dangerous = sorted(privileges & _DANGEROUS)
        writes = sorted({f"{p} ON {on}" for p, on in grants if p in _WRITES})
        if dangerous:
            raise PermissionDenied(
                f"Refusing to query MySQL as {user!r}: it holds {', '.join(dangerous)}, which "
                "reach server files and settings even in a read-only transaction.",
                hint="Connect as a user with only SELECT, e.g. CREATE USER 'querybot'@'%' "
                "IDENTIFIED BY '...'; GRANT SELECT, SHOW VIEW ON mydb.* TO 'querybot'@'%';",
            )
        if writes:
            raise PermissionDenied(
                f"Refusing to query MySQL as {user!r}: it may {', '.join(writes[:4])}"
                f"{' and more' if len(writes) > 4 else ''}; one statement can lift MariaDB's "
                "read-only transaction, so the login must not be able to write.",
                hint="Connect as a user with only SELECT, e.g. CREATE USER 'querybot'@'%' "
                "IDENTIFIED BY '...'; GRANT SELECT, SHOW VIEW ON mydb.* TO 'querybot'@'%';",
            )

    def begin(self, con: Connection, timeout_s: float) -> None:
        with con.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            tmp = self.limits.engine_memory_mb * 1024 * 1024 // _TMP_TABLE_SHARE
            cur.execute(f"SET SESSION tmp_table_size = {tmp}, max_heap_table_size = {tmp}")
            if self.mariadb:
                cur.execute(f"SET SESSION max_statement_time = {max(timeout_s, 0.001):.3f}")
            else:
                cur.execute(f"SET SESSION max_execution_time = {max(1, round(timeout_s * 1000))}")
            cur.execute("START TRANSACTION READ ONLY")

    def execute(self, con: Connection, sql: str) -> Stream:
        cursor = con.cursor(SSCursor)  # unbuffered: rows past the cap are counted, not kept
        cursor.execute(sql)  # no arguments: PyMySQL leaves `%` alone
        return cursor, iter(cursor.fetchone, None)

    def abandon(self, con: Connection, cursor: SSCursor, stream: Iterator[Any]) -> None:
        # The connection is discarded with the rest unread: PyMySQL would otherwise try to read
        # it from the closed socket when it collects the result (and warn that it could not).
        # PyMySQL's private API (as the two calls in `end`): its stubs leave it out
        result = cursor._result  # type: ignore[attr-defined]
        if result is not None:
            result.unbuffered_active = False

    def describe(self, con: Connection, cursor: SSCursor, sql: str) -> tuple[list[str], list[str]]:
        description = cursor.description or ()
        return [d[0] for d in description], [_TYPE_NAMES.get(d[1], str(d[1])) for d in description]

    def stopper(self, engine: Engine, con: Connection) -> Callable[[], None]:
        connection_id = con.thread_id()

        def stop() -> None:
            # A fresh connection, not the pool's: every pooled one may be busy running.
            cargs, cparams = engine.dialect.create_connect_args(engine.url)
            other = pymysql.connect(*cargs, **{"connect_timeout": 10, **cparams})
            try:
                with other.cursor() as cur:
                    cur.execute(f"KILL QUERY {int(connection_id)}")
            finally:
                other.close()

        return stop

    def end(self, con: Connection) -> None:
        # A statement can leave state in its session that outlives a rollback: `GET_LOCK()`
        # locks, user variables, `sql_mode`, prepared statements, HANDLERs, `USE`. The server's
        # COM_RESET_CONNECTION clears all of it but the default database (and rolls back), so
        # the next run on this pooled connection starts clean. PyMySQL has no public call for
        # it; when the command fails, the error discards the connection instead.
        con._execute_command(_COM_RESET_CONNECTION, b"")  # type: ignore[attr-defined]
        con._read_ok_packet()  # type: ignore[attr-defined]
        if self.url.database:
            con.select_db(self.url.database)

    def read_tables(self, con: Connection) -> list[TableInfo]:
        args = (self.url.database, _SYSTEM_SCHEMAS)
        with con.cursor() as cur:
            cur.execute(_TABLES_SQL, args)
            tables = cur.fetchall()
            cur.execute(_COLUMNS_SQL, args)
            columns: dict[tuple[str, str], list[ColumnInfo]] = {}
            for schema, table, column, type_, comment in cur.fetchall():
                info = ColumnInfo(name=column, type=type_, description=comment or "")
                columns.setdefault((schema, table), []).append(info)
        return [
            TableInfo(
                name=qualified(schema, table, self.dialect),
                columns=tuple(columns.get((schema, table), ())),
                description="" if kind == "VIEW" else comment or "",
                row_count=rows,
            )
            for schema, table, kind, comment, rows in tables
        ]

    def read_statistics(
        self, con: Connection, tables: Sequence[TableInfo], values: int
    ) -> dict[str, TableProfile]:
        return read_statistics(
            con,
            tables,
            values,
            database=self.url.database,
            system=_SYSTEM_SCHEMAS,
            mariadb=self.mariadb,
            dialect=self.dialect,
        )

    def translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        text = str(exc)
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        if code in _TIMEOUTS:
            return QueryTimeout(timeout_s)
        if code in _OUT_OF_MEMORY:
            return engine_memory(self.limits, text)
        if code in _OVER_TEMP:
            return engine_temp(self.limits, text)
        if code in _REFUSED:
            return PermissionDenied(
                f"MySQL refused this statement: {_message(exc)}",
                hint="Only read-only queries on tables the bot's login may read are allowed.",
                engine_message=text,
            )
        if code in _GONE or isinstance(exc, pymysql.err.InterfaceError):
            return WarehouseUnavailable(
                f"The MySQL connection failed: {_message(exc)}",
                hint=self.unavailable_hint(),
                engine_message=text,
            )
        return QueryFailed(
            f"MySQL error: {_message(exc)}", hint=_HINTS.get(code, ""), engine_message=text
        )

    def unavailable_hint(self) -> str:
        url = self.url
        return (
            f"Check that MySQL/MariaDB is running at {url.host or 'localhost'}:{url.port or 3306}, "
            f"that user {url.username or '(default)'!r} may connect to database "
            f"{url.database or '(none)'!r}, and the password (QUERYBOT_WAREHOUSE)."
        )


def _grants(cur: Cursor) -> set[tuple[str, str]]:
    """(privilege, level) pairs granted to the current user and its active role, the level as
    written by SHOW GRANTS without quotes (`*.*`, `shop.*`, `shop.orders`)."""
    cur.execute("SHOW GRANTS")
    found: set[tuple[str, str]] = set()
    for (line,) in cur.fetchall():
        if match := _GRANT.match(line):
            level = match.group(2).replace("`", "").strip()
            privileges = _COLUMNS.sub("", match.group(1)).split(",")
            found |= {(p.strip().upper(), level) for p in privileges}
    return found


def _applicable_roles(cur: Cursor, *, all_at_once: bool) -> list[str]:
    """`SET ROLE` statements that enable, in turn, each role the user could enable itself."""
    try:
        cur.execute("SELECT DISTINCT ROLE_NAME FROM information_schema.APPLICABLE_ROLES")
    except pymysql.err.MySQLError:  # servers without roles
        return []
    roles = [r[0] for r in cur.fetchall()]
    if all_at_once:  # MySQL 8: role names carry hosts; enable them all at once
        return ["SET ROLE ALL"] if roles else []
    return ["SET ROLE `" + role.replace("`", "``") + "`" for role in roles]


def _message(exc: BaseException) -> str:
    """PyMySQL's `(code, 'text')` as `text`."""
    if len(exc.args) >= 2 and isinstance(exc.args[1], str):
        return exc.args[1].strip().splitlines()[0] if exc.args[1].strip() else first_line(exc)
    return first_line(exc)

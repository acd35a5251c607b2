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
`max_heap_table_size`) from `RunLimits.engine_memory_mb`. Temporary tables on disk are the server's
to bound (MariaDB 11.5+ `max_tmp_session_space_usage`, otherwise the size of `tmpdir`).
A run naming an identity (`RunContext.identity`) enables that role with `SET ROLE` inside the
transaction, and the connection goes back to the login's default role after it (`act_as`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pymysql
from pymysql.connections import Connection
from pymysql.constants import FIELD_TYPE
from pymysql.cursors import SSCursor
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
from connectors.limits import RunLimits, engine_memory, engine_temp
from connectors.sql.flavor import Stream, qualified
from connectors.sql.mysql_roles import (
    act_as,
    applicable_roles,
    current_role,
    driver_message,
    grants,
    own_reads,
    refuse_privileged,
    set_role,
    unreadable,
)
from connectors.sql.mysql_stats import read_statistics

#: In-memory temporary tables may use this share of `RunLimits.engine_memory_mb`.
_TMP_TABLE_SHARE = 8
#: Out of memory (ER_OUTOFMEMORY, ER_OUT_OF_SORTMEMORY, ER_OUT_OF_RESOURCES).
_OUT_OF_MEMORY = frozenset({1037, 1038, 1041})
#: A temporary table is full (ER_RECORD_FILE_FULL), or the session's temp space is used up
#: (MariaDB 11.5+: ER_TMP_SESSION_SPACE_USAGE, ER_TMP_TOTAL_SPACE_USAGE).
_OVER_TEMP = frozenset({1114, 4204, 4205})

#: MySQL 5.7.3+ and MariaDB 10.2.4+: reset the session without re-authenticating.
_COM_RESET_CONNECTION = 0x1F

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

    def __init__(self, url: URL, limits: RunLimits) -> None:
        self.url = url.set(drivername="mysql+pymysql")
        self.mariadb = True
        self.limits = limits
        #: The login (`user@host`) and the statement that enables the role(s) a connection
        #: starts with ("" on a server without roles): `end` runs it after every run.
        self.login = ""
        self.home_role = ""
        #: What the login may SELECT on by its own grants (every role it acts as reads it too).
        self.own_reads: list[str] = []

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
            found = grants(cur)
            cur.execute("SELECT CURRENT_USER()")
            self.login = str(cur.fetchone()[0])  # type: ignore[index]
            self.own_reads = own_reads(cur, self.login)
            roles = applicable_roles(cur, all_at_once=not self.mariadb)
            if roles is not None:
                # what each run goes back to: the default role (MySQL: every default one)
                self.home_role = set_role(current_role(cur)) if self.mariadb else "SET ROLE DEFAULT"
            for role in roles or []:
                cur.execute(role)
                found |= grants(cur)
        refuse_privileged(self.login, found)

    def act_as(self, con: Connection, identity: str) -> None:
        if not self.home_role:
            raise PermissionDenied(
                f"querybot cannot run queries as {identity!r}: this MySQL server has no roles.",
                hint="Use MySQL 8 or MariaDB 10.0.5 or later, or remove run_as from this "
                "warehouse in querybot's config file.",
            )
        act_as(con, identity, self.login, self.own_reads)

    def unreadable(self, con: Connection, identity: str, tables: Sequence[TableInfo]) -> list[str]:
        self.act_as(con, identity)
        return unreadable(con, tables)

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
        if self.home_role:  # the reset keeps the role a run enabled: the login's again
            with con.cursor() as cur:
                cur.execute(self.home_role)

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
                f"MySQL refused this statement: {driver_message(exc)}",
                hint="Only read-only queries on tables the bot's login may read are allowed.",
                engine_message=text,
            )
        if code in _GONE or isinstance(exc, pymysql.err.InterfaceError):
            return WarehouseUnavailable(
                f"The MySQL connection failed: {driver_message(exc)}",
                hint=self.unavailable_hint(),
                engine_message=text,
            )
        return QueryFailed(
            f"MySQL error: {driver_message(exc)}", hint=_HINTS.get(code, ""), engine_message=text
        )

    def unavailable_hint(self) -> str:
        url = self.url
        return (
            f"Check that MySQL/MariaDB is running at {url.host or 'localhost'}:{url.port or 3306}, "
            f"that user {url.username or '(default)'!r} may connect to database "
            f"{url.database or '(none)'!r}, and the password (QUERYBOT_WAREHOUSE)."
        )

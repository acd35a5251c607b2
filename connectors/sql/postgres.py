"""PostgreSQL through psycopg 3: read-only sessions and transactions, `statement_timeout` per run.

Every session starts with `default_transaction_read_only=on` and every run is its own
`READ ONLY` transaction, rolled back at the end, so INSERT, UPDATE, DDL, `CREATE TEMP TABLE` and
`nextval()` fail in the engine. A read-only transaction does not stop a superuser (or a member
of `pg_read_server_files`, `pg_write_server_files`, `pg_execute_server_program`, or a login
granted EXECUTE on `pg_read_file()`, `lo_export()` and the like) from `COPY ... TO '/file'` or
reading server files, and no session setting can take those powers away (a superuser can
`SET ROLE` back from inside a SELECT), so such logins are refused outright.
Statements go through the extended protocol (`Cursor.stream`), which accepts one statement only,
in single-row mode, so the bot never receives a batch of rows it has not measured; and a query
runs inside a wrapper that measures every value in the backend, which fails the statement
rather than send a value over `RunLimits.max_cell_bytes` (`ServerBounds`).
`work_mem` is set per run from `RunLimits.engine_memory_mb`; `temp_file_limit` only a superuser
may set, so a login without one is refused unless the risk is accepted (`check_temp`).
A run naming an identity (`RunContext.identity`) runs `SET LOCAL ROLE` inside that transaction,
so the role's grants and row-level security policies decide what the statement reads; the
login must be granted the role (and, being checked as above, no privileged one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
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
from connectors.limits import SETTINGS, ResourceLimitExceeded, RunLimits, engine_memory
from connectors.sql import postgres_login as login_checks
from connectors.sql.flavor import Stream, first_line, qualified
from connectors.sql.postgres_bounds import ServerBounds
from connectors.sql.postgres_stats import read_statistics

#: A sort or hash may use this share of `RunLimits.engine_memory_mb` (a plan can hold several).
_WORK_MEM_SHARE = 16

#: Out of memory; over temp_file_limit; a value past PostgreSQL's own limits (1 GB a value,
#: 134,217,727 array elements).
_OUT_OF_MEMORY, _OVER_TEMP, _TOO_LARGE = "53200", "53400", "54000"
#: The internal error of an allocation past 1 GB (a value doubled past it, e.g. `s || s`).
_HUGE_ALLOC = "invalid memory alloc request size"

#: The superuser and server-file roles the login is or belongs to: each role's name, whether it
#: is a superuser, whether it is the login itself, whether the login may `SET ROLE` to it
#: (PostgreSQL 16 can grant membership without SET; before 16 every member may) and whether the
#: login holds its privileges without `SET ROLE` (membership with INHERIT).
_PRIVILEGED_SQL = """
SELECT r.rolname, r.rolsuper, r.rolname = current_user,
       CASE WHEN pg_catalog.current_setting('server_version_num')::int >= 160000
            THEN pg_catalog.pg_has_role(current_user, r.oid, 'SET') ELSE true END,
       pg_catalog.pg_has_role(current_user, r.oid, 'USAGE')
FROM pg_catalog.pg_roles r
WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
  AND (r.rolsuper OR r.rolname IN
       ('pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program'))
ORDER BY r.rolname
"""

#: PostgreSQL's identifier limit (NAMEDATALEN - 1 bytes): longer names are silently cut.
_MAX_NAME = 63

#: Server-file functions revoked from PUBLIC by default that an administrator may GRANT EXECUTE
#: on one by one: a login holding any of them reads or writes server files without any role.
_FILE_FUNCTIONS_SQL = """
SELECT DISTINCT p.proname FROM pg_catalog.pg_proc p
WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace
  AND p.proname IN ('pg_read_file', 'pg_read_binary_file', 'pg_ls_dir', 'pg_stat_file',
                    'lo_import', 'lo_export')
  AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
ORDER BY 1
"""

#: Readable tables, views, materialized views and foreign tables outside the system schemas;
#: partitions are left out (their parent stands for them). `reltuples` is -1 before ANALYZE.
_TABLES_SQL = """
SELECT n.nspname, c.relname, pg_catalog.obj_description(c.oid, 'pg_class'),
       CASE WHEN c.relkind IN ('r', 'm') AND c.reltuples >= 0 THEN c.reltuples::bigint END
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
  AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
ORDER BY 1, 2
"""

_COLUMNS_SQL = """
SELECT n.nspname, c.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
       pg_catalog.col_description(c.oid, a.attnum)
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnum > 0 AND NOT a.attisdropped
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
ORDER BY 1, 2, a.attnum
"""

#: The oid and schema oid of each table named (as the catalog writes names), for the login.
_OIDS_SQL = """
SELECT t.name, c.oid, c.relnamespace
FROM pg_catalog.unnest(%s::text[]) AS t(name)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(t.name)
"""

#: Of those oids, the ones the current role (after SET ROLE) may not read.
_UNREADABLE_SQL = """
SELECT t.name
FROM ROWS FROM (pg_catalog.unnest(%s::text[]), pg_catalog.unnest(%s::oid[]),
                pg_catalog.unnest(%s::oid[])) AS t(name, rel, nsp)
WHERE NOT (pg_catalog.has_schema_privilege(t.nsp, 'USAGE')
           AND pg_catalog.has_table_privilege(t.rel, 'SELECT'))
"""

#: Server shutting down or starting, too many connections (SQLSTATE class 08 is added to these).
_GONE = frozenset({"57P01", "57P02", "57P03", "53300"})

_REFUSED = (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege)

#: SQLSTATE (or its two-character class) -> what to change.
_HINTS = {
    "42601": "Fix the SQL syntax (one statement only).",
    "42P01": "Use only the tables that exist in the schema.",
    "42703": "Check the column names against the schema.",
    "42883": "Check function names and argument types; cast where needed.",
    "42702": "Qualify the column with its table.",
    "42803": "Every selected column must be grouped or aggregated.",
    "22": "Check casts, divisions and the types of compared values.",
    "53": "Aggregate, filter or select fewer columns.",
}


class PostgresFlavor:
    """PostgreSQL 12 or later."""

    name = "postgresql"
    dialect = "postgres"
    errors: tuple[type[BaseException], ...] = (psycopg.Error,)

    def __init__(self, url: URL, limits: RunLimits) -> None:
        self.url = url.set(drivername="postgresql+psycopg")
        self.limits = limits
        self._bounds = ServerBounds(limits)

    def create_engine(self, pool_size: int) -> Engine:
        url = self.url
        options = " ".join(
            filter(None, [str(url.query.get("options", "")), "-c default_transaction_read_only=on"])
        )
        connect_args: dict[str, Any] = {"options": options, "application_name": "querybot"}
        if "connect_timeout" not in url.query:
            connect_args["connect_timeout"] = 10
        return create_engine(
            url,
            connect_args=connect_args,
            poolclass=QueuePool,
            pool_size=pool_size,
            max_overflow=0,
            pool_pre_ping=True,
        )

    def check_login(self, con: psycopg.Connection) -> None:
        with con.cursor() as cur:
            cur.execute(_PRIVILEGED_SQL)
            roles: list[tuple[str, bool, bool, bool, bool]] = cur.fetchall()
            cur.execute(_FILE_FUNCTIONS_SQL)
            functions = [r[0] for r in cur.fetchall()]
            cur.execute("SELECT current_user")
            user = cur.fetchone()[0]  # type: ignore[index]
            temp_limit, login = cur.execute(login_checks.SQL).fetchone()  # type: ignore[misc]
        con.rollback()
        if roles:
            raise login_checks.privileged(user, roles)
        if functions:
            raise PermissionDenied(
                f"Refusing to query PostgreSQL as {user!r}: it may execute "
                f"{', '.join(functions)}, which read or write server files even in a read-only "
                "transaction.",
                hint=f"REVOKE EXECUTE ON FUNCTION {functions[0]}(...) FROM {user}; (for each one "
                "listed), or connect as a login that was never granted them.",
            )
        login_checks.check_temp(temp_limit, login, self.limits)

    def begin(self, con: psycopg.Connection, timeout_s: float) -> None:
        # Without parameters psycopg uses the simple protocol: both settings in one round trip.
        # `SET LOCAL` ends with the transaction, so a pooled connection keeps no run's settings.
        ms = max(1, round(timeout_s * 1000))
        work_mem = max(64, self.limits.engine_memory_mb * 1024 // _WORK_MEM_SHARE)
        settings = (
            f"SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {ms}; "
            f"SET LOCAL work_mem = '{work_mem}kB'"
        )
        if self.limits.allow_unbounded_temp:
            con.execute(settings)
            return
        # The same round trip reads the session's temp_file_limit (a later connection may have
        # none): the last of the results.
        cursor = con.execute(f"{settings}; {login_checks.SQL}")
        while cursor.nextset():
            pass
        temp_limit, login = cursor.fetchone()  # type: ignore[misc]
        login_checks.check_temp(temp_limit, login, self.limits)

    def act_as(self, con: psycopg.Connection, identity: str) -> None:
        # `SET LOCAL` ends with the run's transaction: the pooled connection is the login again.
        # The gate refuses set_config() and SET, so a statement cannot switch back.
        if len(identity.encode()) > _MAX_NAME:  # PostgreSQL would cut it: another role's name
            raise PermissionDenied(
                f"querybot may not run queries as the PostgreSQL role {identity!r}: role names "
                f"are at most {_MAX_NAME} bytes.",
                hint="Change the run_as rules in querybot's config file to the role's name.",
            )
        statement = pg_sql.SQL("SET LOCAL ROLE {}").format(pg_sql.Identifier(identity))
        try:
            con.execute(statement)
        except psycopg.Error as exc:
            user = con.info.user
            raise PermissionDenied(
                f"querybot may not run queries as the PostgreSQL role {identity!r}: "
                f"{first_line(exc)}",
                hint=f'Create the role and grant it to the bot\'s login (GRANT "{identity}" TO '
                f"{user}), or change the run_as rules in querybot's config file.",
                engine_message=str(exc),
            ) from exc

    def unreadable(
        self, con: psycopg.Connection, identity: str, tables: Sequence[TableInfo]
    ) -> list[str]:
        names = [t.name for t in tables]
        with con.cursor() as cur:
            found = cur.execute(_OIDS_SQL, (names,)).fetchall()
        self.act_as(con, identity)
        with con.cursor() as cur:
            columns = [[row[i] for row in found] for i in range(3)]
            refused = {row[0] for row in cur.execute(_UNREADABLE_SQL, columns).fetchall()}
        resolved = {row[0] for row in found}
        return [name for name in names if name in refused or name not in resolved]

    def execute(self, con: psycopg.Connection, sql: str) -> Stream:
        statement = self._bounds.statement(con, sql)
        cursor = con.cursor()
        return cursor, cursor.stream(statement, size=1)

    def abandon(self, con: psycopg.Connection, cursor: Any, stream: Iterator[Any]) -> None:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # psycopg cancels the statement and drops what is in flight

    def describe(
        self, con: psycopg.Connection, cursor: psycopg.Cursor, sql: str
    ) -> tuple[list[str], list[str]]:
        description = cursor.description
        if description is None:
            # `stream()` keeps no description when there were no rows. DECLARE plans the
            # statement (only row-returning ones got here) without running it, and describes it.
            with con.cursor(name="querybot_describe") as declared:
                declared.execute(sql)
                description = declared.description or []
        types = con.adapters.types
        names = [getattr(types.get(d.type_code), "name", str(d.type_code)) for d in description]
        return [d.name for d in description], names

    def stopper(self, engine: Engine, con: psycopg.Connection) -> Callable[[], None]:
        pid = con.info.backend_pid

        def stop() -> None:
            # A fresh connection, not the pool's: every pooled one may be busy running.
            cargs, cparams = engine.dialect.create_connect_args(engine.url)
            with psycopg.connect(*cargs, **cparams, connect_timeout=10) as other:
                other.execute("SELECT pg_catalog.pg_cancel_backend(%s)", (pid,))

        return stop

    def end(self, con: psycopg.Connection) -> None:
        # Session-level advisory locks outlive the rollback: a pooled connection keeping one
        # would block other sessions long after the run.
        con.execute("SELECT pg_catalog.pg_advisory_unlock_all()")
        con.rollback()

    def read_tables(self, con: psycopg.Connection) -> list[TableInfo]:
        with con.cursor() as cur:
            tables = cur.execute(_TABLES_SQL).fetchall()
            columns: dict[tuple[str, str], list[ColumnInfo]] = {}
            for schema, table, column, type_, comment in cur.execute(_COLUMNS_SQL).fetchall():
                info = ColumnInfo(name=column, type=type_, description=comment or "")
                columns.setdefault((schema, table), []).append(info)
        return [
            TableInfo(
                name=qualified(schema, table, self.dialect),
                columns=tuple(columns.get((schema, table), ())),
                description=comment or "",
                row_count=rows,
            )
            for schema, table, comment, rows in tables
        ]

    def read_statistics(
        self, con: psycopg.Connection, tables: Sequence[TableInfo], values: int
    ) -> dict[str, TableProfile]:
        return read_statistics(con, tables, values, self.dialect)

    def translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        text = str(exc)
        if isinstance(exc, pg_errors.QueryCanceled) and "statement timeout" in text:
            return QueryTimeout(timeout_s)
        if (too_long := self._bounds.cell_error(text)) is not None:
            return too_long
        sqlstate = getattr(exc, "sqlstate", None) or ""
        if sqlstate == _TOO_LARGE or _HUGE_ALLOC in text:
            return ResourceLimitExceeded(
                "it built a value larger than PostgreSQL allows one value to be (1 GB), far "
                "past what one value of the result may be",
                SETTINGS["max_cell_bytes"],
                engine_message=text,
            )
        if sqlstate == _OVER_TEMP:
            return ResourceLimitExceeded(
                "it needed more temporary files than PostgreSQL's temp_file_limit allows this "
                "login",
                "temp_file_limit",
                engine_message=text,
            )
        if sqlstate == _OUT_OF_MEMORY:
            return engine_memory(self.limits, text)
        if isinstance(exc, _REFUSED):
            return PermissionDenied(
                f"PostgreSQL refused this statement: {first_line(exc)}",
                hint="Only read-only queries on tables the bot's login may read are allowed.",
                engine_message=text,
            )
        if isinstance(exc, psycopg.OperationalError) and (
            not sqlstate or sqlstate.startswith("08") or sqlstate in _GONE
        ):
            return WarehouseUnavailable(
                f"The PostgreSQL connection failed: {first_line(exc)}",
                hint=self.unavailable_hint(),
                engine_message=text,
            )
        hint = _HINTS.get(sqlstate) or _HINTS.get(sqlstate[:2], "")
        return QueryFailed(f"PostgreSQL error: {first_line(exc)}", hint=hint, engine_message=text)

    def unavailable_hint(self) -> str:
        url = self.url
        return (
            f"Check that PostgreSQL is running at {url.host or 'localhost'}:{url.port or 5432}, "
            f"that user {url.username or '(default)'!r} may connect to database "
            f"{url.database or '(default)'!r}, and the password (QUERYBOT_WAREHOUSE)."
        )

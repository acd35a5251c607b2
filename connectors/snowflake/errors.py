"""Snowflake failures as connector errors a person (and the repair step) can act on.

The driver raises its DB-API classes; Snowflake's error number says what happened (604: the
query was cancelled, 630: it reached its statement timeout, 2003: no such object or no grant on
it, 3001: insufficient privileges, 390xxx: the login failed).
"""

from __future__ import annotations

from snowflake.connector import errors as sf

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    WarehouseUnavailable,
)

GRANTS_HINT = (
    "The bot's role needs USAGE on the warehouse, the database and each listed schema, and "
    "SELECT on their tables and views (README, Snowflake)."
)
CANCELLED = 604
TIMED_OUT = 630
NOT_FOUND = 2003
DENIED = 3001


def translate(exc: BaseException, *, timeout_s: float) -> ConnectorError:
    """The connector error for a driver exception (or a TimeoutError of the bot's own wait)."""
    if isinstance(exc, TimeoutError):
        return QueryTimeout(timeout_s)
    if not isinstance(exc, sf.Error):
        return WarehouseUnavailable(f"Snowflake failed: {exc}", engine_message=str(exc))
    errno = exc.errno or 0
    message = (exc.msg or str(exc)).strip()
    engine = message
    first = message.splitlines()[0] if message else type(exc).__name__
    if errno == CANCELLED:
        return QueryCancelled()
    if errno == TIMED_OUT:
        timeout = QueryTimeout(timeout_s)
        timeout.engine_message = engine
        return timeout
    if errno == DENIED or 390000 <= errno < 391000 or isinstance(exc, sf.ForbiddenError):
        kind = WarehouseUnavailable if errno >= 390000 else PermissionDenied
        return kind(f"Snowflake refused access: {first}", hint=GRANTS_HINT, engine_message=engine)
    if isinstance(exc, (sf.OperationalError, sf.InterfaceError, sf.ServiceUnavailableError)):
        return WarehouseUnavailable(
            f"Snowflake cannot be reached: {first}",
            hint="Check the network and the account identifier, then ask again.",
            engine_message=engine,
        )
    if errno == NOT_FOUND:
        return QueryFailed(
            f"Snowflake could not find it: {first}",
            hint="Use only the listed tables, qualified as SCHEMA.TABLE; a quoted name is "
            "case-sensitive. " + GRANTS_HINT,
            engine_message=engine,
        )
    if isinstance(exc, sf.ProgrammingError):
        return QueryFailed(
            f"Snowflake error: {first}", hint="Fix the SQL (Snowflake SQL).", engine_message=engine
        )
    return WarehouseUnavailable(f"Snowflake failed: {first}", engine_message=engine)

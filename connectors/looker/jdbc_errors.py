"""Java and JDBC exceptions from a JDBC driver as the errors of `connectors.base`.

The SQLSTATE class decides where the driver sets one, the Java exception's type otherwise; the
person sees the first line of the driver's message, and the whole message travels as the engine's.
`connectors.looker.jdbc` imports this after it has checked that the optional Java bridge is
installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jpype

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryFailed,
    QueryTimeout,
    WarehouseUnavailable,
)


def _java(name: str) -> Any:
    return jpype.JClass(name)


def _chain(exc: Any) -> Iterator[Any]:
    """The exception and its causes (Java's `getCause()` chain)."""
    seen = 0
    while exc is not None and seen < 10:
        yield exc
        exc = exc.getCause() if hasattr(exc, "getCause") else None
        seen += 1


def message(exc: Any) -> str:
    """The driver's whole message (Java's `getMessage()`), else the exception's text."""
    text = exc.getMessage() if hasattr(exc, "getMessage") else None
    return str(text) if text is not None else str(exc)


def first_line(exc: Any) -> str:
    """The message's first line, what a person is shown; the exception's type when it is empty."""
    text = message(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sql_state(exc: Any) -> str:
    """The SQLSTATE of the first SQLException in the chain that has one, else ''."""
    sql_exception = _java("java.sql.SQLException")
    for link in _chain(exc):
        if isinstance(link, sql_exception) and link.getSQLState():
            return str(link.getSQLState())
    return ""


def translate(
    exc: Any,
    *,
    name: str,
    connecting: bool = False,
    timeout_s: float = 0.0,
    unavailable_hint: str = "",
    login_hint: str = "",
) -> ConnectorError:
    """The connector error for a Java exception from a JDBC driver.

    The SQLSTATE class decides where the driver sets one (`08` connection, `28` login, `25`
    read-only transaction, `42` syntax or access rule, `22` data, `0A` unsupported); the
    exception's type otherwise. A non-SQL exception caused by an I/O failure means the warehouse
    cannot be reached.
    """
    sql_exception = _java("java.sql.SQLException")
    text = message(exc)
    line = first_line(exc)
    state = _sql_state(exc)
    io_failure = any(isinstance(link, _java("java.io.IOException")) for link in _chain(exc))
    if isinstance(exc, _java("java.sql.SQLTimeoutException")):
        timeout = QueryTimeout(timeout_s)
        timeout.engine_message = text
        return timeout
    if state.startswith("28") or isinstance(
        exc, _java("java.sql.SQLInvalidAuthorizationSpecException")
    ):
        return PermissionDenied(
            f"{name} refused the login: {line}", hint=login_hint, engine_message=text
        )
    if (
        state.startswith("08")
        or io_failure
        or isinstance(
            exc,
            (
                _java("java.sql.SQLNonTransientConnectionException"),
                _java("java.sql.SQLTransientConnectionException"),
                _java("java.sql.SQLRecoverableException"),
            ),
        )
        or (connecting and not isinstance(exc, sql_exception))
    ):
        return WarehouseUnavailable(
            f"Cannot reach {name}: {line}", hint=unavailable_hint, engine_message=text
        )
    if state.startswith("25"):
        return PermissionDenied(
            f"{name} refused to write on a read-only connection: {line}",
            hint="Only read-only queries are allowed.",
            engine_message=text,
        )
    if state == "42501" and "privilege" in text.lower() and "not found" not in text.lower():
        return PermissionDenied(
            f"{name} refused access: {line}",
            hint="Ask an admin to grant the bot's login access to it.",
            engine_message=text,
        )
    if state.startswith("0A") or isinstance(exc, _java("java.sql.SQLFeatureNotSupportedException")):
        return QueryFailed(
            f"{name} does not support this: {line}",
            hint="Rewrite the query without that feature.",
            engine_message=text,
        )
    if state.startswith("22"):
        return QueryFailed(
            f"{name} error: {line}",
            hint="Check casts and the types of compared values.",
            engine_message=text,
        )
    if connecting:
        return WarehouseUnavailable(
            f"Cannot connect to {name}: {line}", hint=unavailable_hint, engine_message=text
        )
    return QueryFailed(
        f"{name} error: {line}",
        hint="Check the names against the listed fields and the dialect's rules.",
        engine_message=text,
    )

"""Running statements on a canary and judging the outcome: `Run` counts what executed, what
the engine refused for trying to write or reach a file (the gate should have stopped it first)
and what leaked the secret or /etc/passwd."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlglot.errors import SqlglotError

from connectors.base import Connector, ConnectorError, PermissionDenied
from connectors.sql.connector import SqlConnector
from tests.support.canary_data import secret_text

TIMEOUT_S = 2.0
#: Engine refusals that mean "this writes or reaches outside": the gate should have rejected
#: such a statement first. DuckDB and SQLite by message, MariaDB by error code (read-only
#: transaction, table privileges, access denied, SUPER needed, secure_file_priv, read-only table).
BLOCKED = ("read-only", "read only", "readonly", "permission", "external access", "not authorized")
MARIADB_BLOCKED = frozenset({1792, 1142, 1044, 1045, 1227, 1290, 1036})
PASSWD_LINE = "root:x:0:0"


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
        for secret in (secret_text(), PASSWD_LINE):
            if secret in dump:
                self.leaked.append((sql, secret))


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

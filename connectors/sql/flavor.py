"""What `SqlConnector` needs from each database engine (PostgreSQL, MySQL/MariaDB, SQLite).

`SqlConnector` owns the pool, the run loop (row cap, counting the rest), the metadata cache and
name lookup; a flavor owns everything engine-specific: how a connection is opened and locked
down, how a run is made read-only and time-limited, the catalog queries, and error mapping.
Flavors work on the DB-API driver connection (psycopg, PyMySQL, sqlite3), not on SQLAlchemy's
execution layer, so what is sent is exactly the statement given, with no parameter rewriting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from sqlalchemy.engine import Engine
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from connectors.base import ConnectorError, TableInfo, TableProfile

#: A DB-API cursor after its statement ran, and an iterator over its rows (consumed once).
Stream = tuple[Any, Iterator[tuple[Any, ...]]]


class Flavor(Protocol):
    """One engine's side of `SqlConnector`."""

    #: The connector name (`postgresql`, `mysql`, `sqlite`).
    name: str
    #: The sqlglot dialect.
    dialect: str
    #: Driver exception classes `translate` understands.
    errors: tuple[type[BaseException], ...]

    def create_engine(self, pool_size: int) -> Engine:
        """A pooled engine whose connections are already locked down as far as connecting can."""
        ...

    def check_login(self, con: Any) -> None:
        """Raise PermissionDenied when the login could escape a read-only transaction (a
        superuser, a server-file privilege); WarehouseUnavailable when the database is unusable.
        The connection is discarded afterwards, so this may change session state."""
        ...

    def begin(self, con: Any, timeout_s: float) -> None:
        """Start a read-only transaction whose statements stop after `timeout_s`."""
        ...

    def execute(self, con: Any, sql: str) -> Stream:
        """Send `sql` as one statement (the driver or server refuses several) and stream rows
        one at a time (never a batch whose size the bot has not measured)."""
        ...

    def abandon(self, con: Any, cursor: Any, stream: Iterator[Any]) -> None:
        """Stop reading a result part-way (a bound was reached): the server stops sending, and
        nothing left unread is read later; the connection is discarded afterwards."""
        ...

    def describe(self, con: Any, cursor: Any, sql: str) -> tuple[list[str], list[str]]:
        """Column names and engine type names of a finished stream (no types when the driver
        reports none)."""
        ...

    def stopper(self, engine: Engine, con: Any) -> Callable[[], None]:
        """How another thread stops the statement `con` is running (called at most once, while
        `con` is still checked out for that run)."""
        ...

    def end(self, con: Any) -> None:
        """Roll back the run's transaction and clear per-run settings."""
        ...

    def read_tables(self, con: Any) -> list[TableInfo]:
        """Every table and view the login may read, in one catalog pass (inside `begin`)."""
        ...

    def read_statistics(
        self, con: Any, tables: Sequence[TableInfo], values: int
    ) -> dict[str, TableProfile]:
        """Profiles of `tables` from the engine's statistics (inside `begin`), no table read:
        see `connectors.base.KeepsStatistics.statistics`."""
        ...

    def translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        """The connector error for a driver exception raised while running."""
        ...

    def unavailable_hint(self) -> str:
        """What to check when the database cannot be reached (host, port, credentials)."""
        ...


@runtime_checkable
class ActsAsFlavor(Protocol):
    """An engine whose runs can act as another role than the login (PostgreSQL, MySQL/MariaDB).
    `end` leaves the connection as the login again."""

    def act_as(self, con: Any, identity: str) -> None:
        """Inside the run's transaction (after `begin`): from here on, until `end`, statements
        run with `identity`'s privileges. PermissionDenied when the login may not."""
        ...

    def unreadable(self, con: Any, identity: str, tables: Sequence[TableInfo]) -> list[str]:
        """The names of `tables` `identity` may not SELECT from (inside `begin`)."""
        ...


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (engine messages can run to many lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def qualified(schema: str, table: str, dialect: str) -> str:
    """`schema.table` written for `dialect`, quoting parts that are not plain identifiers or
    whose case the dialect would otherwise fold (`public."Orders"` in PostgreSQL)."""
    engine = Dialect.get_or_raise(dialect)

    def ident(name: str) -> exp.Identifier:
        node = exp.to_identifier(name)
        if engine.case_sensitive(name):
            node.set("quoted", True)
        return node

    return exp.table_(ident(table), db=ident(schema)).sql(dialect=dialect)

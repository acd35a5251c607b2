"""The one small interface every warehouse connector implements, and the types it speaks.

Connectors know nothing of Slack or models: they list tables, describe them, and run one
already-vetted read-only statement with a row cap and a timeout, which another thread may
cancel by its job key.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ColumnInfo:
    """One column: its name, engine type and human description (empty when the engine has none)."""

    name: str
    type: str
    description: str = ""


@dataclass(frozen=True)
class TableInfo:
    """One table. `name` is fully qualified in the connector's dialect (e.g. `demo.main.orders`)."""

    name: str
    columns: tuple[ColumnInfo, ...]
    description: str = ""
    row_count: int | None = None

    @property
    def short_name(self) -> str:
        """The last part of the qualified name (`orders`)."""
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class ColumnProfile:
    """What occurs in one column."""

    #: Distinct non-null values (an engine's estimate when it comes from statistics).
    distinct: int | None
    #: Most frequent first; every distinct non-null value when `complete`.
    values: tuple[str, ...] = ()
    complete: bool = False


@dataclass(frozen=True)
class TableProfile:
    row_count: int | None
    #: By column name as the connector spells it; text columns only carry values.
    columns: Mapping[str, ColumnProfile] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryResult:
    """What one execution returned.

    `rows` holds at most the `max_rows` asked for; `total_rows` counts every row the statement
    produced (so `truncated` is `total_rows > len(rows)`).
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    total_rows: int
    elapsed_s: float
    bytes_processed: int | None = None
    column_types: list[str] = field(default_factory=list)
    #: A link to the warehouse's own record of the run (a BigQuery job), for the sources line.
    job_url: str | None = None

    @property
    def truncated(self) -> bool:
        return self.total_rows > len(self.rows)


@dataclass(frozen=True)
class CostEstimate:
    """What running a statement will cost, known before it runs (e.g. a BigQuery dry run)."""

    bytes_processed: int | None = None
    cost_usd: float | None = None
    #: Plain-language warnings (a partitioned table scanned without a partition filter).
    warnings: tuple[str, ...] = ()
    #: Why the statement must not be offered for approval (over the bytes cap), or "".
    refusal: str = ""


@dataclass(frozen=True)
class RunContext:
    """Who and what a run is for. `job_key` is unique per approval: a connector that can
    (BigQuery) derives its job id from it so a repeated approval never runs twice; `labels`
    are short key/values for the warehouse's own job records. `identity` is the warehouse
    identity the statement runs as (a PostgreSQL or MariaDB role, a BigQuery service account, a
    name with a table allowlist), "" for the connector's own login: a connector that cannot act
    as another identity (`acts_as` is False) refuses a run naming one rather than run it as its
    login."""

    job_key: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    identity: str = ""


def acts_as(connector: object) -> bool:
    """Whether `connector` can run a statement as another identity than its login
    (`RunContext.identity`), and so implements `ActsAs`."""
    return bool(getattr(connector, "acts_as_identities", False)) and isinstance(connector, ActsAs)


class ConnectorError(Exception):
    """A warehouse problem, with a message a user can read and a hint of what to do next.

    `retryable_by_repair` tells the agent whether rewriting the SQL may help (a bad column) or not
    (the warehouse is down).
    """

    retryable_by_repair: bool = False

    def __init__(self, message: str, *, hint: str = "", engine_message: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.engine_message = engine_message or message


class QueryFailed(ConnectorError):
    """The engine refused or failed the statement (syntax, binder, type errors)."""

    retryable_by_repair = True


class QueryTimeout(ConnectorError):
    """The statement ran longer than the timeout and was interrupted."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(
            f"The query ran longer than {timeout_s:g} s and was stopped.",
            hint="Ask for less data (a shorter period, fewer columns) or an aggregate.",
        )
        self.timeout_s = timeout_s


class QueryCancelled(ConnectorError):
    """Someone stopped the statement while it ran (`Connector.cancel`); never repaired."""

    def __init__(self) -> None:
        super().__init__("The query was cancelled while it ran.")


class PermissionDenied(ConnectorError):
    """The warehouse refused access (or the statement tried to write on a read-only connection)."""


class WarehouseUnavailable(ConnectorError):
    """The warehouse cannot be reached or opened."""


def plain_name(name: str) -> str:
    """A qualified name lower-cased, each part without surrounding spaces or identifier quotes."""
    return ".".join(part.strip().strip('"`') for part in name.strip("`").lower().split("."))


def find_table(tables: Sequence[TableInfo], name: str, *, qualify_hint: str) -> TableInfo:
    """The one table `name` means: the full name or a trailing part of it (`schema.table`,
    `table`), ignoring case and quotes. Raises QueryFailed when it is unknown (with a "did you
    mean") or ambiguous (with `qualify_hint`)."""
    wanted = plain_name(name)
    matches = [
        t for t in tables if (full := plain_name(t.name)) == wanted or full.endswith("." + wanted)
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(t.name for t in matches)
        raise QueryFailed(f"The table name {name!r} is ambiguous: {names}.", hint=qualify_hint)
    known = {plain_name(t.name): t.name for t in tables} | {
        plain_name(t.short_name): t.short_name for t in tables
    }
    close = difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.6)
    suggestion = f" Did you mean {', '.join(known[c] for c in close)}?" if close else ""
    raise QueryFailed(
        f"There is no table named {name!r}.{suggestion}",
        hint="List the tables to see what exists.",
    )


@runtime_checkable
class Connector(Protocol):
    """A read-only warehouse."""

    #: A short name for people and sources lines, e.g. "duckdb".
    name: str
    #: The sqlglot dialect its SQL is written in.
    dialect: str

    def list_tables(self) -> list[TableInfo]:
        """Every table (and view) the connector exposes, with columns and descriptions."""
        ...

    def describe(self, table: str) -> TableInfo:
        """One table by qualified or short name; raises QueryFailed when unknown."""
        ...

    def estimate(self, sql: str) -> CostEstimate | None:
        """The cost of `sql` before it runs, or None when the engine cannot tell cheaply."""
        ...

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one statement: keep the first `max_rows` rows, count the rest, stop at timeout."""
        ...

    def cancel(self, job_key: str) -> bool:
        """Stop the run started with `RunContext(job_key=...)` if it still runs, from any
        thread; that run then raises QueryCancelled. True when something was stopped."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class ActsAs(Protocol):
    """A connector that can run as a warehouse identity other than its login (PostgreSQL's
    `SET LOCAL ROLE`, MariaDB's `SET ROLE`, BigQuery's impersonated service accounts), so the
    engine's grants (and row-level security, where it has it) apply to that identity; or, on engines
    without identities, one that holds each to a table allowlist (`TableAllowlist`). An optional
    addition to `Connector`, in force when `acts_as_identities` is True."""

    acts_as_identities: bool

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        """Those of `tables` (names as the catalog lists them) `identity` may not read. Raises
        PermissionDenied when the login may not act as `identity` at all."""
        ...


@runtime_checkable
class KeepsStatistics(Protocol):
    """A connector whose engine keeps column statistics (PostgreSQL's pg_stats, MySQL's
    histograms): an optional addition to `Connector`. The catalog reads profiles from them
    instead of scanning tables, and scans only what they leave out."""

    def statistics(self, tables: Sequence[TableInfo], *, values: int) -> dict[str, TableProfile]:
        """Profiles from the engine's statistics, by table name as in `tables`, without reading
        any table: row count, distinct counts, and up to `values` of each text column's values
        (most frequent first; `complete` only when the statistics hold every value). A table or
        column the engine keeps nothing about is left out; a part it lacks is None or empty."""
        ...

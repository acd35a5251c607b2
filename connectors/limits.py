"""Bounds on what one run may cost the bot and the engine, and the error a run ends in when it
reaches one.

The row cap bounds rows, not bytes: one row can hold a value of a gigabyte. So every connector
reads its result a row (or a small batch) at a time and measures it here: a value longer than
`max_cell_bytes`, or kept rows adding up to more than `max_result_bytes`, stop the run with
`ResourceLimitExceeded`, which names the bound, its setting and what to ask instead. The engine
bounds (`engine_memory_mb`, `engine_temp_mb`) are applied by each connector the engine's own
way (DuckDB's `memory_limit` and a watch on its temp directory, PostgreSQL's `work_mem`,
MariaDB's temporary-table sizes, SQLite's value length limit), and DuckDB's and SQLite's worker
processes run under an address-space limit derived from `engine_memory_mb`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from connectors.base import ConnectorError
from connectors.units import byte_size

MIB = 1024 * 1024

#: Rows DuckDB computes at once (its vector size): a value built from literals is at most
#: `max_result_bytes / DUCKDB_VECTOR_ROWS` long, so one vector of them stays within the bound.
DUCKDB_VECTOR_ROWS = 2048

#: What each bound is called in messages, and the setting that changes it.
SETTINGS = {
    "max_cell_bytes": "QUERYBOT_MAX_CELL_BYTES",
    "max_result_bytes": "QUERYBOT_MAX_RESULT_MB",
    "engine_memory_mb": "QUERYBOT_ENGINE_MEMORY_MB",
    "engine_temp_mb": "QUERYBOT_ENGINE_TEMP_MB",
}

#: The setting that lets PostgreSQL queries run without the DBA's temp_file_limit.
UNBOUNDED_TEMP_SETTING = "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP"

_ADVICE = "Select fewer or shorter columns, filter to fewer rows, or aggregate."


@dataclass(frozen=True)
class RunLimits:
    """What one run may use. The defaults are what the bot runs with unless settings say
    otherwise (`LimitSettings` reads the QUERYBOT_* variables in `SETTINGS`)."""

    #: One value (a cell) of the result, in bytes (UTF-8 for text).
    max_cell_bytes: int = MIB
    #: All the rows kept for the answer together, in bytes.
    max_result_bytes: int = 64 * MIB
    #: The engine's working memory for one connector (DuckDB memory_limit; PostgreSQL work_mem
    #: per sort or hash is a sixteenth of it; MariaDB's in-memory temporary tables an eighth).
    engine_memory_mb: int = 1024
    #: Temporary files DuckDB may write for one connector (PostgreSQL's temp_file_limit only a
    #: superuser may set: see docs/safety.md, "What a DBA must set"; it is the size querybot
    #: suggests there).
    engine_temp_mb: int = 2048
    #: Run PostgreSQL queries although the login's temp_file_limit is unset (the risk of one
    #: query filling the server's disk accepted); otherwise such a warehouse is refused.
    allow_unbounded_temp: bool = False

    def __post_init__(self) -> None:
        for name, setting in SETTINGS.items():
            if getattr(self, name) < 1:
                raise ValueError(f"{setting} must be at least 1 (got {getattr(self, name)}).")

    @property
    def built_value_bytes(self) -> int:
        """The longest value DuckDB may build from literals (`repeat`, `lpad`...): see
        `DUCKDB_VECTOR_ROWS`."""
        return max(1, min(self.max_cell_bytes, self.max_result_bytes // DUCKDB_VECTOR_ROWS))


class ResourceLimitExceeded(ConnectorError):
    """A run reached one of querybot's resource bounds and was stopped (never repaired: the
    approved statement itself asks for too much)."""

    def __init__(self, what: str, setting: str, *, engine_message: str = "") -> None:
        super().__init__(
            f"The query was stopped: {what} ({setting}).",
            hint=f"{_ADVICE} An administrator can raise {setting}.",
            engine_message=engine_message,
        )
        self.setting = setting


def cell_too_large(
    limits: RunLimits, column: str = "", engine_message: str = ""
) -> ResourceLimitExceeded:
    where = f" in column {column!r}" if column else ""
    return ResourceLimitExceeded(
        f"a value{where} is longer than the {byte_size(limits.max_cell_bytes)} one value may be",
        SETTINGS["max_cell_bytes"],
        engine_message=engine_message,
    )


def result_too_large(limits: RunLimits, kept: int) -> ResourceLimitExceeded:
    return ResourceLimitExceeded(
        f"the first {kept:,} rows already add up to more than the "
        f"{byte_size(limits.max_result_bytes)} a result may be",
        SETTINGS["max_result_bytes"],
    )


def engine_memory(limits: RunLimits, engine_message: str = "") -> ResourceLimitExceeded:
    return ResourceLimitExceeded(
        f"it needed more than the {byte_size(limits.engine_memory_mb * MIB)} of memory the "
        "warehouse may use for one query",
        SETTINGS["engine_memory_mb"],
        engine_message=engine_message,
    )


def engine_temp(limits: RunLimits, engine_message: str = "") -> ResourceLimitExceeded:
    return ResourceLimitExceeded(
        f"it wrote more than the {byte_size(limits.engine_temp_mb * MIB)} of temporary files the "
        "warehouse may write",
        SETTINGS["engine_temp_mb"],
        engine_message=engine_message,
    )


def value_bytes(value: Any, cap: int) -> int:
    """The size of one value in bytes (text as UTF-8), or something above `cap` as soon as it
    is known to be above it (a long text is not encoded, a long list not walked to its end)."""
    if value is None or isinstance(value, bool | int | float):
        return 8
    if isinstance(value, str):
        if len(value) > cap or value.isascii():
            return len(value)
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if isinstance(value, Mapping):
        return _sum_bytes((x for kv in value.items() for x in kv), cap)
    if isinstance(value, list | tuple | set | frozenset):
        return _sum_bytes(value, cap)
    return len(str(value))  # dates, decimals, UUIDs, intervals: short by nature


def _sum_bytes(values: Iterable[Any], cap: int) -> int:
    total = 0
    for item in values:
        total += 8 + value_bytes(item, cap - total)
        if total > cap:
            break
    return total


class Meter:
    """Measures a result as it is read: every row's values against the cell bound, the rows
    kept against the result bound. `names` gives the column names for messages (a driver may
    only know them once the first row arrived)."""

    def __init__(self, limits: RunLimits, names: Callable[[], Sequence[str]] = list) -> None:
        self.limits = limits
        self.names = names
        self.kept_bytes = 0
        self.kept_rows = 0

    def check(self, row: Sequence[Any], *, keep: bool) -> None:
        """Raise ResourceLimitExceeded when a value of `row` is too long or, for a kept row,
        when the kept rows grow past the result bound."""
        cap = self.limits.max_cell_bytes
        row_bytes = 0
        for i, value in enumerate(row):
            n = value_bytes(value, cap)
            if n > cap:
                names = self.names()
                raise cell_too_large(self.limits, names[i] if i < len(names) else "")
            row_bytes += n
        if keep:
            self.kept_bytes += row_bytes
            self.kept_rows += 1
            if self.kept_bytes > self.limits.max_result_bytes:
                raise result_too_large(self.limits, self.kept_rows)

    def keep(self, rows: Iterator[Any], max_rows: int) -> list[Any]:
        """The first `max_rows` of `rows`, each checked; the rest are left in `rows`."""
        kept = []
        for row in islice(rows, max_rows):
            self.check(row, keep=True)
            kept.append(row)
        return kept

    def count(self, rows: Iterable[Any]) -> int:
        """How many rows are left in `rows`, each checked against the cell bound (the driver
        held it in memory) but not kept."""
        total = 0
        for row in rows:
            self.check(row, keep=False)
            total += 1
        return total

    def read(self, rows: Iterator[Any], max_rows: int) -> tuple[list[Any], int]:
        """Keep the first `max_rows` of `rows` and count the rest, checking each one."""
        kept = self.keep(rows, max_rows)
        return kept, len(kept) + self.count(rows)

"""The warehouse's metadata as the context step sees it: tables, columns and value profiles.

`Catalog` keeps one immutable `CatalogSnapshot` per connector, and with it what is derived from
the table list: the gate's schema here, the search index through `on_refresh`. `start()` builds
the first snapshot in a background thread when the bot starts: the table list and the profiles
the engine's statistics give, then the profiles scans add (`Profiler`). A question never waits for
profiling, only for the table list when it comes before the first snapshot (the gate cannot work
without it). The snapshot is read again in the background once older than the TTL, and a new one is
published only when something changed, so nothing derived from it is rebuilt for nothing; a new
snapshot of the same tables shares the old one's gate schema.

A `documentation` source (a dbt project's `Documentation`) adds what the team wrote
down: its descriptions go on the tables, its value lists answer `column_profile` where no scan gave
a complete one, and its join keys go with the snapshot. It is asked again on every `snapshot()`
(cheap: it reads its files again only when they change), and a new version is published over the
tables already read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

from agent.catalog.documentation import NONE, Documentation
from agent.catalog.profiling import ProfileLimits, Profiler, table_key
from agent.catalog.profiling import is_text as is_text
from agent.gate import GateSchema
from connectors.base import (
    ColumnInfo,
    ColumnProfile,
    Connector,
    ConnectorError,
    TableInfo,
    TableProfile,
)

log = logging.getLogger(__name__)

#: What one read of the warehouse gives: its tables, and their profiles from its statistics.
_Read = tuple[tuple[TableInfo, ...], dict[str, TableProfile]]


def is_temporal(column: ColumnInfo) -> bool:
    """A DATE, DATETIME or TIMESTAMP column (not a year kept as a number)."""
    return any(word in column.type.upper() for word in ("DATE", "TIME"))


@dataclass(frozen=True)
class CatalogSnapshot:
    """Tables and their profiles at one moment. Immutable, so threads share it freely."""

    tables: tuple[TableInfo, ...]
    dialect: str
    profiles: Mapping[str, TableProfile] = field(default_factory=dict)
    #: Functions the gate accepts besides known pure ones (QUERYBOT_ALLOWED_FUNCTIONS).
    functions: tuple[str, ...] = ()
    #: What the team documented (descriptions already on `tables`, value lists, join keys).
    documentation: Documentation = NONE
    #: Types the gate accepts besides the dialect's built-in ones (QUERYBOT_ALLOWED_TYPES).
    types: tuple[str, ...] = ()

    @cached_property
    def by_key(self) -> dict[str, TableInfo]:
        return {table_key(t.name): t for t in self.tables}

    @cached_property
    def gate_schema(self) -> GateSchema:
        return GateSchema.from_tables(
            self.tables, self.dialect, functions=self.functions, types=self.types
        )

    def with_profiles(self, profiles: Mapping[str, TableProfile]) -> CatalogSnapshot:
        """The same tables with other profiles, sharing what is derived from the tables alone
        (the gate schema and the name lookup) instead of building it again."""
        new = replace(self, profiles=profiles)
        for name in ("by_key", "gate_schema"):
            if name in self.__dict__:  # cached_property keeps its value there
                new.__dict__[name] = self.__dict__[name]
        return new

    def profile(self, table: str) -> TableProfile | None:
        return self.profiles.get(table_key(table))

    def column_profile(self, table: str, column: str) -> ColumnProfile | None:
        """What occurs in the column: its profile, or the documented value list (complete: the
        values the column may hold) when no complete profile was read."""
        profile = self.profile(table)
        wanted = column.lower()
        found = None
        if profile is not None:
            found = next((p for c, p in profile.columns.items() if c.lower() == wanted), None)
        if found is None or not found.complete:
            values = self.documentation.values(table, column) if self.documentation else ()
            if values:
                return ColumnProfile(len(values), values, complete=True)
        return found


class Catalog:
    """The connector's current snapshot, read again in the background once older than `ttl_s`.

    `start()` reads the first snapshot in the background; without it, the first access reads
    the table list (and kept statistics) itself. Profiles that need scans (when `profile` is on)
    always follow in the background. `on_refresh` is called with every new snapshot, in the
    thread that read it (the examples store retires examples whose tables or columns went away,
    the context builder indexes the tables).
    """

    def __init__(
        self,
        connector: Connector,
        *,
        ttl_s: float = 3600.0,
        profile: bool = True,
        limits: ProfileLimits | None = None,
        on_refresh: Callable[[CatalogSnapshot], None] | None = None,
        functions: Iterable[str] = (),
        documentation: Callable[[], Documentation] | None = None,
        types: Iterable[str] = (),
    ) -> None:
        self.connector = connector
        self.documentation = documentation
        #: The tables as the connector listed them (the snapshot's carry the documentation).
        self._listed: tuple[TableInfo, ...] = ()
        #: The documentation last published (compared by identity: a source returns the same
        #: object until its files change).
        self._documented = NONE
        self.functions = tuple(functions)
        self.types = tuple(types)
        self.ttl_s = ttl_s
        self.profile = profile
        self.limits = limits or ProfileLimits()
        self.on_refresh = on_refresh
        self._profiler = Profiler(connector, self.limits)
        self._snapshot: CatalogSnapshot | None = None
        #: When the warehouse was last read (time.monotonic()), changed or not.
        self._read_at = 0.0
        self._first_lock = threading.Lock()
        self._publish_lock = threading.Lock()
        self._refreshing = threading.Lock()

    def start(self) -> None:
        """Read the first snapshot now, in the background, and build what derives from it, so
        the first question finds it ready (a question that comes sooner waits for the table
        list only)."""
        self._start_refresh()

    def snapshot(self) -> CatalogSnapshot:
        """The current snapshot; raises ConnectorError only when no table list was ever read."""
        current = self._snapshot
        if current is None:
            read = self._read_first()
            current = self._snapshot
            assert current is not None
            if read is not None and self.profile:
                self._start_refresh(read)  # the scans, over what was just read
        elif time.monotonic() - self._read_at > self.ttl_s:
            self._start_refresh()
        if self.documentation is not None and self._documentation() is not self._documented:
            current = self._publish(self._listed, current.profiles)
        return current

    def _documentation(self) -> Documentation:
        """The documentation as it now is; the last one when it cannot be read."""
        if self.documentation is None:
            return NONE
        try:
            return self.documentation()
        except ValueError as exc:  # DbtProjectError, a file half written
            log.warning("documentation unavailable, keeping the last: %s", exc)
            current = self._snapshot
            return current.documentation if current is not None else NONE

    @property
    def tables(self) -> list[TableInfo]:
        return list(self.snapshot().tables)

    @property
    def gate_schema(self) -> GateSchema:
        return self.snapshot().gate_schema

    def refresh(self) -> CatalogSnapshot:
        """Read the tables and their profiles now (scans included) and return the current
        snapshot, a new one only when something changed."""
        return self._refresh(self._read_first())

    def _refresh(self, read: _Read | None) -> CatalogSnapshot:
        """Scan what `read` (else a new read) lacks, and publish the result."""
        tables, kept = read or self._read()
        if not self.profile:
            return self._publish(tables, {})
        current = self._snapshot
        assert current is not None
        return self._publish(tables, self._profiler.complete(tables, kept, current.profiles))

    def _read_first(self) -> _Read | None:
        """Read and publish the first snapshot unless there is one: the tables and what the
        engine's statistics say of them, no scans. Whoever comes first reads it while the others
        wait; what it read, or None when there already was a snapshot."""
        with self._first_lock:
            if self._snapshot is not None:
                return None
            read = self._read()
            self._publish(*read)
            return read

    def _read(self) -> _Read:
        tables = tuple(self.connector.list_tables())
        kept = self._profiler.kept(tables) if self.profile else {}
        self._read_at = time.monotonic()
        return tables, kept

    def _publish(
        self, tables: tuple[TableInfo, ...], profiles: Mapping[str, TableProfile]
    ) -> CatalogSnapshot:
        """Make (`tables`, `profiles`) current unless they already are, and build what derives
        from them before any question needs it."""
        documentation = self._documentation()
        with self._publish_lock:
            self._listed, self._documented = tables, documentation
            tables = documentation.annotate(tables) if documentation else tables
            current = self._snapshot
            if (
                current is not None
                and current.tables == tables
                and current.documentation == documentation
            ):
                if current.profiles == profiles:
                    return current
                snapshot = current.with_profiles(profiles)
            else:
                snapshot = CatalogSnapshot(
                    tables,
                    self.connector.dialect,
                    profiles,
                    self.functions,
                    documentation,
                    self.types,
                )
            snapshot.gate_schema  # noqa: B018
            self._snapshot = snapshot
            if self.on_refresh is not None:
                self.on_refresh(snapshot)
            return snapshot

    def _start_refresh(self, read: _Read | None = None) -> None:
        """Refresh in a background thread unless one is running (`read`: see `_refresh`)."""
        if not self._refreshing.acquire(blocking=False):
            return  # one refresh at a time

        def work() -> None:
            try:
                self._refresh(read) if read is not None else self.refresh()
            except ConnectorError as exc:
                log.warning("catalog refresh failed, keeping the old snapshot: %s", exc)
            finally:
                self._refreshing.release()

        threading.Thread(target=work, name="catalog-refresh", daemon=True).start()

    def wait_idle(self, timeout_s: float = 60.0) -> bool:
        """Wait for a running background refresh (for tests and the benchmark)."""
        if self._refreshing.acquire(timeout=timeout_s):
            self._refreshing.release()
            return True
        return False

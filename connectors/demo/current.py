"""The demo warehouse kept current in a process that stays up for days.

`CurrentDemo` is the connector `demo` opens when no day is pinned: it serves the demo through a
`DuckDBConnector` and, on the first call that finds the clock's day moved on, builds the new demo
(`ensure_demo`) and swaps in a connector on it. A call in flight on the old one finishes there; the
old one is closed when the last of them ends, so no run fails because of the swap. Calls that come
while the new demo is being built (about a second) are served by the old one.

Each day's demo is opened through a hard link of its own (`demo-by-day/DAY/demo.duckdb`, the same
file name, so the tables keep their names): DuckDB keeps one database instance per path in a
process, so a connector opened on `demo.duckdb` while the old one still holds it would read the old
file's catalog (its table comments name the dates), and keep it; the link also keeps the old
connector's workers, started when a run needs one, on the old file. The links of days before the
one before are removed at each swap.

The agent's catalog reads the new tables at its next refresh (`agent.catalog.snapshot.Catalog`:
in the background, when a question finds its snapshot older than `catalog_ttl_s`, an hour); the
orders table's comment names the new last day, so a new snapshot is published and the date ranges
the agent keeps (`agent.catalog.date_range`) are read again. Until then they name the old last day.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb

from connectors.base import (
    ConnectorError,
    CostEstimate,
    QueryResult,
    RunContext,
    TableInfo,
)
from connectors.demo.build import ensure_demo, last_day_for
from connectors.duckdb.connector import DuckDBConnector
from connectors.limits import RunLimits

log = logging.getLogger(__name__)

#: Seconds before a failed rebuild is tried again (meanwhile the old day is served).
RETRY_S = 60.0


def day_links(data_dir: Path) -> Path:
    """The folder of the per-day links the current demo is opened through."""
    return data_dir / "demo-by-day"


@dataclass(eq=False)
class _Served:
    """One day's demo and the calls in flight on it."""

    connector: DuckDBConnector
    last_day: date
    calls: int = 0
    retired: bool = False


class CurrentDemo:
    """The demo warehouse ending the day before `today()` (default: the real date), rebuilt
    and swapped in when that day moves on."""

    name = "duckdb"
    dialect = "duckdb"

    def __init__(
        self,
        data_dir: Path,
        *,
        limits: RunLimits | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        self.data_dir = data_dir
        self.limits = limits or RunLimits()
        self._today = today
        self._lock = threading.Lock()
        self._swapping = threading.Lock()
        self._retry_at = 0.0
        self._current = _Served(*self._open(today()))
        #: Every connector not closed yet: the current one and retired ones with calls in flight.
        self._open_ones: list[_Served] = [self._current]

    @property
    def last_day(self) -> date:
        """The last day of the demo now served."""
        return self._current.last_day

    def list_tables(self) -> list[TableInfo]:
        with self.serving() as connector:
            return connector.list_tables()

    def describe(self, table: str) -> TableInfo:
        with self.serving() as connector:
            return connector.describe(table)

    def estimate(self, sql: str) -> CostEstimate | None:
        with self.serving() as connector:
            return connector.estimate(sql)

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        with self.serving() as connector:
            return connector.run(sql, max_rows=max_rows, timeout_s=timeout_s, context=context)

    def cancel(self, job_key: str) -> bool:
        """Stop the run with `job_key` on whichever day's connector it runs."""
        with self._lock:
            served = list(self._open_ones)
        return any(s.connector.cancel(job_key) for s in served)

    def close(self) -> None:
        with self._lock:
            served, self._open_ones = self._open_ones, []
        for s in served:
            s.connector.close()

    @contextlib.contextmanager
    def serving(self) -> Iterator[DuckDBConnector]:
        """The connector on the current demo (swapped first when the day moved on), kept open
        until the block ends even if a newer one is swapped in meanwhile."""
        self._follow_the_day()
        with self._lock:
            served = self._current
            served.calls += 1
        try:
            yield served.connector
        finally:
            with self._lock:
                served.calls -= 1
                done = served.retired and not served.calls
            if done:
                self._close(served)

    def _follow_the_day(self) -> None:
        """Swap in the demo ending the day before today unless it is served, being built by
        another call (this one keeps the old), or failed to build less than RETRY_S ago."""
        today = self._today()
        wanted = last_day_for(today)
        if self._current.last_day == wanted or not self._swapping.acquire(blocking=False):
            return
        try:
            if self._current.last_day == wanted or time.monotonic() < self._retry_at:
                return
            try:
                connector, last_day = self._open(today)
            except (ConnectorError, OSError, duckdb.Error) as exc:
                self._retry_at = time.monotonic() + RETRY_S
                log.warning("Keeping the demo ending %s: %s", self._current.last_day, exc)
                return
            with self._lock:
                old, self._current = self._current, _Served(connector, last_day)
                self._open_ones.append(self._current)
                old.retired = True
                idle = not old.calls
            if idle:
                self._close(old)
            _remove_links_before(day_links(self.data_dir), old.last_day)
        finally:
            self._swapping.release()

    def _open(self, today: date) -> tuple[DuckDBConnector, date]:
        """A connector on the demo seen from `today`, built first when needed, and its last day."""
        built = ensure_demo(self.data_dir, today=today)
        last_day = last_day_for(today)
        folder = day_links(self.data_dir) / last_day.isoformat()
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / built.name  # the same file name: DuckDB names the catalog after it
        if not link.is_file():
            staged = folder / f".{built.name}.{os.getpid()}.{threading.get_ident()}"
            staged.unlink(missing_ok=True)
            try:
                os.link(built, staged)
            except OSError:  # a file system without hard links: a copy (6 MB) does as well
                shutil.copyfile(built, staged)
            os.replace(staged, link)
        return DuckDBConnector(link, limits=self.limits), last_day

    def _close(self, served: _Served) -> None:
        with self._lock:
            if served not in self._open_ones:
                return
            self._open_ones.remove(served)
        served.connector.close()


def _remove_links_before(links: Path, day: date) -> None:
    """Remove the links of days before `day` (another process may still serve `day`)."""
    for folder in links.iterdir():
        with contextlib.suppress(ValueError):
            if date.fromisoformat(folder.name) < day:
                shutil.rmtree(folder, ignore_errors=True)

"""Where querybot keeps its own state tables: a SQLite file, or PostgreSQL for several replicas.

The audit log, the bot store, verified examples and remembered failures write their statements
once, with `?` placeholders, and run them through a `Storage`: `SqliteStorage` (a file, or
`:memory:`) or `PostgresStorage` (a pool from `open_pool`, shared by every table of a
process that names it). Each statement runs in its own transaction (autocommit); `many` runs a
batch as one.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psycopg.rows import tuple_row

from agent.memory.postgres import open_pool, setup_lock

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Tables:
    """The tables of one user of a Storage, created idempotently."""

    #: Names the set-up lock, so replicas starting together do not race on CREATE.
    name: str
    #: The statements creating them in SQLite, and in PostgreSQL.
    sqlite: str
    postgres: str
    #: Columns added after a table's first release, for tables created before them:
    #: {table: {column: type}}.
    added: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


#: Milliseconds a SQLite statement waits for another process's write lock (a second replica on
#: the same disk, the checkpointer) before failing.
BUSY_TIMEOUT_MS = 5000


class Storage(ABC):
    """One database behind a lock or a pool; safe to share between threads."""

    #: Whether replicas on other machines share these rows (PostgreSQL).
    shared: bool

    @abstractmethod
    def create(self, tables: Tables) -> None:
        """Create `tables` where missing, and the columns they gained since."""

    @abstractmethod
    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Run one statement (`?` placeholders) and return every row it produced."""

    @abstractmethod
    def many(self, sql: str, batch: Iterable[Iterable[Any]]) -> None:
        """Run one statement for each parameter tuple of `batch`, in one transaction."""

    @abstractmethod
    def close(self) -> None: ...


class SqliteStorage(Storage):
    """A SQLite file (its folder is created) or `:memory:`: one connection behind a lock."""

    shared = False

    def __init__(self, path: Path | str = ":memory:") -> None:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def create(self, tables: Tables) -> None:
        with self._lock:
            self._conn.executescript(tables.sqlite)
            for table, columns in tables.added.items():
                have = {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}
                for column, kind in columns.items():
                    if column not in have:
                        self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        # Fetch everything under the lock (RETURNING included: a write commits only once its
        # statement has been stepped to the end).
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def many(self, sql: str, batch: Iterable[Iterable[Any]]) -> None:
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(sql, (tuple(p) for p in batch))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresStorage(Storage):
    """A PostgreSQL database (`QUERYBOT_STATE_URL`) through a small connection pool.

    Raises agent.memory.postgres.StateDatabaseError when it cannot be reached."""

    shared = True

    def __init__(self, url: str) -> None:
        self.url = url
        #: The pool (`open_pool`'s settings), for what needs one connection throughout.
        self.pool = open_pool(url)

    def create(self, tables: Tables) -> None:
        with setup_lock(self.pool, f"querybot.{tables.name}"), self.pool.connection() as conn:
            conn.execute(tables.postgres, prepare=False)  # several statements: no prepare
            for table, columns in tables.added.items():
                for column, kind in columns.items():
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        with self.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute(sql.replace("?", "%s"), tuple(params))
            return cursor.fetchall() if cursor.description else []

    def many(self, sql: str, batch: Iterable[Iterable[Any]]) -> None:
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), [tuple(p) for p in batch])

    def close(self) -> None:
        self.pool.close()


def open_storage(where: Storage | Path | str, tables: Tables) -> Storage:
    """`where` (itself when it is a Storage; else a SQLite file, a Path or `:memory:`, or
    PostgreSQL for a `postgresql://` or `postgres://` URL) with `tables` created."""
    if isinstance(where, Storage):
        storage = where
    elif isinstance(where, str) and where.startswith(("postgresql://", "postgres://")):
        storage = PostgresStorage(where)
    else:
        storage = SqliteStorage(where)
    storage.create(tables)
    return storage

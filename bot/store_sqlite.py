"""The bot's store in a SQLite file (bot/store.py has the statements both back ends share): one
process, or replicas sharing a disk."""

from __future__ import annotations

import fcntl
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

from bot.store import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_events (
    event_id TEXT PRIMARY KEY,
    seen_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_events_seen_at ON bot_events (seen_at);
CREATE TABLE IF NOT EXISTS bot_proposals (
    proposal_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    sql_sha256 TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    status TEXT NOT NULL,
    approved INTEGER,
    decided_by TEXT,
    edited_by TEXT,
    proposal TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_proposals_thread ON bot_proposals (thread_id, status);
CREATE INDEX IF NOT EXISTS bot_proposals_requester ON bot_proposals (requested_by, created_at);
CREATE TABLE IF NOT EXISTS bot_questions (
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    started_at REAL NOT NULL,
    PRIMARY KEY (channel, message_ts)
);
"""
#: Columns added after the first release, for stores created before them.
_ADDED = {
    "edited_by": "ALTER TABLE bot_proposals ADD COLUMN edited_by TEXT",
    "claimed_by": "ALTER TABLE bot_proposals ADD COLUMN claimed_by TEXT",
}


class SqliteStore(Store):
    """SQLite-backed store, safe to share between threads (one connection behind a lock).

    Each process holds an exclusive `flock` on `<store>.instances/<instance id>` while it lives;
    the kernel drops it when the process dies, however it dies.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._instances = path.with_name(path.name + ".instances")
        self._instances.mkdir(exist_ok=True)
        self.instance_id = uuid.uuid4().hex
        self._liveness = (self._instances / self.instance_id).open("w")
        fcntl.flock(self._liveness, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # Another process (a second replica, the checkpointer) may hold the write lock briefly.
        self._conn.execute("PRAGMA busy_timeout=5000")
        with self._lock:
            self._conn.executescript(_SCHEMA)
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(bot_proposals)")}
            for column, statement in _ADDED.items():
                if column not in have:
                    self._conn.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
        (self._instances / self.instance_id).unlink(missing_ok=True)
        self._liveness.close()

    def keep_alive(self) -> None:
        """Nothing to do: a `flock` is lost only with the process."""

    def _alive(self, instance_id: str) -> bool:
        lock_file = self._instances / instance_id
        try:
            handle = lock_file.open("r")
        except FileNotFoundError:
            return False
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            lock_file.unlink(missing_ok=True)  # the process is gone: tidy its file
            return False

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        # Fetch everything under the lock (RETURNING included: a write commits only once its
        # statement has been stepped to the end).
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

"""The bot's store on PostgreSQL, so several replicas share de-duplication and approval claims.

Same tables and statements as the SQLite store (bot/store.py). Each statement runs in its own
autocommitted transaction; a claim is one conditional UPDATE, and under READ COMMITTED a second
concurrent UPDATE waits for the first, re-reads the row, finds it no longer PENDING and changes
nothing, so exactly one click wins across replicas.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from agent.postgres import open_pool, setup_lock
from bot.store import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_events (
    event_id TEXT PRIMARY KEY,
    seen_at DOUBLE PRECISION NOT NULL
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
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_proposals_thread ON bot_proposals (thread_id, status);
CREATE INDEX IF NOT EXISTS bot_proposals_requester ON bot_proposals (requested_by, created_at);
ALTER TABLE bot_proposals ADD COLUMN IF NOT EXISTS claimed_by TEXT;
CREATE TABLE IF NOT EXISTS bot_questions (
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (channel, message_ts)
);
"""


def _liveness_key(instance_id: str) -> str:
    return f"querybot.instance.{instance_id}"


class PostgresStore(Store):
    """PostgreSQL-backed store (a small connection pool), safe to share between threads.

    A connection of its own holds a session advisory lock on this process's instance id while
    the process lives; PostgreSQL releases it when that connection ends, however the process died.
    A connection can also end while the process lives (PostgreSQL restarted), so `keep_alive`
    takes the lock again and a process must be found dead twice before its work is taken over.
    """

    free_lock_is_death = False

    def __init__(self, url: str) -> None:
        self._pool = open_pool(url)
        with setup_lock(self._pool, "querybot.bot_store"), self._pool.connection() as conn:
            conn.execute(_SCHEMA, prepare=False)  # several statements: no prepare
        self.instance_id = uuid.uuid4().hex
        self._url = url
        self._liveness = self._lock_instance()

    def _lock_instance(self) -> psycopg.Connection:
        connection = psycopg.connect(self._url, autocommit=True)
        key = _liveness_key(self.instance_id)
        connection.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
        return connection

    def keep_alive(self) -> None:
        try:
            self._liveness.execute("SELECT 1")
        except psycopg.Error:
            self._liveness.close()
            self._liveness = self._lock_instance()

    def close(self) -> None:
        self._pool.close()
        self._liveness.close()

    def _alive(self, instance_id: str) -> bool:
        key = _liveness_key(instance_id)
        with self._pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,))
            row = cursor.fetchone()
            if row is None or not row[0]:
                return True
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
            return False

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

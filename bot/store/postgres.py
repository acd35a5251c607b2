"""The bot's store on PostgreSQL, so several replicas share de-duplication and approval claims.

Same tables and statements (`Store`) as the SQLite store. Each statement runs in its own
autocommitted transaction; a claim is one conditional UPDATE, and under READ COMMITTED a second
concurrent UPDATE waits for the first, re-reads the row, finds it no longer PENDING and changes
nothing, so exactly one click wins across replicas.
"""

from __future__ import annotations

import uuid

import psycopg
from psycopg.rows import tuple_row

from agent.memory.storage import PostgresStorage
from bot.store.base import Store


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
        self._storage = PostgresStorage(url)
        self._open(self._storage)
        self.instance_id = uuid.uuid4().hex
        self._liveness = self._lock_instance()

    def _lock_instance(self) -> psycopg.Connection:
        connection = psycopg.connect(self._storage.url, autocommit=True)
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
        self._storage.close()
        self._liveness.close()

    def _alive(self, instance_id: str) -> bool:
        key = _liveness_key(instance_id)
        with self._storage.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,))
            row = cursor.fetchone()
            if row is None or not row[0]:
                return True
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
            return False

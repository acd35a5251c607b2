"""PostgreSQL connections for the state several replicas share (checkpoints, bot store, audit
log, examples, failures).

Every pool uses the settings the LangGraph checkpointer needs (autocommit, no server-side
prepared statements, so poolers such as PgBouncer work, dict rows); other users ask for tuple rows
per cursor.

A replica opens at most CHECKPOINT_POOL_SIZE + 2 x POOL_SIZE + 1 = 11 connections: the
checkpointer's pool, the bot store's, the one the audit log, examples and failures of every
warehouse share, and the bot store's liveness lock, whatever QUERYBOT_WORKERS is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

#: Seconds to wait for the first connection before reporting the database unreachable.
CONNECT_TIMEOUT_S = 10.0

#: Connections each pool of the bot store and of the other state tables may open. Every call holds
#: one for a single short statement or transaction, so a few serve any number of workers (a worker
#: waits its turn for milliseconds). Fixed, not derived from QUERYBOT_WORKERS.
POOL_SIZE = 4

#: Connections the checkpointer's pool may open. PostgresSaver holds one lock per saver around
#: every use of its connection (`PostgresSaver._cursor`, langgraph-checkpoint-postgres 3.2), so
#: only one is in use while it runs; set-up needs two (`setup_lock` holds one while the saver
#: creates its tables on the other).
CHECKPOINT_POOL_SIZE = 2


class StateDatabaseError(Exception):
    """The PostgreSQL state database cannot be reached; the message says which one."""


def open_pool(url: str, *, max_size: int = POOL_SIZE) -> ConnectionPool:
    """A connection pool for `url`, opened and checked (raises StateDatabaseError)."""
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
    )
    pool.open()
    try:
        pool.wait(timeout=CONNECT_TIMEOUT_S)
    except Exception as exc:
        pool.close()
        raise StateDatabaseError(
            f"QUERYBOT_STATE_URL: cannot connect to PostgreSQL ({_without_password(url)}): {exc}"
        ) from exc
    return pool


@contextmanager
def setup_lock(pool: ConnectionPool, name: str) -> Iterator[None]:
    """Hold a cluster-wide advisory lock named `name` while the caller creates its tables:
    replicas starting together would otherwise race on CREATE ... IF NOT EXISTS."""
    with pool.connection() as conn:
        conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (name,))
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (name,))


def _without_password(url: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:
        return "the URL does not parse"
    parts.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in parts.items())

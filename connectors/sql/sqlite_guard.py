"""Read-only SQLite connections that refuse everything but reading, whatever SQL arrives.

`mode=ro` alone is not enough: `ATTACH '/new.db' AS x` followed by `CREATE TABLE x.t` creates
a new file (the attached database is opened read-write). The authorizer below allows reading
tables, calling functions other than the few that reach outside the database, recursive CTEs,
and the introspection pragmas; it denies ATTACH, DETACH, every write and DDL action, temp
objects, transactions and pragma assignments, and it sees the functions a view stored in the
file calls as well as those in the query. Extension loading is switched off as well. The
warehouse connector and the upload reader both open files through `open_readonly`.

An uploaded file is anybody's: it is opened `immutable` with `trusted_schema` off, so SQL stored
in it (generated columns, anything its tables' definitions call) may use only the functions
SQLite marks innocuous. A warehouse file is the operator's own and keeps SQLite's default,
because SQLite before 3.45 does not mark its JSON functions innocuous, and every view that uses
them would fail.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from urllib.parse import quote

_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})

#: Built-in functions that reach outside the database (shared libraries, tokenizer pointers).
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})

#: Pragmas that only describe the schema; their argument is a table or index name.
_INTROSPECTION_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo"}
    | {"foreign_key_list"}
)

#: Settings that may be read (not assigned): SQLAlchemy reads this one on connect.
_READABLE_PRAGMAS = frozenset({"read_uncommitted"})

#: Virtual machine instructions between two checks of the deadline.
_PROGRESS_STEPS = 1000


def authorize(
    action: int, arg1: str | None, arg2: str | None, _db: str | None, _source: str | None
) -> int:
    """SQLite authorizer callback: SQLITE_OK for reads, SQLITE_DENY for everything else."""
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        denied = (arg2 or "").lower() in _DENIED_FUNCTIONS
        return sqlite3.SQLITE_DENY if denied else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        pragma = (arg1 or "").lower()
        if pragma in _INTROSPECTION_PRAGMAS or (pragma in _READABLE_PRAGMAS and arg2 is None):
            return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_readonly(path: Path, *, upload: bool = False) -> sqlite3.Connection:
    """Open `path` read-only with extensions disabled and the authorizer installed. `upload`
    (a file a user shared): also immutable (no locks; a copy nobody changes) and with
    `trusted_schema` off.

    `check_same_thread=False` because a pool hands connections to whichever thread runs next
    (one at a time); autocommit mode because Python would otherwise send BEGIN, which the
    authorizer refuses.
    """
    uri = f"file:{quote(str(path))}?mode=ro{'&immutable=1' if upload else ''}"
    con = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    if hasattr(con, "enable_load_extension"):  # absent when Python lacks extension support
        con.enable_load_extension(False)
    if upload:  # before the authorizer, which refuses pragma assignments
        con.execute("PRAGMA trusted_schema = OFF")
    con.set_authorizer(authorize)
    return con


def set_deadline(
    con: sqlite3.Connection, timeout_s: float, stop: threading.Event | None = None
) -> None:
    """Interrupt the connection's statements (SQLITE_INTERRUPT) once `timeout_s` have passed
    or `stop` is set (a cancel).

    A soft bound: SQLite calls the handler only between steps of its virtual machine, and one
    step (a string function on megabyte values) can take seconds. Warehouse runs are bounded
    hard by their worker process being killed."""
    deadline = time.monotonic() + timeout_s
    stopped = stop.is_set if stop is not None else lambda: False
    con.set_progress_handler(lambda: int(stopped() or time.monotonic() > deadline), _PROGRESS_STEPS)


def clear_deadline(con: sqlite3.Connection) -> None:
    """End the run's deadline."""
    con.set_progress_handler(None, 0)

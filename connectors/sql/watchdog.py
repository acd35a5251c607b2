"""The bot's own time bound on a run over a PostgreSQL or MySQL/MariaDB connection.

The engine's statement limit (`statement_timeout`, `max_statement_time`) ends nearly every
statement, and a cancel (`pg_cancel_backend`, `KILL QUERY`) the few that lifted it. Neither is
seen inside one call that does not look for it: MariaDB's LOCATE() and REPLACE() on megabyte
strings check neither (a REPLACE ran 31 s after a KILL QUERY against a 2 s limit), and the bot's
thread would wait on the socket all that time. So a run's watchdog cancels the statement
`GRACE_S` after its limit, and if the run still has not ended `GRACE_S` later it shuts the
connection's socket down: the driver's read fails at once, the run ends in QueryTimeout and its
connection is discarded. The server may go on computing that one call (its session is then
killed); the bot is free within the limit plus twice `GRACE_S`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

#: Seconds past a run's limit before the watchdog cancels it, and again before it cuts the
#: connection of a run the cancel did not end.
GRACE_S = 2.0


class Watchdog:
    """Cancels a run `GRACE_S` after `timeout_s` and severs `con` `GRACE_S` after that, until
    `stop` (called before `con` goes back to the pool: no later sever can reach another run)."""

    def __init__(self, timeout_s: float, cancel: Callable[[], object], con: Any) -> None:
        self.expired = threading.Event()
        self._con = con
        self._cancel = cancel
        self._lock = threading.Lock()
        self._stopped = False
        self._timers = [
            threading.Timer(timeout_s + GRACE_S, self._expire),
            threading.Timer(timeout_s + 2 * GRACE_S, self._sever),
        ]
        for timer in self._timers:
            timer.daemon = True

    def start(self) -> None:
        for timer in self._timers:
            timer.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
        for timer in self._timers:
            timer.cancel()

    def _expire(self) -> None:
        self.expired.set()
        self._cancel()

    def _sever(self) -> None:
        with self._lock:
            if not self._stopped:
                sever(self._con)


def sever(con: Any) -> None:
    """Shut down the socket of a PyMySQL or psycopg connection, so a thread blocked reading it
    gets an error now (the connection is unusable afterwards)."""
    sock = getattr(con, "_sock", None)  # PyMySQL keeps its socket object here
    fd = sock.fileno() if sock is not None else con.fileno()  # psycopg: Connection.fileno()
    with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as dup:
        dup.shutdown(socket.SHUT_RDWR)

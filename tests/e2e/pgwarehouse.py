"""A PostgreSQL warehouse for the end-to-end fault tests: a scratch database (pgdb.py) holding a
small shop schema, read by a login of the test's own that may only SELECT, reached through a TCP
relay the test can stop ("the server goes away") without touching the shared server.

Only backends of that login are ever terminated, so other tests on the server are not disturbed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from collections.abc import Iterator

import psycopg

from tests.support.pgdb import HOST, scratch_database
from tests.support.sql_fixtures import bound_temp_files

#: 3,000 sales over five regions (a three-way cross join of them never ends in a test's time),
#: and a salaries table to revoke a grant on.
SHOP = (
    "CREATE SCHEMA shop;"
    " CREATE TABLE shop.sales (region text, amount int);"
    " INSERT INTO shop.sales SELECT 'r' || (g % 5), g FROM generate_series(1, 3000) g;"
    " CREATE TABLE shop.salaries (name text, salary int);"
    " INSERT INTO shop.salaries VALUES ('ann', 100);"
)


class Relay:
    """A TCP relay to PostgreSQL that the test can stop (the server "goes away") and restart
    on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> Relay:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Refuse new connections and cut the open ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener:
            # shutdown wakes the thread blocked in accept(); close alone leaves it listening
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class Warehouse:
    """The scratch database: `url` is the bot's login (through the relay), `admin` runs SQL as
    the server's superuser."""

    def __init__(self, admin_url: str, role: str, relay: Relay) -> None:
        self.admin_url = admin_url
        self.role = role
        self.relay = relay
        database = admin_url.rsplit("/", 1)[1]
        self.url = f"postgresql://{role}@127.0.0.1:{relay.port}/{database}"

    def admin(self, sql: str, *params: object) -> list[tuple]:
        with psycopg.connect(self.admin_url, autocommit=True) as con:
            cursor = con.execute(sql, params or None)
            return cursor.fetchall() if cursor.description else []

    def running(self, text: str) -> list[int]:
        """Backend pids of the bot login's statements now running whose SQL contains `text`."""
        found = self.admin(
            "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND usename = %s"
            " AND strpos(query, %s) > 0",
            self.role,
            text,
        )
        return [pid for (pid,) in found]

    def terminate(self, pid: int) -> bool:
        """Drop one of the bot login's connections from the server side (its query fails)."""
        done = self.admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE pid = %s AND usename = %s",
            pid,
            self.role,
        )
        return bool(done and done[0][0])


@contextlib.contextmanager
def shop_warehouse(prefix: str) -> Iterator[Warehouse]:
    """A scratch database with the shop schema and a login that may only read it, behind a
    relay; everything is dropped afterwards."""
    role = f"querybot_{prefix}_{uuid.uuid4().hex[:8]}"
    host, port = HOST.split(":")
    relay = Relay((host, int(port))).start()
    with scratch_database(prefix) as admin_url:
        warehouse = Warehouse(admin_url, role, relay)
        warehouse.admin(
            SHOP + f' CREATE ROLE "{role}" LOGIN;'
            f' GRANT USAGE ON SCHEMA shop TO "{role}";'
            f' GRANT SELECT ON shop.sales, shop.salaries TO "{role}"'
        )
        with psycopg.connect(admin_url, autocommit=True) as con:
            bound_temp_files(con, role)
        try:
            yield warehouse
        finally:
            relay.stop()
    with psycopg.connect(admin_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as con:
        con.execute(f'DROP ROLE IF EXISTS "{role}"')

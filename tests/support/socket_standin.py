"""A local stand-in for Slack's Socket Mode WebSocket server.

Slack's side of the protocol: the app calls `apps.connections.open` (the Web API stand-in hands
out `url`), opens the WebSocket, receives `{"type": "hello"}`, then envelopes
(`envelope_id`, `type`, `payload`, `accepts_response_payload`) that it must ack by sending back
`{"envelope_id": ...}` (with an optional `payload`). Every ack is recorded.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve


class SocketModeStandin:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._connection: ServerConnection | None = None
        self.connections = 0
        self.acks: dict[str, dict[str, Any]] = {}
        self._server = serve(self._handle, "127.0.0.1", 0, compression=None, ping_interval=None)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.socket.getsockname()[:2]
        return f"ws://{host}:{port}/link"

    def start(self) -> SocketModeStandin:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()

    def __enter__(self) -> SocketModeStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handle(self, connection: ServerConnection) -> None:
        connection.send(json.dumps({"type": "hello", "num_connections": 1}))
        with self._lock:
            self._connection = connection
            self.connections += 1
            self._lock.notify_all()
        try:
            for raw in connection:
                message = json.loads(raw)
                if "envelope_id" in message:
                    with self._lock:
                        if self._connection is not connection:
                            continue  # sent on a dropped connection: Slack never gets it
                        self.acks[message["envelope_id"]] = message
                        self._lock.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if self._connection is connection:
                    self._connection = None

    def _wait(self, check: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not (value := check()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
                self._lock.wait(min(left, 0.5))
            return value

    def wait_connected(self, timeout: float = 30) -> None:
        self._wait(lambda: self._connection is not None, timeout, "the app to connect")

    def drop(self) -> None:
        """Close the app's WebSocket from Slack's side (a network blip, a Slack restart)."""
        with self._lock:
            connection = self._connection
            self._connection = None
        if connection is None:
            raise AssertionError("no Socket Mode connection to drop")
        connection.close()

    def wait_connections(self, count: int, timeout: float = 60) -> None:
        """Wait until the app has connected `count` times in all (a reconnect counts)."""
        self._wait(
            lambda: self.connections >= count and self._connection is not None,
            timeout,
            f"connection number {count}",
        )

    def send(
        self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0, drop: bool = False
    ) -> str:
        """Send one envelope of `kind` (`events_api`, `interactive`); returns its envelope id.
        With `drop`, the connection breaks right after: the app may get the envelope, but its
        ack never reaches Slack (which then delivers the envelope again, as a retry)."""
        envelope_id = str(uuid.uuid4())
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind == "interactive",
        }
        if kind == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = "timeout" if retry_attempt else ""
        with self._lock:
            connection = self._connection
            if drop:
                self._connection = None
        if connection is None:
            raise AssertionError("no Socket Mode connection to send on")
        connection.send(json.dumps(envelope))
        if drop:
            connection.close()
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        return self._wait(
            lambda: self.acks.get(envelope_id), timeout, f"the ack of envelope {envelope_id}"
        )

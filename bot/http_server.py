"""The HTTP server Slack posts events and interactions to: every bound is checked on the request
line and headers, before a byte of the body is read.

Bolt verifies a request's signature only once it has the whole body, and wsgiref hands the body
over unbounded, so three unsigned 300 MB POSTs once took the bot from 161 to 1,227 MB (issue 15).
Here a request is refused, with the body left unread, when its path is not /slack/events (404),
its method not POST (405), it has no Content-Length or a Transfer-Encoding (411), it claims more
than `max_body_bytes` (413), or it lacks Slack's signature headers or carries a timestamp more
than five minutes off (401, as Bolt would answer). The body of a request that passes is read
(exactly Content-Length bytes) and only then handed to Bolt, which checks the signature.

Connections are bounded too: at most `max_connections` are served at once. When that many are
open, a new one evicts the oldest connection still reading its request (a client that connects
and sends nothing, or sends slowly, never holds the server); when every one has been read and is
being answered, the new one gets 503 (Slack retries). A connection must deliver its whole request
within `read_deadline_s`, and each read or write waits at most that long.

An address the server cannot take (a port in use, a low port without the privilege, a port
number out of range) raises `CannotListen`: one line saying what happened and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import socket
import sys
import threading
import time
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import IO, Any, cast
from urllib.parse import urlsplit
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

from connectors.units import byte_size

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"
#: Bolt refuses a signature timestamp further than this from the clock (slack_sdk's verifier).
SIGNATURE_AGE_S = 300
#: After refusing a request whose body was sent anyway, read and discard at most this much of it
#: for at most LINGER_S, so the client reads the answer rather than a reset connection.
LINGER_BYTES = 256 * 1024
LINGER_S = 1.0
#: The answer to a connection over the bound (written without a thread, never blocking).
_BUSY_TEXT = b"Too many connections at once; retry.\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)


@dataclass(frozen=True)
class HttpLimits:
    """What one HTTP request and the server as a whole may take."""

    #: The largest body accepted (Content-Length): a click on a message at Slack's limits (50
    #: blocks of 3,000 characters, a 40,000-character text) form-encodes to 360-590 KiB.
    max_body_bytes: int = 1024 * 1024
    #: Connections served at once (each holds a thread).
    max_connections: int = 64
    #: Seconds a connection has to deliver its request; also each read's and write's limit.
    read_deadline_s: float = 10.0


class _Connections:
    """The open connections, oldest first: which are still reading their request, and since when.

    A reaper thread shuts down any connection still reading after the deadline; `admit` evicts
    the oldest one still reading when the bound is reached.
    """

    def __init__(self, limits: HttpLimits) -> None:
        self._limits = limits
        self._lock = threading.Lock()
        #: socket -> monotonic time it was accepted, or None once its request was read
        self._open: dict[socket.socket, float | None] = {}
        self._stopped = threading.Event()
        threading.Thread(target=self._reap, name="querybot-http-reaper", daemon=True).start()

    def admit(self, sock: socket.socket) -> bool:
        with self._lock:
            if len(self._open) >= self._limits.max_connections:
                oldest = next((s for s, since in self._open.items() if since is not None), None)
                if oldest is None:
                    return False
                del self._open[oldest]
                _shut(oldest)
            self._open[sock] = time.monotonic()
            return True

    def read(self, sock: socket.socket) -> None:
        """`sock`'s request is read: it is being answered and may no longer be evicted."""
        with self._lock:
            if sock in self._open:
                self._open[sock] = None

    def close(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.pop(sock, None)

    def stop(self) -> None:
        self._stopped.set()

    def _reap(self) -> None:
        deadline = self._limits.read_deadline_s
        while not self._stopped.wait(min(1.0, deadline / 4)):
            now = time.monotonic()
            with self._lock:
                late = [
                    s
                    for s, since in self._open.items()
                    if since is not None and now - since > deadline
                ]
                for sock in late:
                    del self._open[sock]
                    _shut(sock)


def _shut(sock: socket.socket) -> None:
    """End `sock`'s reads and writes now; the thread blocked on it returns (closing is its own)."""
    with contextlib.suppress(OSError):  # already closed by its own thread
        sock.shutdown(socket.SHUT_RDWR)


class CannotListen(Exception):
    """The server cannot take its address; the message is one line: what happened, what to do."""


def _cannot_listen(host: str, port: int, exc: Exception) -> CannotListen:
    """Why binding `host`:`port` failed, and what to do about it (the port is `--port`'s)."""
    if isinstance(exc, OverflowError):
        return CannotListen(f"--port {port} is not a port number: use one from 1 to 65535.")
    code = exc.errno if isinstance(exc, OSError) else None
    if code == errno.EADDRINUSE:
        return CannotListen(
            f"port {port} is already in use by another process (another querybot?): stop that "
            "process, or choose a free port with --port and point your Slack app's Request URL "
            "at it."
        )
    if code == errno.EACCES and port < 1024:
        return CannotListen(
            f"this process may not listen on port {port} (ports below 1024 need root or the "
            "CAP_NET_BIND_SERVICE capability): choose --port 1024 or above (the default is "
            f"3000), behind a reverse proxy that listens on {port} if Slack must reach that port."
        )
    return CannotListen(
        f"the HTTP server cannot listen on {host}:{port} ({type(exc).__name__}: {exc}): check "
        "--port and this machine's network settings, then try again."
    )


class SlackHTTPServer(ThreadingMixIn, WSGIServer):
    """wsgiref's server, a thread per connection, with the bounds of `HttpLimits`. An address it
    cannot take raises CannotListen."""

    daemon_threads = True
    # socketserver's listen backlog is 5: a burst of events (many people asking at once) had
    # connections reset before they were accepted (the load benchmark, issue 9).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], limits: HttpLimits) -> None:
        self.limits = limits
        self.connections = _Connections(limits)  # before binding: a failed bind closes them
        try:
            super().__init__(address, _SlackRequestHandler)
        except (OSError, OverflowError) as exc:
            raise _cannot_listen(*address, exc) from None

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.admit(request):
            log.warning("HTTP: %d connections busy; answered 503", self.limits.max_connections)
            with contextlib.suppress(OSError):
                request.setblocking(False)
                request.send(_BUSY)  # a new socket's buffer holds it: never blocks the accepts
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client gone, too slow (the deadline shut its socket) or cut off: one log line, not
        # socketserver's traceback on stderr
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            log.debug("HTTP: connection from %s ended: %r", client_address[0], error)
        else:
            log.exception("HTTP: the request from %s failed", client_address[0])

    def shutdown_request(self, request: Any) -> None:
        self.connections.close(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        self.connections.stop()
        super().server_close()


class _SlackRequestHandler(WSGIRequestHandler):
    """wsgiref's handler, refusing what Slack never sends before reading a body."""

    server: SlackHTTPServer

    def setup(self) -> None:
        # each read and write on the socket (socketserver reads this instance's value in setup;
        # typeshed declares it a class variable)
        self.timeout = self.server.limits.read_deadline_s  # type: ignore[misc]
        super().setup()

    def handle(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self._refuse(414, "Request line too long.")
            return
        if not self.parse_request():  # answers malformed requests itself (400, 431, ...)
            return
        refusal = self._refusal()
        if refusal:
            self._refuse(*refusal)
            return
        length = int(self.headers["Content-Length"])
        body = self.rfile.read(length)
        if len(body) < length:
            return  # the client went away, or the deadline cut it
        self.server.connections.read(self.connection)
        # the socket's writer (a BufferedIOBase to typeshed, an IO[bytes] to ServerHandler; as
        # wsgiref's own handler passes it)
        wfile = cast(IO[bytes], self.wfile)
        handler = ServerHandler(
            io.BytesIO(body), wfile, self.get_stderr(), self.get_environ(), multithread=True
        )
        handler.request_handler = self  # type: ignore[attr-defined]
        app = self.server.get_app()
        assert app is not None  # set_app runs before serve_forever (`serve_http`)
        handler.run(app)

    def handle_expect_100(self) -> bool:
        # `Expect: 100-continue` is answered only once the request would be read; a refused one
        # gets its refusal instead (in `handle`), and the client never sends the body.
        return True if self._refusal() else super().handle_expect_100()

    def _refusal(self) -> tuple[int, str] | None:
        """Why this request is refused (status, message), from its line and headers alone."""
        limit = self.server.limits.max_body_bytes
        if urlsplit(self.path).path != SLACK_PATH:
            return 404, f"Not found: Slack posts to {SLACK_PATH}."
        if self.command != "POST":
            return 405, "Only POST is served here."
        if self.headers.get("Transfer-Encoding"):
            return 411, "Send the body with a Content-Length, not a Transfer-Encoding."
        length = self.headers.get("Content-Length")
        if length is None:
            return 411, "A Content-Length is required."
        if not length.strip().isdigit():
            return 400, "The Content-Length is not a number."
        if int(length) > limit:
            return 413, f"The body is over {byte_size(limit)}; Slack never sends that much."
        timestamp = self.headers.get("X-Slack-Request-Timestamp", "")
        if not self.headers.get("X-Slack-Signature") or not timestamp.strip().isdigit():
            return 401, "Not signed by Slack."
        if abs(time.time() - int(timestamp)) > SIGNATURE_AGE_S:
            return 401, "The Slack signature's timestamp is too old or in the future."
        return None

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` and close; the body, if the client sends one, is barely read."""
        self.log_message('"%s" refused %d: %s', self.requestline, status, message)
        body = (message + "\n").encode()
        self.close_connection = True
        try:
            self.send_response(status)
            if status == 405:
                self.send_header("Allow", "POST")
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            return
        self._linger()

    def _linger(self) -> None:
        """Discard what the client still sends for a moment, so closing with its body unread
        does not reset the connection before it reads the answer; bounded in bytes and time."""
        buffer = bytearray(64 * 1024)
        drained = 0
        deadline = time.monotonic() + LINGER_S
        try:
            while drained < LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                got = self.connection.recv_into(buffer)
                if not got:
                    return
                drained += got
        except OSError:
            return

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)

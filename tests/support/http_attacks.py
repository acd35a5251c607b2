"""Raw HTTP clients for the bounds of the bot's HTTP server (bot/http_server.py): a body far
larger than it claims to accept, streamed for real; connections that say nothing or half a
request; hand-written requests http.client would not send. Used by the tests and by
bench/resource_http.py.
"""

from __future__ import annotations

import select
import socket
import time
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
MIB = 1024 * 1024
_CHUNK = bytes(64 * 1024)


@dataclass(frozen=True)
class Streamed:
    """What the server answered to a streamed body, and how much of it was sent by then."""

    status: int
    sent: int
    claimed: int


def memory_kib(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (`VmRSS`) or its peak (`VmHWM`), in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer (0 when there is none)."""
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def stream_unsigned(port: int, claimed: int = 300 * MIB, *, wait_s: float = 60) -> Streamed:
    """POST /slack/events claiming `claimed` bytes and really sending them, unsigned, until the
    server answers (or all is sent); then read the answer."""
    head = (
        f"POST /slack/events HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {claimed}\r\n\r\n"
    ).encode()
    with socket.create_connection((HOST, port), timeout=wait_s) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        sent = 0
        deadline = time.monotonic() + wait_s
        while sent < claimed and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 1.0)
            if readable:
                break  # the server answered (or closed) before the body was all sent
            if writable:
                try:
                    sent += sock.send(_CHUNK[: claimed - sent])
                except BlockingIOError:
                    continue
                except OSError:
                    break
        sock.setblocking(True)
        sock.settimeout(wait_s)
        return Streamed(status_of(_read_all(sock)), sent, claimed)


def raw_request(port: int, request: bytes, *, wait_s: float = 10) -> int:
    """Send `request` as written and return the answer's status."""
    with socket.create_connection((HOST, port), timeout=wait_s) as sock:
        sock.sendall(request)
        return status_of(_read_all(sock))


def idle_connections(port: int, count: int, *, partial: bool = False) -> list[socket.socket]:
    """`count` open connections that send nothing, or (`partial`) half a request's headers."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection((HOST, port), timeout=10)
        if partial:
            sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\n")
        socks.append(sock)
    return socks


def closed_by_server(socks: list[socket.socket], *, at_least: int, wait_s: float = 10) -> int:
    """How many of `socks` the server has closed (end of stream or a reset): waits until at
    least `at_least` are, or `wait_s` has passed."""
    closed = 0
    pending = list(socks)
    deadline = time.monotonic() + wait_s
    while pending and closed < at_least and time.monotonic() < deadline:
        readable, _, _ = select.select(pending, [], [], 0.2)
        for sock in readable:
            pending.remove(sock)
            try:
                sock.setblocking(False)
                ended = sock.recv(4096) == b""
            except (ConnectionResetError, BlockingIOError):
                ended = True
            closed += ended
    return closed


def _read_all(sock: socket.socket) -> bytes:
    answer = b""
    try:
        while data := sock.recv(65536):
            answer += data
    except (ConnectionResetError, TimeoutError):
        pass
    return answer

"""bot/http_server.py in-process, with a WSGI app the test controls: a request's body reaches the
app whole; when every connection is being answered a new one gets 503; a connection that never
finishes its request is closed after the read deadline. (The real bot process under oversized
bodies and idle connections: test_slack_e2e_http_bounds.py.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bot.http_server import HttpLimits, SlackHTTPServer
from bot.settings import Settings, SettingsError
from tests.support.http_attacks import closed_by_server, idle_connections, raw_request

App = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@contextmanager
def serving(app: App, limits: HttpLimits) -> Iterator[int]:
    server = SlackHTTPServer(("127.0.0.1", 0), limits)
    server.set_app(app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def signed_post(body: bytes) -> bytes:
    """Headers that pass the server's checks (Bolt, not the server, verifies the signature)."""
    return (
        b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Slack-Signature: v0=00\r\n"
        b"X-Slack-Request-Timestamp: %d\r\nContent-Length: %d\r\n\r\n%s"
        % (int(time.time()), len(body), body)
    )


def test_the_body_reaches_the_app_whole() -> None:
    seen: list[bytes] = []

    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        seen.append(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
        start("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    body = b"payload=" + b"x" * 200_000
    with serving(app, HttpLimits(max_body_bytes=256 * 1024)) as port:
        assert raw_request(port, signed_post(body)) == 200
        assert raw_request(port, signed_post(body + b"y" * 100_000)) == 413
    assert seen == [body]


def test_when_every_connection_is_being_answered_a_new_one_gets_503() -> None:
    entered = threading.Semaphore(0)
    release = threading.Event()

    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        entered.release()
        release.wait(30)
        start("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    with serving(app, HttpLimits(max_connections=2)) as port:
        answers: list[int] = []
        busy = [
            threading.Thread(target=lambda: answers.append(raw_request(port, signed_post(b"{}"))))
            for _ in range(2)
        ]
        for thread in busy:
            thread.start()
        for _ in busy:
            assert entered.acquire(timeout=10)
        assert raw_request(port, signed_post(b"{}")) == 503
        release.set()
        for thread in busy:
            thread.join(10)
        assert answers == [200, 200]


@pytest.mark.slow
def test_a_request_never_finished_is_closed_at_the_read_deadline() -> None:
    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        raise AssertionError("no request is complete")

    with serving(app, HttpLimits(read_deadline_s=0.5)) as port:
        socks = idle_connections(port, 1, partial=True) + idle_connections(port, 1)
        try:
            assert closed_by_server(socks, at_least=2, wait_s=20) == 2
        finally:
            for sock in socks:
                sock.close()


def test_the_bounds_are_settings_of_at_least_one() -> None:
    env = {"QUERYBOT_HTTP_MAX_BODY_KB": "512", "QUERYBOT_HTTP_MAX_CONNECTIONS": "16"}
    settings = Settings.from_env(env, dotenv=False)
    assert (settings.http_max_body_kb, settings.http_max_connections) == (512, 16)
    defaults = Settings.from_env({}, dotenv=False)
    assert (defaults.http_max_body_kb, defaults.http_max_connections) == (1024, 64)
    with pytest.raises(SettingsError, match="QUERYBOT_HTTP_MAX_CONNECTIONS must be a whole number"):
        Settings.from_env({"QUERYBOT_HTTP_MAX_CONNECTIONS": "0"}, dotenv=False)

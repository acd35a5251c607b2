"""The Bolt app: one WebClient, the listeners over what the wiring builds on it (the
conversations, their worker pool, ...); served over HTTP or Socket Mode."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.error import BoltUnhandledRequestError
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.signature import SignatureVerifier

from bot import listeners, payloads
from bot.files.sandboxes import SandboxAgents
from bot.http_server import SLACK_PATH, HttpLimits, SlackHTTPServer
from bot.pane_setup import pane_missing
from bot.routing import Router
from bot.settings import Settings
from bot.slack_check import SlackUnusable, api_url, bot_identity, unusable
from bot.store.base import Store
from bot.wiring import wire

if TYPE_CHECKING:
    from bot.schedules.service import Schedules

log = logging.getLogger(__name__)

#: Threads for Bolt's listeners (Bolt's default is 5). A listener makes a Slack call or two before
#: it returns (the "Working on it…" placeholder, the decided card), and a click is acked only
#: once a thread takes it: with 5, fifty clicks at once against a 150 ms Slack API waited up to
#: 2.7 s for their ack (the load benchmark, issue 9).
LISTENER_THREADS = 32


def build_client(settings: Settings) -> WebClient:
    """The bot's WebClient: `SLACK_API_URL` when set, and retries on HTTP 429 (after Slack's
    Retry-After) and on HTTP 500 / 503 (slack_sdk's handlers; a connection error is retried
    by default). Edits are safe to repeat; a repeated post after a 500 may show twice, which
    beats an answer lost."""
    base_url = api_url(settings.slack_api_url)
    client = WebClient(token=settings.slack_bot_token, base_url=base_url or WebClient.BASE_URL)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=2))
    client.retry_handlers.append(ServerErrorRetryHandler(max_retry_count=2))
    return client


class QuerybotApp(App):
    """Bolt's App, holding the background work `build_app` started (the recovery watch) so the
    serve functions stop it on the way out: a thread left running at exit keeps the warehouses'
    objects alive, and DuckDB then prints pages of "leaked" warnings after the last line."""

    recovery: threading.Event | None = None
    #: The scheduled questions, whose engine the serve functions start (None: off).
    schedules: Schedules | None = None

    def start_schedules(self) -> None:
        if self.schedules is not None:
            self.schedules.start()

    def stop_background(self) -> None:
        if self.recovery is not None:
            self.recovery.set()
        if self.schedules is not None:
            self.schedules.stop()


def build_app(
    settings: Settings,
    router: Router,
    store: Store,
    *,
    sandboxes: SandboxAgents | None = None,
) -> QuerybotApp:
    """The Bolt app with every listener registered, acting through what `wire`
    builds on the app's client. Calls `auth.test` first: a token Slack refuses, or a Slack it
    cannot reach, raises SlackUnusable (one line) before anything starts.

    `router` says which Agent answers each thread: channels no warehouse answers are refused
    politely, and the Home tab lists the tables of every warehouse. With `sandboxes` (the Router's
    override), files shared in a conversation are loaded into its sandbox, and idle sandboxes are
    swept in the background.

    HTTP requests are verified with `settings.slack_signing_secret`; Socket Mode requests are
    not signed, so the secret may be empty there.
    """
    client = build_client(settings)
    identity = bot_identity(client)
    log.info("Slack accepts the bot token: @%s in %s", identity.user, identity.team)
    missing = pane_missing(identity.scopes)
    if missing:
        log.warning(missing)
    app = QuerybotApp(
        client=client,
        signing_secret=settings.slack_signing_secret,
        # checked just above, where a failure is one line; Bolt's own eager check would end
        # in a traceback (it calls auth.test once more, on the first request, and keeps it)
        token_verification_enabled=False,
        listener_executor=ThreadPoolExecutor(
            max_workers=LISTENER_THREADS, thread_name_prefix="querybot-listener"
        ),
        # a request no listener takes reaches `on_error` (one log line), not Bolt's warning
        raise_error_for_unhandled_request=True,
    )
    app.error(on_error)
    querybot = wire(settings, client, router, store, sandboxes=sandboxes)
    if sandboxes is not None:
        sandboxes.start(querybot.conversations.work.submit)
    listeners.register(app, querybot)
    # threads a crashed process (this one before a restart, or another replica) left mid-way
    # hear what happened
    app.recovery = querybot.conversations.recovery.watch(settings.recover_every_s)
    app.schedules = querybot.schedules
    return app


def on_error(error: Exception, body: dict[str, Any]) -> None:
    """Bolt's error handler. A request no listener takes (it passed the payload checks,
    so it is one Slack sends, e.g. an event of a subtype nobody reads) keeps Bolt's answer
    and is logged in one line. A listener that raised is a bug in querybot, not in the
    request: logged with its traceback for whoever fixes it (the person was told by the
    listener's own failure message)."""
    kind = body.get("type") if isinstance(body, dict) else None
    if isinstance(error, BoltUnhandledRequestError):
        status = error.current_response.status if error.current_response else 404
        log.info("No listener takes this %s request (answered %s)", kind, status)
        return
    log.error("A listener failed on a %s request", kind, exc_info=error)


class CheckedRequestHandler(SlackRequestHandler):
    """Bolt's WSGI adapter with each body checked first (`payloads.check`): Bolt parses a body
    before any middleware of its runs, and a body it cannot parse or read ids out of ended in a
    traceback and HTTP 500. A request signed with `signing_secret` that is not one the bot
    serves, in the shape Slack sends, is answered 400 with the reason; an unsigned one 401, as
    Bolt answers it, without its body being parsed."""

    def __init__(self, app: App, *, path: str, signing_secret: str) -> None:
        super().__init__(app, path=path)
        self.verifier = SignatureVerifier(signing_secret)

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        length = int(request.environ.get("CONTENT_LENGTH") or 0)
        raw: bytes = request.environ["wsgi.input"].read(length)
        given = request.get_headers()
        headers = {k: v for k, v in given.items() if isinstance(v, str)}  # WSGI's are strings
        if not self.verifier.is_valid_request(raw, headers):
            return BoltResponse(status=401, body={"error": "invalid request"})
        try:
            text = raw.decode("utf-8")
            payloads.check(text, headers.get("content-type", "").split(";")[0] or None)
        except (UnicodeDecodeError, payloads.Malformed) as exc:
            log.info("Refused a signed request that Slack would not send (400): %s", exc)
            return BoltResponse(status=400, body=f"Not a request querybot serves: {exc}\n")
        return self.app.dispatch(BoltRequest(body=text, query=request.query_string, headers=given))


def _exit_on_sigterm() -> None:
    """SIGTERM (docker stop) exits like Ctrl-C, so queued worker jobs finish first."""

    def stop(signum: int, frame: FrameType | None) -> None:
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)


def serve_http(app: QuerybotApp, port: int, settings: Settings) -> None:
    """Serve Slack's events and interactions on `POST /slack/events` until stopped, within the
    settings' HTTP bounds (body size, connections; see `HttpLimits`). A port it cannot
    listen on raises CannotListen (one line)."""
    _exit_on_sigterm()
    limits = HttpLimits(
        max_body_bytes=settings.http_max_body_kb * 1024,
        max_connections=settings.http_max_connections,
    )
    try:
        with SlackHTTPServer(("0.0.0.0", port), limits) as server:
            handler = CheckedRequestHandler(
                app, path=SLACK_PATH, signing_secret=settings.slack_signing_secret
            )
            server.set_app(handler)
            app.start_schedules()
            log.info("querybot listening on http://0.0.0.0:%d%s", server.server_port, SLACK_PATH)
            server.serve_forever()
    finally:
        app.stop_background()


def serve_socket_mode(app: QuerybotApp, app_token: str, *, ping_s: float) -> None:
    """Connect to Slack over Socket Mode and serve until stopped, checking the connection every
    `ping_s` seconds (a dropped one is reopened then)."""
    _exit_on_sigterm()
    try:
        handler = _connect_socket_mode(app, app_token, ping_s)
        app.start_schedules()
        log.info("querybot is connected to Slack in Socket Mode")
        try:
            threading.Event().wait()  # until SIGTERM or Ctrl-C, as SocketModeHandler.start waits
        finally:
            handler.close()  # its threads, too, would keep the warehouses' objects alive
    finally:
        app.stop_background()


def _connect_socket_mode(app: App, app_token: str, ping_s: float) -> SocketModeHandler:
    """`apps.connections.open`, then its WebSocket. A first connection that fails raises
    SlackUnusable: slack_sdk would log the error and retry for ever (its reconnects are for a
    connection lost later)."""
    handler = SocketModeHandler(app, app_token, ping_interval=ping_s)
    errors: list[Exception] = []
    handler.client.on_error_listeners.append(errors.append)
    try:
        handler.connect()
    except Exception as exc:
        handler.close()
        raise unusable(
            exc, "SLACK_APP_TOKEN", "apps.connections.open", app.client.base_url
        ) from None
    if not handler.client.is_connected():
        handler.close()
        where = urlsplit(handler.client.wss_uri or "").netloc or "Slack"
        why = f"{type(errors[-1]).__name__}: {errors[-1]}" if errors else "no answer"
        raise SlackUnusable(
            f"the Socket Mode connection to {where} could not be opened ({why}): check that "
            "this machine may open WebSocket (wss://) connections to Slack through its proxy "
            "and firewall, then try again.",
            "unreachable",
        )
    return handler

"""The Bolt app: one WebClient, the listeners, the worker pool; served over HTTP or Socket Mode."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot import listeners
from bot.approvals import Approvers
from bot.channels import ChannelRules
from bot.files import SlackFiles
from bot.http_server import SLACK_PATH, HttpLimits, SlackHTTPServer
from bot.routing import RoutedChannelRules, Router
from bot.sandboxes import SandboxAgents
from bot.settings import Settings
from bot.store import Store
from bot.threads import Conversations, ThreadAgent
from bot.uploads import ThreadUploads
from bot.work import Work

log = logging.getLogger(__name__)

#: Seconds between looks for work that a crashed process (another replica) left unfinished.
RECOVER_EVERY_S = 60.0


#: Threads for Bolt's listeners (Bolt's default is 5). A listener makes a Slack call or two before
#: it returns (the "Working on it…" placeholder, the decided card), and a click is acked only
#: once a thread takes it: with 5, fifty clicks at once against a 150 ms Slack API waited up to
#: 2.7 s for their ack (bench/load_report.py, issue 9).
LISTENER_THREADS = 32


def build_client(settings: Settings) -> WebClient:
    """The bot's WebClient: `SLACK_API_URL` when set, and retries on HTTP 429 (after Slack's
    Retry-After) and on HTTP 500 / 503 (slack_sdk's handlers; a connection error is retried
    by default). Edits are safe to repeat; a repeated post after a 500 may show twice, which
    beats an answer lost."""
    options = {}
    if settings.slack_api_url:
        options["base_url"] = settings.slack_api_url.rstrip("/") + "/"
    client = WebClient(token=settings.slack_bot_token, **options)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=2))
    client.retry_handlers.append(ServerErrorRetryHandler(max_retry_count=2))
    return client


def build_app(
    settings: Settings,
    agent: ThreadAgent,
    store: Store,
    *,
    sandboxes: SandboxAgents | None = None,
) -> App:
    """The Bolt app with every listener registered. Calls `auth.test` to check the token.

    `agent` is normally a `Router` (bot/routing.py): channels no warehouse answers are refused
    politely, and the Home tab lists the tables of every warehouse. With `sandboxes` (the
    Router's override), files shared in a conversation are loaded into its sandbox, and idle
    sandboxes are swept in the background.

    HTTP requests are verified with `settings.slack_signing_secret`; Socket Mode requests are
    not signed, so the secret may be empty there.
    """
    client = build_client(settings)
    app = App(
        client=client,
        signing_secret=settings.slack_signing_secret,
        listener_executor=ThreadPoolExecutor(
            max_workers=LISTENER_THREADS, thread_name_prefix="querybot-listener"
        ),
    )
    conversations = Conversations(
        client, agent, store, Work(settings.workers), display_rows=settings.display_rows
    )
    approvers = Approvers(settings.approver_rule(), client)
    tables: Callable[[], list[tuple[str, str]]]
    if isinstance(agent, Router):
        channels: ChannelRules = RoutedChannelRules(client, agent.config, settings.channels)
        tables = agent.tables
    else:
        channels = ChannelRules(client, settings.channels)
        tables = list

    uploads = None
    if sandboxes is not None:
        files = SlackFiles(client, max_bytes=settings.file_max_bytes)
        uploads = ThreadUploads(conversations, sandboxes, files)
        sandboxes.start(conversations.work.submit)

    listeners.register(app, conversations, store, approvers, channels, tables, uploads)
    # threads a crashed process (this one before a restart, or another replica) left mid-way
    # hear what happened
    conversations.watch(RECOVER_EVERY_S)
    return app


def _exit_on_sigterm() -> None:
    """SIGTERM (docker stop) exits like Ctrl-C, so queued worker jobs finish first."""

    def stop(signum: int, frame: FrameType | None) -> None:
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)


def serve_http(app: App, port: int, settings: Settings) -> None:
    """Serve Slack's events and interactions on `POST /slack/events` until stopped, within the
    settings' HTTP bounds (body size, connections; see bot/http_server.py)."""
    _exit_on_sigterm()
    limits = HttpLimits(
        max_body_bytes=settings.http_max_body_kb * 1024,
        max_connections=settings.http_max_connections,
    )
    with SlackHTTPServer(("0.0.0.0", port), limits) as server:
        server.set_app(SlackRequestHandler(app, path=SLACK_PATH))
        server.serve_forever()


def serve_socket_mode(app: App, app_token: str) -> None:
    """Connect to Slack over Socket Mode (`apps.connections.open`) and serve until stopped."""
    _exit_on_sigterm()
    SocketModeHandler(app, app_token).start()

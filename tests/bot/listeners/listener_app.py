"""The app the listener tests drive, in process, with a fake agent and the Web API stand-in.

It is assembled as `build_app` assembles it (bot/wiring.py's `wire`), with one difference: Bolt
runs listeners inline, and a test waits for the worker pool to go idle, so "nothing else
happened" is checked exactly rather than after a sleep. (`build_app` itself is tested in
test_build_app.py, over the real agent, and by the end-to-end tests.)

The fake agent (fake_agent.py) records what each listener asked of it (thread, user, labels, SQL
hash) and answers as a test tells it (an exception, a held decision, a corrected proposal), which
is what the tests check; the real agent is in the end-to-end tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse

from bot import listeners
from bot.app import build_client
from bot.blocks import APPROVE_ACTION, EDIT_ACTION
from bot.blocks.messages import card_of
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT
from bot.conversations.work import Work
from bot.listeners.querybot import Querybot
from bot.routing import Route
from bot.settings import Settings
from bot.store.base import Store
from bot.store.sqlite import SqliteStore
from bot.wiring import wire
from tests.support import slack_payloads as payloads
from tests.support.fake_agent import FakeAgent, routed
from tests.support.slack_payloads import BOB, action_request, event_request, signed_headers
from tests.support.standin import Posted, SlackStandin

SECRET = "listener-test-secret"


class InlineExecutor(Executor):
    """Runs Bolt's listener right away, so a dispatch returns after the listener did."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


@dataclass
class Bot:
    app: App
    work: Work
    agent: FakeAgent
    store: Store
    slack: SlackStandin
    #: What the listeners act through (its `schedules`, to start their engine in a test).
    querybot: Querybot

    def _dispatch(self, text: str, content_type: str) -> BoltResponse:
        headers = {"content-type": content_type, **signed_headers(SECRET, text)}
        response = self.app.dispatch(BoltRequest(body=text, headers=headers))
        assert self.work.wait_idle(10), "the worker pool did not finish"
        return response

    def event(self, body: dict[str, Any]) -> BoltResponse:
        self.slack.saw_event(body.get("event") or {})  # delivered: the app has seen it
        return self._dispatch(*event_request(body))

    def click(self, posted: Posted, action: str, user: str = BOB) -> BoltResponse:
        return self._dispatch(*action_request(payloads.click(posted, action, user=user)))

    def submit(self, payload: dict[str, Any]) -> BoltResponse:
        return self._dispatch(*action_request(payload))

    def thread(self, channel: str, ts: str) -> list[Posted]:
        return self.slack.thread(channel, ts)

    def ask(self, text: str = "how many orders?", **kwargs: Any) -> tuple[str, str]:
        channel = kwargs.pop("channel", None) or payloads.new_channel()
        body = payloads.mention(channel, text, **kwargs)
        assert self.event(body).status == 200
        return channel, kwargs.get("thread_ts") or body["event"]["ts"]


@contextmanager
def assembled(
    slack: SlackStandin,
    tmp_path: Path,
    override: Callable[[str], Route | None] | None = None,
    **settings: Any,
) -> Iterator[Bot]:
    """The app as `build_app` assembles it (bot/wiring.py's `wire`; listeners inline), with
    `settings` (e.g. who may approve) and `override` asked first for the route of each thread.
    Streamed plans are off unless `settings` turn them on (`slack_stream=True`): each question
    in a thread would start one, and most tests read the cards only."""
    given = Settings(
        slack_bot_token="xoxb-test",
        slack_signing_secret=SECRET,
        slack_api_url=slack.url,
        workers=4,
        **{"slack_stream": False, **settings},
    )
    client = build_client(given)
    app = App(
        client=client,
        signing_secret=SECRET,
        listener_executor=InlineExecutor(),
        token_verification_enabled=False,
    )
    store = SqliteStore(tmp_path / "state.sqlite")
    agent = FakeAgent()
    querybot = wire(given, client, routed(agent, override), store)
    listeners.register(app, querybot)
    work = querybot.conversations.work
    try:
        yield Bot(app, work, agent, store, slack, querybot)
    finally:
        work.shutdown()


def buttons(message: Posted) -> dict[str, str]:
    return message.action_values()


def pid_of(message: Posted) -> str:
    """The proposal id its decision buttons name (with the hash of the SQL they show)."""
    return card_of(buttons(message)[APPROVE_ACTION])[0]


def edit(bot: Bot, proposal: Posted, sql: str, user: str = BOB) -> BoltResponse:
    """Press Edit SQL on `proposal` and submit the modal it opened with `sql`."""
    bot.click(proposal, EDIT_ACTION, user=user)
    view = bot.slack.opened_views[-1]["view"]
    return bot.submit(payloads.view_submission(view, {EDIT_BLOCK: {EDIT_INPUT: sql}}, user=user))

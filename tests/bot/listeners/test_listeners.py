"""Listener routing, in process, with a fake agent and the Web API stand-in.

The app is assembled as `build_app` assembles it (bot/wiring.py's `wire`), with one difference:
Bolt runs listeners inline, and the test waits for the worker pool to go idle, so "nothing else
happened" is checked exactly rather than after a sleep. (`build_app` itself is tested at the end,
over the real agent, and by the end-to-end tests.)

The fake agent (fake_agent.py) records what each listener asked of it (thread, user, labels, SQL
hash) and answers as a test tells it (an exception, a held decision, a corrected proposal), which
is what these tests check; the real agent is in the end-to-end tests.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from slack_bolt import App, BoltRequest, BoltResponse

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.outcome import Outcome
from bot import listeners
from bot.app import build_app, build_client
from bot.blocks import APPROVE_ACTION, CANCEL_ACTION, EDIT_ACTION, REJECT_ACTION
from bot.blocks.messages import card_of
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT
from bot.conversations.cancels import NOT_RUNNING
from bot.conversations.conversations import EDIT_FAILED
from bot.conversations.outcomes import REPAIRED, RUN_FAILED
from bot.conversations.work import Work
from bot.routing import Route
from bot.settings import Settings
from bot.store.base import Status, Store
from bot.store.sqlite import SqliteStore
from bot.wiring import wire
from connectors.duckdb.connector import DuckDBConnector
from tests.support import slack_payloads as payloads
from tests.support.botproc import sql_reply
from tests.support.fake_agent import FakeAgent, answer_outcome, proposal_outcome, routed
from tests.support.slack_payloads import ALICE, BOB, action_request, event_request, signed_headers
from tests.support.standin import BOT_USER_ID, TEAM_ID, Posted, SlackStandin

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

    def _dispatch(self, text: str, content_type: str) -> BoltResponse:
        headers = {"content-type": content_type, **signed_headers(SECRET, text)}
        response = self.app.dispatch(BoltRequest(body=text, headers=headers))
        assert self.work.wait_idle(10), "the worker pool did not finish"
        return response

    def event(self, body: dict[str, Any]) -> BoltResponse:
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
    `settings` (e.g. who may approve) and `override` asked first for the route of each thread."""
    given = Settings(
        slack_bot_token="xoxb-test",
        slack_signing_secret=SECRET,
        slack_api_url=slack.url,
        workers=4,
        **settings,
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
        yield Bot(app, work, agent, store, slack)
    finally:
        work.shutdown()


@pytest.fixture
def bot(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    with assembled(slack, tmp_path) as built:
        yield built


def buttons(message: Posted) -> dict[str, str]:
    return message.action_values()


def pid_of(message: Posted) -> str:
    """The proposal id its decision buttons name (with the hash of the SQL they show)."""
    return card_of(buttons(message)[APPROVE_ACTION])[0]


# -- mentions -----------------------------------------------------------------------------------


def test_mention_asks_the_agent_and_turns_working_into_the_proposal(bot: Bot) -> None:
    channel, ts = bot.ask("which region sold most?")
    assert bot.agent.asks == [(f"{TEAM_ID}:{channel}:{ts}", "which region sold most?", ALICE)]
    [message] = bot.thread(channel, ts)
    assert "Working on it" in message.history[0][1][0]["text"]["text"]
    pid = pid_of(message)
    value = buttons(message)[APPROVE_ACTION]
    assert card_of(value) == (pid, "0" * 64)  # the proposal and the hash of the SQL shown
    assert buttons(message) == {APPROVE_ACTION: value, REJECT_ACTION: value, EDIT_ACTION: value}
    record = bot.store.proposal(pid)
    assert record and record.status is Status.PENDING
    assert (record.channel, record.message_ts, record.requested_by) == (channel, message.ts, ALICE)
    post = bot.slack.calls_to("chat.postMessage")[0].params
    assert (post["unfurl_links"], post["unfurl_media"], post["thread_ts"]) == (False, False, ts)


def test_mention_text_is_unescaped_for_the_agent(bot: Bot) -> None:
    bot.ask("revenue &gt; 100 &amp; cost &lt; 5?")
    assert bot.agent.asks[0][1] == "revenue > 100 & cost < 5?"


def test_mention_inside_a_thread_continues_that_thread(bot: Bot) -> None:
    channel, ts = bot.ask("first")
    bot.ask("second", channel=channel, thread_ts=ts)
    assert [a[0] for a in bot.agent.asks] == [f"{TEAM_ID}:{channel}:{ts}"] * 2


def test_empty_mention_gets_help_and_no_agent_call(bot: Bot) -> None:
    channel, ts = bot.ask("")
    [message] = bot.thread(channel, ts)
    assert "Ask me a question about the data" in message.all_text()
    assert bot.agent.asks == []


def test_repeated_delivery_is_answered_once(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    channel = payloads.new_channel()
    body = payloads.mention(channel, "how many?")
    with caplog.at_level(logging.INFO):
        bot.event(body)
        bot.event(body)
    assert len(bot.agent.asks) == 1
    assert len(bot.thread(channel, body["event"]["ts"])) == 1
    assert "Ignoring a repeated delivery" in caplog.text


def test_mentions_by_bots_are_ignored(bot: Bot) -> None:
    body = payloads.mention(payloads.new_channel(), "loop?")
    body["event"]["bot_id"] = "B0OTHER"
    bot.event(body)
    assert bot.agent.asks == [] and bot.slack.calls_to("chat.postMessage") == []


# -- follow-ups -------------------------------------------------------------------------------


def test_follow_up_without_mention_continues_a_known_thread(bot: Bot) -> None:
    channel, ts = bot.ask("first")
    bot.event(payloads.message(channel, "and by month?", thread_ts=ts))
    assert bot.agent.asks[-1] == (f"{TEAM_ID}:{channel}:{ts}", "and by month?", ALICE)
    proposals = [m for m in bot.thread(channel, ts) if APPROVE_ACTION in buttons(m)]
    assert len(proposals) == 1, "the first proposal was replaced by the follow-up's"


def test_reply_in_an_unknown_thread_is_left_alone(bot: Bot) -> None:
    channel, ts = payloads.new_channel(), payloads.new_ts()
    bot.event(payloads.message(channel, "chatting among humans", thread_ts=ts))
    assert bot.agent.has_thread_calls == [f"{TEAM_ID}:{channel}:{ts}"]
    assert bot.agent.asks == []
    assert [c.method for c in bot.slack.calls if c.method != "auth.test"] == []


@pytest.mark.parametrize(
    "changes",
    [
        {"subtype": "message_changed"},
        {"subtype": "message_deleted"},
        {"subtype": "bot_message", "bot_id": "B0OTHER"},
        {"bot_id": "B0OTHER"},
        {"thread_ts": None},
        {"text": f"<@{BOT_USER_ID}> also an app_mention"},
        {"text": ""},
    ],
)
def test_messages_that_are_not_follow_ups_are_ignored(bot: Bot, changes: dict[str, Any]) -> None:
    channel, ts = bot.ask("first")
    kwargs: dict[str, Any] = {"thread_ts": ts, "text": "and by month?"} | changes
    text = kwargs.pop("text")
    bot.event(payloads.message(channel, text, **kwargs))
    assert len(bot.agent.asks) == 1
    assert bot.agent.has_thread_calls == []


def test_thread_broadcast_reply_is_a_follow_up(bot: Bot) -> None:
    channel, ts = bot.ask("first")
    bot.event(payloads.message(channel, "and by month?", thread_ts=ts, subtype="thread_broadcast"))
    assert len(bot.agent.asks) == 2


def test_new_question_supersedes_the_pending_proposal(bot: Bot) -> None:
    channel, ts = bot.ask("first")
    [old] = bot.thread(channel, ts)
    old_pid = pid_of(old)
    bot.event(payloads.message(channel, "actually, by month", thread_ts=ts))
    redrawn, new = bot.thread(channel, ts)
    assert buttons(redrawn) == {}
    assert "Replaced by a newer question" in redrawn.all_text()
    assert bot.store.proposal(old_pid).status is Status.SUPERSEDED  # type: ignore[union-attr]
    assert APPROVE_ACTION in buttons(new)
    bot.click(old, APPROVE_ACTION)  # a click on the buttons as they were
    assert bot.agent.decisions == []
    [note] = bot.slack.ephemerals_for(channel, BOB)
    assert "replaced by a newer question" in note["text"] and note["thread_ts"] == ts


# -- clicks ------------------------------------------------------------------------------------


def test_approve_marks_the_proposal_runs_once_and_posts_the_result(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    pid = pid_of(proposal)
    assert bot.click(proposal, APPROVE_ACTION).status == 200
    assert bot.agent.decisions == [(f"{TEAM_ID}:{channel}:{ts}", pid, True, BOB)]
    assert bot.agent.labels == [{"slack_team": TEAM_ID, "slack_channel": channel}]
    decided, result, chart = bot.thread(channel, ts)  # a breakdown: Slack's chart follows
    assert buttons(decided) == {}
    assert f"Approved by <@{BOB}>" in decided.all_text()
    assert result.table() is not None and result.table()[2] == ["R1", "1,000.25"]  # type: ignore[index]
    assert [b["type"] for b in chart.blocks] == ["data_visualization"]
    assert bot.store.proposal(pid).status is Status.DONE  # type: ignore[union-attr]


def test_second_click_changes_nothing_and_says_who_decided(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, APPROVE_ACTION, user=BOB)
    bot.click(proposal, REJECT_ACTION, user=ALICE)
    assert len(bot.agent.decisions) == 1
    [note] = bot.slack.ephemerals_for(channel, ALICE)
    assert note["text"] == f"This proposal was already approved by <@{BOB}>."
    assert len(bot.thread(channel, ts)) == 3  # the card, the result, its chart


def test_simultaneous_clicks_run_once(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    barrier = threading.Barrier(6)

    def click(i: int) -> None:
        barrier.wait()
        bot.click(proposal, APPROVE_ACTION, user=f"U0CLICK{i:02d}")

    threads = [threading.Thread(target=click, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bot.work.wait_idle(10)
    assert len(bot.agent.decisions) == 1
    assert len(bot.slack.ephemerals) == 5
    assert len(bot.thread(channel, ts)) == 3  # the card, the result, its chart


def test_reject_runs_nothing_and_says_who(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, REJECT_ACTION)
    assert bot.agent.decisions[0][2] is False
    [decided] = bot.thread(channel, ts)
    assert f"Rejected by <@{BOB}>" in decided.all_text() and buttons(decided) == {}


def test_cancel_of_a_query_that_is_not_running_only_says_so(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    pid = pid_of(proposal)
    button = {"type": "button", "action_id": CANCEL_ACTION, "value": pid}
    card = Posted(channel, proposal.ts, ts, "x", [{"type": "actions", "elements": [button]}])
    bot.click(card, CANCEL_ACTION, user=ALICE)  # still waiting for approval
    bot.click(proposal, APPROVE_ACTION)
    assert bot.work.wait_idle(10)
    bot.click(card, CANCEL_ACTION, user=ALICE)  # answered
    assert bot.agent.cancels == []
    notes = [n["text"] for n in bot.slack.ephemerals_for(channel, ALICE)]
    assert notes == [NOT_RUNNING, NOT_RUNNING]
    assert "already finished" in NOT_RUNNING


def test_cancel_of_a_running_query_asks_the_agent_off_the_thread_worker(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    pid = pid_of(proposal)
    bot.agent.hold_decisions = threading.Event()  # the approved query runs until released
    button = {"type": "button", "action_id": CANCEL_ACTION, "value": pid}
    card = Posted(channel, proposal.ts, ts, "x", [{"type": "actions", "elements": [button]}])
    try:
        # Dispatched without waiting for the worker pool, busy with the decision until the end.
        for posted, action, user in ((proposal, APPROVE_ACTION, BOB), (card, CANCEL_ACTION, ALICE)):
            text, content_type = action_request(payloads.click(posted, action, user=user))
            headers = {"content-type": content_type, **signed_headers(SECRET, text)}
            assert bot.app.dispatch(BoltRequest(body=text, headers=headers)).status == 200
            assert bot.agent.deciding.wait(10)
        [note] = bot.slack.wait_for(
            lambda: bot.slack.ephemerals_for(channel, ALICE), what="the note to Alice"
        )
    finally:
        bot.agent.hold_decisions.set()
    assert bot.agent.cancels == [(f"{TEAM_ID}:{channel}:{ts}", pid, ALICE)]
    assert note["text"] == NOT_RUNNING  # the fake agent never has anything running
    assert bot.work.wait_idle(10)


def test_cancel_after_the_query_ended_asks_nothing(bot: Bot) -> None:
    """A claim still running (its outcome being posted, or another replica's query) whose
    query is not running in this process: told so, and the agent is not asked to cancel (so
    the audit log records no request)."""
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    pid = pid_of(proposal)
    assert bot.store.claim(pid, approved=True, user=BOB, sql_sha256="0" * 64).won
    button = {"type": "button", "action_id": CANCEL_ACTION, "value": pid}
    card = Posted(channel, proposal.ts, ts, "x", [{"type": "actions", "elements": [button]}])
    bot.click(card, CANCEL_ACTION, user=ALICE)
    [note] = bot.slack.wait_for(
        lambda: bot.slack.ephemerals_for(channel, ALICE), what="the note to Alice"
    )
    assert note["text"] == NOT_RUNNING
    assert bot.agent.cancels == []


def test_click_on_an_unknown_proposal(bot: Bot) -> None:
    channel, ts = payloads.new_channel(), payloads.new_ts()
    button = {"type": "button", "action_id": APPROVE_ACTION, "value": "nope"}
    bot.click(
        Posted(channel, ts, ts, "x", [{"type": "actions", "elements": [button]}]), APPROVE_ACTION
    )
    assert bot.agent.decisions == []
    [note] = bot.slack.ephemerals_for(channel, BOB)
    assert "do not know this proposal" in note["text"]


def test_click_naming_a_proposal_of_another_channel_is_refused(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    elsewhere = Posted("C0ELSEWHERE", proposal.ts, proposal.thread_ts, "x", proposal.blocks)
    bot.click(elsewhere, APPROVE_ACTION)
    assert bot.agent.decisions == []
    assert bot.store.proposal(pid_of(proposal)).status is Status.PENDING  # type: ignore[union-attr]


def test_a_thread_no_agent_answers_any_more_hears_why_and_nothing_runs(
    slack: SlackStandin, tmp_path: Path
) -> None:
    """A thread whose route has no Agent (its files were removed, say) after its proposals were
    posted: an approval, an edit and a reply there each end with the route's refusal."""
    gone: set[str] = set()

    def override(thread_id: str) -> Route | None:
        if thread_id not in gone:
            return None
        return Route(thread_id, None, refusal="Your files are gone.", files=True)

    with assembled(slack, tmp_path, override=override) as bot:
        approved, edited = bot.ask(), bot.ask()
        approved_card, edited_card = bot.thread(*approved)[0], bot.thread(*edited)[0]
        gone.update(f"{TEAM_ID}:{channel}:{ts}" for channel, ts in (approved, edited))
        bot.click(approved_card, APPROVE_ACTION)
        edit(bot, edited_card, "SELECT 2 AS two")
        bot.event(payloads.message(approved[0], "and by month?", thread_ts=approved[1]))

        assert (bot.agent.decisions, bot.agent.edits, len(bot.agent.asks)) == ([], [], 2)
        assert bot.agent.has_thread_calls == [], "a thread with files is a conversation"
        card, *notes = bot.thread(*approved)
        assert RUN_FAILED in card.all_text() and buttons(card) == {}
        assert len(notes) == 2  # the decision's outcome, then the reply's
        assert all(":warning: Your files are gone." in n.all_text() for n in notes)
        card, note = bot.thread(*edited)
        assert "Replaced" in card.all_text() and buttons(card) == {}
        assert ":warning: Your files are gone." in note.all_text()
        for message in (approved_card, edited_card):
            assert bot.store.proposal(pid_of(message)).status is Status.DONE  # type: ignore[union-attr]


# -- edits -------------------------------------------------------------------------------------


def edit(bot: Bot, proposal: Posted, sql: str, user: str = BOB) -> BoltResponse:
    """Press Edit SQL on `proposal` and submit the modal it opened with `sql`."""
    bot.click(proposal, EDIT_ACTION, user=user)
    view = bot.slack.opened_views[-1]["view"]
    return bot.submit(payloads.view_submission(view, {EDIT_BLOCK: {EDIT_INPUT: sql}}, user=user))


def test_an_edit_comes_back_as_a_new_proposal_recording_its_editor(bot: Bot) -> None:
    channel, ts = bot.ask()
    [old] = bot.thread(channel, ts)
    assert edit(bot, old, "SELECT 2 AS two").status == 200
    thread_id, pid, sql, user = bot.agent.edits[0]
    assert (thread_id, pid, sql, user) == (
        f"{TEAM_ID}:{channel}:{ts}",
        pid_of(old),
        "SELECT 2 AS two",
        BOB,
    )
    redrawn, new = bot.thread(channel, ts)
    assert buttons(redrawn) == {} and "Edited by" in redrawn.all_text()
    record = bot.store.proposal(pid_of(new))
    assert record and (record.requested_by, record.edited_by) == (ALICE, BOB)
    assert bot.store.proposal(pid).status is Status.SUPERSEDED  # type: ignore[union-attr]


def test_a_click_while_an_edit_is_checked_does_nothing(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    assert bot.store.claim_edit(pid_of(proposal), user=BOB, sql_sha256="0" * 64).won
    bot.click(proposal, APPROVE_ACTION, user=ALICE)
    assert bot.agent.decisions == []
    [note] = bot.slack.ephemerals_for(channel, ALICE)
    assert note["text"] == f"<@{BOB}> is editing this proposal; wait for the edited version."


def test_submitting_an_edit_of_a_decided_proposal_shows_an_error_in_the_modal(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, EDIT_ACTION)
    view = bot.slack.opened_views[-1]["view"]
    bot.click(proposal, APPROVE_ACTION)
    values = {EDIT_BLOCK: {EDIT_INPUT: "SELECT 2"}}
    response = bot.submit(payloads.view_submission(view, values))
    assert response.status == 200
    assert '"response_action": "errors"' in response.body and "no longer waiting" in response.body
    assert bot.agent.edits == []


def test_sql_too_long_for_the_modal_gets_a_note_instead(bot: Bot) -> None:
    bot.agent.ask_replies.append(proposal_outcome(sql="SELECT " + "1 + " * 1000 + "1"))
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, EDIT_ACTION)
    assert bot.slack.opened_views == []
    [note] = bot.slack.ephemerals_for(channel, BOB)
    assert "at most 3,000" in note["text"]


def test_an_edit_that_fails_releases_the_proposal(bot: Bot) -> None:
    bot.agent.edit_replies.append(RuntimeError("gate exploded"))
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    edit(bot, proposal, "SELECT 2 AS two")
    assert EDIT_FAILED in bot.thread(channel, ts)[-1].all_text().replace("\n", " ")
    assert bot.store.proposal(pid_of(proposal)).status is Status.PENDING  # type: ignore[union-attr]
    bot.click(proposal, APPROVE_ACTION)
    assert len(bot.agent.decisions) == 1


# -- outcomes and failures ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "shown"),
    [
        (Outcome(kind="clarify", message="Which year <exactly>?"), "Which year &lt;exactly&gt;?"),
        (Outcome(kind="failed", message="Too long & wordy."), "Too long &amp; wordy."),
    ],
)
def test_clarify_and_failed_replace_the_working_message(
    bot: Bot, outcome: Outcome, shown: str
) -> None:
    bot.agent.ask_replies.append(outcome)
    channel, ts = bot.ask()
    [message] = bot.thread(channel, ts)
    assert shown in message.all_text() and buttons(message) == {}


def test_agent_exception_on_ask_posts_a_clear_failure(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.agent.ask_replies.append(RuntimeError("model exploded"))
    with caplog.at_level(logging.ERROR):
        channel, ts = bot.ask()
    [message] = bot.thread(channel, ts)
    assert "Something went wrong" in message.all_text()
    assert "Traceback" in caplog.text and "model exploded" in caplog.text


def test_agent_exception_on_decide_posts_a_failure_and_closes_the_proposal(bot: Bot) -> None:
    bot.agent.decide_replies.append(RuntimeError("warehouse exploded"))
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, APPROVE_ACTION)
    failure = bot.thread(channel, ts)[-1]
    assert "Something went wrong while carrying out this decision" in failure.all_text()
    assert bot.store.proposal(pid_of(proposal)).status is Status.DONE  # type: ignore[union-attr]
    bot.click(proposal, APPROVE_ACTION, user=ALICE)
    assert len(bot.agent.decisions) == 1


def test_decide_returning_a_corrected_proposal_posts_it_for_approval(bot: Bot) -> None:
    bot.agent.decide_replies.append(proposal_outcome(sql="SELECT 2 AS two"))
    channel, ts = bot.ask()
    [first] = bot.thread(channel, ts)
    bot.click(first, APPROVE_ACTION)
    decided, corrected = bot.thread(channel, ts)
    assert buttons(decided) == {}
    assert REPAIRED in corrected.all_text() and "SELECT 2 AS two" in corrected.all_text()
    new_pid = pid_of(corrected)
    record = bot.store.proposal(new_pid)
    assert record and record.status is Status.PENDING and record.message_ts == corrected.ts
    bot.click(corrected, APPROVE_ACTION)
    assert [d[1] for d in bot.agent.decisions][-1] == new_pid


def test_table_refused_by_the_workspace_falls_back_to_text(bot: Bot) -> None:
    bot.slack.refuse_block_type("table")
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, APPROVE_ACTION)
    result = next(m for m in bot.thread(channel, ts) if "Sources:" in m.all_text())
    assert result.table() is None
    assert "1,000.25" in result.all_text() and "Sources:" in result.all_text()


@pytest.mark.slow
def test_rate_limited_post_is_retried(bot: Bot) -> None:
    bot.slack.rate_limit("chat.postMessage", retry_after=0)
    channel, ts = bot.ask()
    [message] = bot.thread(channel, ts)
    assert APPROVE_ACTION in buttons(message)
    assert [c.status for c in bot.slack.calls_to("chat.postMessage")] == [429, 200]


def test_answer_with_many_rows_shows_display_rows(bot: Bot) -> None:
    bot.agent.decide_replies.append(answer_outcome(BOB, rows=200))
    channel, ts = bot.ask()
    bot.click(bot.thread(channel, ts)[0], APPROVE_ACTION)
    result = bot.thread(channel, ts)[-1]
    assert len(result.table() or []) == 21
    assert "*200 rows* (first 20 shown)" in result.all_text()


# -- build_app -----------------------------------------------------------------------------------


def test_build_app_checks_the_token_and_verifies_signatures(
    slack: SlackStandin, tmp_path: Path
) -> None:
    """The app as the bot builds it, over the real agent (a one-table DuckDB file, a scripted
    model with one reply): the forged request reaches nothing, the signed one is proposed."""
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE sales AS SELECT 'North' AS region, 1.5 AS amount")
    model = ScriptedChatModel(replies=[json.dumps(sql_reply("SELECT region FROM sales"))])
    agent = Agent(AgentDeps(connector=DuckDBConnector(path), model=model), InMemorySaver())
    settings = Settings(
        slack_bot_token="xoxb-test", slack_signing_secret=SECRET, slack_api_url=slack.url[:-1]
    )
    app = build_app(settings, routed(agent), SqliteStore(tmp_path / "s.sqlite"))
    try:
        assert [c.method for c in slack.calls] == ["auth.test"]
        assert app.client.base_url == slack.url
        body = payloads.mention(payloads.new_channel(), "which regions?")
        text, content_type = event_request(body)
        forged = {"content-type": content_type, **signed_headers("not-the-secret", text)}
        assert app.dispatch(BoltRequest(body=text, headers=forged)).status == 401
        good = {"content-type": content_type, **signed_headers(SECRET, text)}
        assert app.dispatch(BoltRequest(body=text, headers=good)).status == 200
        [card] = slack.wait_thread(
            body["event"]["channel"],
            body["event"]["ts"],
            lambda ms: [m for m in ms if APPROVE_ACTION in buttons(m)],
            what="the proposal",
        )
        assert "SELECT" in card.all_text() and "region" in card.all_text()
        assert model.calls == 1
    finally:
        app.stop_background()  # the recovery watch holds the agent
        agent.close()

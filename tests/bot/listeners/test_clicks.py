"""Approve, Reject and Cancel clicks: what each runs, once, and what the clicker is told."""

from __future__ import annotations

import threading
from pathlib import Path

from slack_bolt import BoltRequest

from bot.blocks import APPROVE_ACTION, CANCEL_ACTION, REJECT_ACTION
from bot.conversations.cancels import NOT_RUNNING
from bot.conversations.outcomes import RUN_FAILED
from bot.routing import Route
from bot.store.base import Status
from tests.bot.listeners.listener_app import (
    SECRET,
    Bot,
    assembled,
    buttons,
    edit,
    pid_of,
)
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE, BOB, action_request, signed_headers
from tests.support.standin import TEAM_ID, Posted, SlackStandin


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

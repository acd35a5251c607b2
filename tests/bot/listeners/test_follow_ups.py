"""Replies without a mention: a follow-up in a thread the bot knows, and what is not one."""

from __future__ import annotations

from typing import Any

import pytest

from bot.blocks import APPROVE_ACTION
from bot.store.base import Status
from tests.bot.listeners.listener_app import (
    Bot,
    buttons,
    pid_of,
)
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import BOT_USER_ID, TEAM_ID


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

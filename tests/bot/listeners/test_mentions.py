"""Mentions of the bot: each asks the agent once, in its thread, and bots are ignored."""

from __future__ import annotations

import logging

import pytest

from bot.blocks import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION
from bot.blocks.messages import card_of
from bot.store.base import Status
from tests.bot.listeners.listener_app import (
    Bot,
    buttons,
    pid_of,
)
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE
from tests.support.standin import TEAM_ID


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

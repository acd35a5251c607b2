"""A question's thread status ends cleared whatever its outcome: a clarifying question, a
failure, the agent raising; the steps the agent names show in between; QUERYBOT_SLACK_STATUS
off, none is sent."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent.outcome import Outcome
from bot.conversations.status import DRAFTING
from tests.bot.listeners.listener_app import Bot, assembled
from tests.support.standin import SlackStandin


@pytest.mark.parametrize(
    "reply",
    [
        Outcome(kind="clarify", message="Which year?"),
        Outcome(kind="failed", message="Too long."),
        RuntimeError("model exploded"),
    ],
    ids=["clarify", "failed", "raised"],
)
def test_the_status_ends_cleared_whatever_the_outcome(bot: Bot, reply: Outcome | Exception) -> None:
    bot.agent.ask_steps = ["generate"]
    bot.agent.after_steps = lambda: bot.slack.wait_for(lambda: bot.slack.statuses, what="it")
    bot.agent.ask_replies.append(reply)
    channel, ts = bot.ask()
    # the steps' streamed plan aside (tests/bot/listeners/test_stream.py)
    [message] = [m for m in bot.thread(channel, ts) if not bot.slack.is_streamed(m)]
    assert "Working on it" not in message.all_text()
    assert bot.slack.statuses_in(channel, ts) == [DRAFTING[0], ""]


def test_querybot_slack_status_false_sends_none(slack: SlackStandin, tmp_path: Path) -> None:
    with assembled(slack, tmp_path, slack_status=False) as bot:
        bot.agent.ask_steps = ["generate", "validate"]
        # long enough for a status to go out, were one sent (it takes milliseconds)
        bot.agent.after_steps = lambda: threading.Event().wait(0.3)
        channel, ts = bot.ask()
        assert bot.thread(channel, ts), "the question is answered as before"
    assert slack.calls_to("assistant.threads.setStatus") == []

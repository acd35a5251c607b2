"""A question's thread status ends cleared whatever its outcome: a clarifying question, a
failure, the agent raising; the steps the agent names show in between."""

from __future__ import annotations

import pytest

from agent.outcome import Outcome
from bot.conversations.status import DRAFTING
from tests.bot.listeners.listener_app import Bot


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
    [message] = bot.thread(channel, ts)
    assert "Working on it" not in message.all_text()
    assert bot.slack.statuses_in(channel, ts) == [DRAFTING[0], ""]

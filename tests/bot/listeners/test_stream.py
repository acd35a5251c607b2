"""A question's steps stream into its thread as a plan ending with the proposed SQL, while the
"Working on it…" message still becomes the card whose approval names the SQL's hash; with
QUERYBOT_SLACK_STREAM off, or in a workspace without streams, the thread shows the cards only
and nobody sees an error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION
from bot.conversations.stream import PROPOSED
from tests.bot.listeners.listener_app import Bot, assembled, buttons, pid_of
from tests.support.standin import SlackStandin

STEPS = ["start", "match", "generate", "validate"]


def test_the_steps_stream_under_the_card_that_keeps_its_approval(bot: Bot) -> None:
    bot.agent.ask_steps = STEPS
    channel, ts = bot.ask()
    card, streamed = bot.thread(channel, ts)
    assert not bot.slack.is_streamed(card) and bot.slack.is_streamed(streamed)
    assert "Working on it" in card.history[0][0], "the placeholder became the card"
    assert APPROVE_ACTION in buttons(card)
    [stream] = bot.slack.streams_in(channel, ts)
    assert stream.stopped
    assert stream.task_ids() == ["question", "catalog", "draft", "check", PROPOSED[0]]
    assert stream.tasks[PROPOSED[0]]["output"] == "SELECT 1 AS one"
    assert streamed.text == "Counts one."

    bot.click(card, APPROVE_ACTION)
    assert bot.agent.decisions[0][1] == pid_of(card)
    assert bot.agent.hashes == ["0" * 64], "the approval names the hash of the SQL shown"


def test_querybot_slack_stream_false_streams_nothing(slack: SlackStandin, tmp_path: Path) -> None:
    with assembled(slack, tmp_path, slack_stream=False) as bot:
        bot.agent.ask_steps = STEPS
        channel, ts = bot.ask()
        [card] = bot.thread(channel, ts)
        assert APPROVE_ACTION in buttons(card)
    assert [c for c in slack.calls if c.method.endswith("Stream")] == []


def test_a_workspace_without_streams_gets_the_cards_only(
    slack: SlackStandin, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    slack.refuse_streams("unknown_method")
    caplog.set_level(logging.INFO)
    with assembled(slack, tmp_path) as bot:
        bot.agent.ask_steps = STEPS
        # long enough for the refused start to come back before the question ends
        bot.agent.after_steps = lambda: slack.wait_for(
            lambda: slack.calls_to("chat.startStream"), what="the refused start"
        )
        for _ in range(2):
            channel, ts = bot.ask()
            [card] = bot.thread(channel, ts)
            assert APPROVE_ACTION in buttons(card)
            bot.agent.after_steps = None  # the first job's end noted the refusal
    assert len(slack.calls_to("chat.startStream")) == 1, "asked once, then left alone"
    assert [r.levelno for r in caplog.records if "refused streamed plans" in r.getMessage()] == [
        logging.INFO
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

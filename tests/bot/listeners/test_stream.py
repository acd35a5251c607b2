"""A question's steps stream into its thread as a plan ending with the proposed SQL, and the
"Working on it…" message below the plan still becomes the card whose approval names the SQL's
hash (or the clarifying question, or the failure: below the plan too); with
QUERYBOT_SLACK_STREAM off, or in a workspace without streams, the thread shows the cards only
and nobody sees an error."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.outcome import Outcome
from bot.blocks import APPROVE_ACTION
from bot.conversations.stream import PROPOSED
from tests.bot.listeners.listener_app import Bot, assembled, buttons, pid_of
from tests.support.standin import Posted, SlackStandin

STEPS = ["start", "match", "generate", "validate"]


def drawn_after_the_plan_stopped(slack: SlackStandin, message: Posted) -> bool:
    """Whether `message` took its last form (the placeholder's last update) after the last
    `chat.stopStream`: the person saw the plan finish, then what it led to."""
    calls = [(c.method, c.params.get("ts")) for c in slack.calls if c.ok]
    stopped = max(i for i, (method, _) in enumerate(calls) if method == "chat.stopStream")
    drawn = max(i for i, call in enumerate(calls) if call == ("chat.update", message.ts))
    return stopped < drawn


@pytest.fixture
def streaming(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    """The app with streamed plans on (QUERYBOT_SLACK_STREAM, on by default)."""
    with assembled(slack, tmp_path, slack_stream=True) as bot:
        yield bot


def test_the_steps_stream_above_the_card_that_keeps_its_approval(streaming: Bot) -> None:
    bot = streaming
    bot.agent.ask_steps = STEPS
    channel, ts = bot.ask()
    streamed, card = bot.thread(channel, ts)
    assert bot.slack.is_streamed(streamed) and not bot.slack.is_streamed(card)
    assert "Working on it" in card.history[0][0], "the placeholder became the card"
    assert APPROVE_ACTION in buttons(card)
    [stream] = bot.slack.streams_in(channel, ts)
    assert stream.stopped
    assert stream.task_ids() == ["question", "catalog", "draft", "check", PROPOSED[0]]
    assert stream.tasks[PROPOSED[0]]["output"] == "SELECT 1 AS one"
    assert streamed.text == "Counts one."
    assert drawn_after_the_plan_stopped(bot.slack, card), "the plan ended, then came the card"

    bot.click(card, APPROVE_ACTION)
    assert bot.agent.decisions[0][1] == pid_of(card)
    assert bot.agent.hashes == ["0" * 64], "the approval names the hash of the SQL shown"


@pytest.mark.parametrize(
    ("reply", "said", "drafted"),
    [
        (Outcome(kind="clarify", message="Which year?"), "Which year?", "complete"),
        (Outcome(kind="failed", message="No table holds that."), "No table holds that.", "error"),
        (RuntimeError("model exploded"), "Something went wrong", "error"),
    ],
    ids=["clarify", "failed", "raised"],
)
def test_a_reply_or_failure_comes_below_its_finished_plan(
    streaming: Bot, reply: Outcome | Exception, said: str, drafted: str
) -> None:
    bot = streaming
    bot.agent.ask_steps = ["start", "generate"]
    bot.agent.ask_replies.append(reply)
    channel, ts = bot.ask()
    streamed, message = bot.thread(channel, ts)
    assert bot.slack.is_streamed(streamed) and said in message.all_text()
    [stream] = bot.slack.streams_in(channel, ts)
    assert stream.stopped and stream.statuses("draft")[-1] == drafted
    assert drawn_after_the_plan_stopped(bot.slack, message)


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
    with assembled(slack, tmp_path, slack_stream=True) as bot:
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

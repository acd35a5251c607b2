"""The agent's outcomes and failures as the thread shows them, and Slack refusing or limiting."""

from __future__ import annotations

import logging

import pytest

from agent.outcome import Outcome
from bot.blocks import APPROVE_ACTION
from bot.conversations.outcomes import REPAIRED
from bot.store.base import Status
from tests.bot.listeners.listener_app import (
    Bot,
    buttons,
    pid_of,
)
from tests.support.fake_agent import answer_outcome, proposal_outcome
from tests.support.slack_payloads import ALICE, BOB


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

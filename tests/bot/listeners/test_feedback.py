"""Thumbs up and down under an answer, through the listeners, with the fake agent's real
example store and failure memory: up offers the answer as a verified example (saved with who
verified it), down opens a modal whose reason is kept for review and in the thread's failure
memory; private answers carry the buttons too; QUERYBOT_SLACK_FEEDBACK=false sends none."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from slack_sdk import WebClient

from bot.blocks import APPROVE_ACTION, EXPLAIN_ACTION
from bot.blocks.feedback import (
    COUNTED,
    FEEDBACK_ACTION,
    VERIFIED,
    VERIFY_ACTION,
    WRONG_BLOCK,
    WRONG_INPUT,
    WRONG_VIEW,
)
from bot.conversations.answers import Answers
from bot.listeners.views.feedback_submission import EMPTY
from bot.slack_thread import SlackThread
from bot.store.feedback import Rating
from tests.bot.listeners.listener_app import Bot, assembled, pid_of
from tests.support import slack_payloads as payloads
from tests.support.fake_agent import answer_outcome, proposal_outcome
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

CARA = "U0CARA001"


def answered(bot: Bot, *, label: str = "") -> tuple[str, str, Posted]:
    """Ask, approve as BOB, and return the channel, thread and the answer message."""
    asked = proposal_outcome(question="how many orders?")
    assert asked.proposal is not None
    bot.agent.ask_replies.append(replace(asked, proposal=replace(asked.proposal, label=label)))
    channel, ts = bot.ask("how many orders?")
    [card] = bot.thread(channel, ts)
    outcome = answer_outcome(BOB)
    assert outcome.answer is not None
    answer = replace(outcome.answer, proposal_id=pid_of(card), label=label)
    bot.agent.decide_replies.append(replace(outcome, answer=answer))
    bot.click(card, APPROVE_ACTION)
    result = next(m for m in bot.thread(channel, ts) if "Sources:" in m.all_text())
    return channel, ts, result


def rate(bot: Bot, result: Posted, *, positive: bool, user: str = CARA) -> dict:
    payload = payloads.feedback_click(result, positive=positive, user=user)
    bot.submit(payload)
    return payload


def test_every_answer_carries_the_thumbs(bot: Bot) -> None:
    _, _, result = answered(bot)
    pid = result.action_values()[EXPLAIN_ACTION]
    assert pid and result.feedback_values() == {
        "positive_button": f"up:{pid}",
        "negative_button": f"down:{pid}",
    }
    actions = [b for b in result.blocks if b["type"] == "context_actions"]
    assert actions[0]["elements"][0]["action_id"] == FEEDBACK_ACTION


def test_thumbs_up_offers_a_verified_example_saved_with_who_verified(bot: Bot) -> None:
    channel, ts, result = answered(bot)
    rate(bot, result, positive=True)
    [offer] = bot.slack.ephemerals_for(channel, CARA)
    assert offer["thread_ts"] == ts and "verified example" in offer["text"]
    assert bot.agent.deps.examples.verified() == []  # offered, not yet saved
    offered = as_posted(offer)
    bot.click(offered, VERIFY_ACTION, user=CARA)
    [example] = bot.agent.deps.examples.verified()
    assert (example.question, example.sql) == ("how many orders?", "SELECT 1 AS one")
    assert (example.approved_by, example.verified_by) == (BOB, CARA)
    assert bot.slack.ephemerals_for(channel, CARA)[-1]["text"] == VERIFIED
    assert bot.store.feedback.counts() == {"main": (1, 0)}


def test_thumbs_up_on_a_governed_answer_is_counted_and_offers_nothing(bot: Bot) -> None:
    channel, _, result = answered(bot, label="governed: metric revenue")
    rate(bot, result, positive=True)
    assert [e["text"] for e in bot.slack.ephemerals_for(channel, CARA)] == [COUNTED]
    assert bot.store.feedback.counts() == {"main": (1, 0)}


def test_thumbs_down_asks_what_was_wrong_and_keeps_it(bot: Bot) -> None:
    channel, ts, result = answered(bot)
    payload = rate(bot, result, positive=False)
    [opened] = bot.slack.opened_views
    assert opened["trigger_id"] == payload["trigger_id"]
    view = opened["view"]
    assert view["callback_id"] == WRONG_VIEW
    empty = bot.submit(payloads.view_submission(view, {WRONG_BLOCK: {WRONG_INPUT: " "}}, user=CARA))
    assert EMPTY in empty.body
    reason = {WRONG_BLOCK: {WRONG_INPUT: "it counts cancelled orders too"}}
    assert bot.submit(payloads.view_submission(view, reason, user=CARA)).status == 200
    [kept] = bot.store.feedback.to_review()
    assert kept == Rating(
        kept.proposal_id,
        CARA,
        "main",
        "down",
        "it counts cancelled orders too",
        "how many orders?",
        "SELECT 1 AS one",
    )
    assert bot.store.feedback.counts() == {"main": (0, 1)}
    thread_id = f"{payloads.TEAM_ID}:{channel}:{ts}"
    [hint] = bot.agent.deps.failures.hints("duckdb", thread_id)
    assert "it counts cancelled orders too" in hint and "SELECT 1 AS one" in hint
    assert bot.agent.deps.failures.hints("duckdb", "another thread") == []
    assert "noted for review" in bot.slack.ephemerals_for(channel, CARA)[-1]["text"]


def test_a_second_rating_replaces_the_first(bot: Bot) -> None:
    _, _, result = answered(bot)
    rate(bot, result, positive=False, user=ALICE)
    rate(bot, result, positive=True, user=ALICE)
    assert bot.store.feedback.counts() == {"main": (1, 0)}


def test_feedback_on_an_unknown_answer_says_so(bot: Bot) -> None:
    channel, _, result = answered(bot)
    payload = payloads.feedback_click(result, positive=True, user=CARA)
    payload["actions"][0]["value"] = "up:no-such-proposal"
    bot.submit(payload)
    [note] = bot.slack.ephemerals_for(channel, CARA)
    assert "do not know this answer" in note["text"]
    assert bot.store.feedback.counts() == {}


def test_private_answers_carry_the_thumbs(slack: SlackStandin) -> None:
    answers = Answers(WebClient(token="xoxb-standin", base_url=slack.url), display_rows=10)
    thread = SlackThread(payloads.TEAM_ID, "C0PRIV002", "1800000000.000100")
    outcome = answer_outcome(BOB)
    assert outcome.answer is not None
    answer = replace(outcome.answer, proposal_id="p1")
    answers.post_privately(thread, answer, [ALICE, BOB], approved_sql=None)
    sent = [m for m in map(as_posted, slack.ephemerals) if "Sources:" in m.all_text()]
    assert [m.feedback_values()["positive_button"] for m in sent] == ["up:p1", "up:p1"]


def test_feedback_off_sends_no_thumbs(slack: SlackStandin, tmp_path: Path) -> None:
    with assembled(slack, tmp_path, slack_feedback=False) as bot:
        _, _, result = answered(bot)
        assert result.feedback_values() == {}
        assert EXPLAIN_ACTION in result.action_values()


def as_posted(ephemeral: dict[str, Any]) -> Posted:
    """An ephemeral message as the stand-in got it, to click its buttons."""
    raw = ephemeral.get("blocks") or []
    found = json.loads(raw) if isinstance(raw, str) else raw
    ts = ephemeral.get("thread_ts")
    return Posted(ephemeral["channel"], payloads.new_ts(), ts, ephemeral.get("text", ""), found)

"""Clicks on an answer: "How did you get this?" (an ephemeral account of the steps) and the
follow-up buttons (asked in the thread as the person who clicked)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot import blocks
from bot.listeners.actions.clicks import clicked_record, tell
from bot.listeners.querybot import Querybot
from bot.store.base import ProposalRecord

UNKNOWN_ANSWER = "I do not know this answer any more. Ask the question again."


def on_explain(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    record = _answer_record(body, client, querybot, body["actions"][0].get("value", ""))
    if record is not None:
        querybot.conversations.explain(record, user=body["user"]["id"])


def on_follow_up(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    pid, question = blocks.follow_up_of(body["actions"][0].get("value", "")) or ("", "")
    record = _answer_record(body, client, querybot, pid)
    if record is not None:
        querybot.conversations.suggested(record, question, user=body["user"]["id"])


def _answer_record(
    body: dict[str, Any], client: WebClient, querybot: Querybot, pid: str
) -> ProposalRecord | None:
    """The answered proposal a button on an answer names, if the bot may act on it here;
    else tell the person who clicked why not."""
    record = clicked_record(querybot.store, body, pid)
    refusal = UNKNOWN_ANSWER if record is None else querybot.channels.refusal(record.channel)
    if refusal:
        tell(client, body, record, refusal)
        return None
    return record

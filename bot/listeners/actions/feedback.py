"""Slack's thumbs up/down under an answer, and the "Save as verified example" button a thumbs up
offers. Every rating is kept (`bot.conversations.feedback`); up on an approved answer offers, to
the person who clicked only, to keep it as a verified example; down opens a modal asking what was
wrong (its submission: `on_wrong_submitted`)."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from agent.feedback import governed
from bot.blocks.feedback import COUNTED, DOWN, VERIFIED, feedback_of, verify_offer, wrong_modal
from bot.conversations import feedback
from bot.listeners.actions.clicks import clicked_record, tell
from bot.listeners.querybot import Querybot
from bot.slack_thread import SlackThread
from bot.slack_thread import tell as tell_in
from bot.store.base import ProposalRecord

UNKNOWN_ANSWER = "I do not know this answer any more, so your feedback was not kept."


def on_feedback(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    rating, pid = feedback_of(body["actions"][0].get("value", "")) or ("", "")
    record = _rated(body, client, querybot, pid)
    if record is None:
        return
    user = body["user"]["id"]
    router = querybot.conversations.router
    feedback.rate(router, querybot.store, record, user, rating)
    if rating == DOWN:
        modal = wrong_modal(record.proposal_id, record.proposal.question)
        client.views_open(trigger_id=body["trigger_id"], view=modal)
    elif feedback.answered(record) and not governed(record.proposal):
        thread = SlackThread.from_id(record.thread_id)
        tell_in(client, thread, user, verify_offer(record.proposal_id, record.proposal.question))
    else:
        tell(client, body, record, COUNTED)


def on_verify(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    record = _rated(body, client, querybot, body["actions"][0].get("value", ""))
    if record is None:
        return
    user = body["user"]["id"]
    refusal = feedback.verify(querybot.conversations.router, record, user)
    tell(client, body, record, refusal or VERIFIED)


def _rated(
    body: dict[str, Any], client: WebClient, querybot: Querybot, pid: str
) -> ProposalRecord | None:
    """The answered proposal a feedback button names, if the bot may act on it here; else tell
    the person who clicked why not."""
    record = clicked_record(querybot.store, body, pid) if pid else None
    refusal = UNKNOWN_ANSWER if record is None else querybot.channels.refusal(record.channel)
    if refusal:
        tell(client, body, record, refusal)
        return None
    return record

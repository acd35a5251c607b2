"""The "What was wrong?" modal's submission (opened by a thumbs down): the reason is kept with
the person's rating for review, given to the thread's failure memory within its rules, and the
person is thanked in the thread, privately."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks.feedback import DOWN, WRONG_BLOCK, WRONG_INPUT, noted
from bot.conversations import feedback
from bot.listeners.querybot import Querybot
from bot.slack_thread import SlackThread, tell

log = logging.getLogger(__name__)

UNKNOWN = "I do not know this answer any more, so this could not be kept. Close this."
EMPTY = "Say what was wrong, in a few words."


def on_wrong_submitted(
    ack: Ack, body: dict[str, Any], view: dict[str, Any], client: WebClient, querybot: Querybot
) -> None:
    user = body["user"]["id"]
    field = view.get("state", {}).get("values", {}).get(WRONG_BLOCK, {}).get(WRONG_INPUT, {})
    reason = (field.get("value") or "").strip()
    pid = view.get("private_metadata", "")
    record = querybot.store.proposal(pid) if pid else None
    if record is None or querybot.channels.refusal(record.channel):
        ack(response_action="errors", errors={WRONG_BLOCK: UNKNOWN})
        return
    if not reason:
        ack(response_action="errors", errors={WRONG_BLOCK: EMPTY})
        return
    ack()
    router = querybot.conversations.router
    feedback.rate(router, querybot.store, record, user, DOWN, reason)
    remembered = feedback.remember_wrong(router, record, reason)
    try:
        tell(client, SlackThread.from_id(record.thread_id), user, noted(remembered))
    except SlackApiError:  # the thanks is a courtesy: the reason is kept
        log.exception("Could not thank %s for their feedback on %s", user, pid)

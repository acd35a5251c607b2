"""Messages without a mention: a reply in a thread is a follow-up when the thread is a
conversation; in a direct message every message is a question, and one at the DM's top level
opens a conversation in its own thread (as a mention in a channel does), so each question of
the messages tab has its thread, its status and its streamed plan. A file shared in such a
conversation is loaded into its sandbox (`ThreadUploads`), and the message's text asked once
it is."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.files.slack_files import event_files
from bot.listeners.events.questions import (
    first_delivery,
    mentions_user,
    new_question,
    question_text,
    thread_of,
)
from bot.listeners.querybot import Querybot

log = logging.getLogger(__name__)

#: Plain user messages; a reply also sent to the channel is still a reply in the thread; a
#: message sharing files.
_USER_SUBTYPES = {None, "thread_broadcast", "file_share"}


def on_message(
    event: dict[str, Any],
    body: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    querybot: Querybot,
) -> None:
    if event.get("subtype") not in _USER_SUBTYPES or event.get("bot_id"):
        return  # edits, deletions, joins, bots (this one included)
    if event.get("channel_type") == "im":
        thread_ts = event.get("thread_ts") or event["ts"]
        new_question(querybot, event, body, context, client, thread_ts=thread_ts)
    else:
        _reply(event, body, context, querybot)


def _reply(
    event: dict[str, Any], body: dict[str, Any], context: BoltContext, querybot: Querybot
) -> None:
    """A message in a channel: a follow-up when it is a reply in a thread, says something and
    does not mention the bot (a mention is answered as app_mention). Where the bot does not
    answer it says nothing: the reply may not be meant for it."""
    thread_ts = event.get("thread_ts")
    text = event.get("text") or ""
    if not thread_ts or thread_ts == event.get("ts") or mentions_user(text, context.bot_user_id):
        return
    question = question_text(text, context.bot_user_id)
    files = event_files(event) if querybot.uploads is not None else []
    if not (question or files) or not first_delivery(querybot.store, body):
        return
    if querybot.channels.refusal(event["channel"], body.get("is_ext_shared_channel")):
        log.info("Not answering a reply in channel %s", event["channel"])
        return
    thread = thread_of(event, body, context, ts=thread_ts)
    if files and querybot.uploads is not None:
        querybot.uploads.shared(
            thread, files, user=event["user"], question=question, known_only=True
        )
    else:
        querybot.conversations.follow_up(thread, question, user=event["user"])

"""Messages without a mention: a reply in a thread is a follow-up when the thread is a
conversation; in a direct message every message is a question (the DM is one conversation, or
a thread of it when the person replies in one). A file shared in such a conversation is loaded
into its sandbox (bot/uploads.py), and the message's text asked once it is."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App, BoltContext

from bot.channels import ChannelRules
from bot.files import event_files
from bot.listeners.text import mentions_user, question_text
from bot.slack_thread import SlackThread
from bot.store import Store
from bot.threads import Conversations
from bot.uploads import ThreadUploads

log = logging.getLogger(__name__)

#: Plain user messages; a reply also sent to the channel is still a reply in the thread; a
#: message sharing files.
_USER_SUBTYPES = {None, "thread_broadcast", "file_share"}


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    channels: ChannelRules,
    uploads: ThreadUploads | None = None,
) -> None:
    def direct(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
        if not store.first_delivery(body["event_id"]):
            log.info("Ignoring a repeated delivery of event %s", body["event_id"])
            return
        thread = SlackThread(
            team=context.team_id or body.get("team_id", ""),
            channel=event["channel"],
            ts=event.get("thread_ts") or "",
        )
        refusal = channels.refusal(thread.channel, body.get("is_ext_shared_channel"))
        if refusal:
            conversations.refuse(thread, refusal)
            return
        question = question_text(event.get("text") or "", context.bot_user_id)
        files = event_files(event)
        if files and uploads is not None:
            uploads.shared(thread, files, user=event["user"], question=question)
            return
        if not question:
            conversations.help(thread)
            return
        conversations.question(thread, question, user=event["user"])

    @app.event("message")
    def on_message(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
        if event.get("subtype") not in _USER_SUBTYPES or event.get("bot_id"):
            return  # edits, deletions, joins, bots (this one included)
        if event.get("channel_type") == "im":
            direct(event, body, context)
            return
        thread_ts = event.get("thread_ts")
        if not thread_ts or thread_ts == event.get("ts"):
            return  # not a reply in a thread
        text = event.get("text") or ""
        if mentions_user(text, context.bot_user_id):
            return  # also delivered as app_mention, answered there
        question = question_text(text, context.bot_user_id)
        files = event_files(event) if uploads is not None else []
        if not question and not files:
            return
        if not store.first_delivery(body["event_id"]):
            log.info("Ignoring a repeated delivery of event %s", body["event_id"])
            return
        if channels.refusal(event["channel"], body.get("is_ext_shared_channel")):
            log.info("Not answering a reply in channel %s", event["channel"])
            return
        thread = SlackThread(
            team=context.team_id or body.get("team_id", ""),
            channel=event["channel"],
            ts=thread_ts,
        )
        if files and uploads is not None:
            uploads.shared(thread, files, user=event["user"], question=question, known_only=True)
            return
        conversations.follow_up(thread, question, user=event["user"])

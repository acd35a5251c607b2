"""`@querybot question` in a channel or a thread: a new question in that thread. Files shared
with the mention are loaded into the thread's sandbox first (bot/uploads.py)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App, BoltContext

from bot.channels import ChannelRules
from bot.files import event_files
from bot.listeners.text import question_text
from bot.slack_thread import SlackThread
from bot.store import Store
from bot.threads import Conversations
from bot.uploads import ThreadUploads

log = logging.getLogger(__name__)


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    channels: ChannelRules,
    uploads: ThreadUploads | None = None,
) -> None:
    @app.event("app_mention")
    def on_mention(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
        if event.get("bot_id") or event.get("subtype") not in {None, "file_share"}:
            return  # other bots (no loops) and edits
        thread = SlackThread(
            team=context.team_id or body.get("team_id", ""),
            channel=event["channel"],
            ts=event.get("thread_ts") or event["ts"],
        )
        if not store.first_delivery(body["event_id"]):
            log.info("Ignoring a repeated delivery of event %s", body["event_id"])
            return
        refusal = channels.refusal(thread.channel, body.get("is_ext_shared_channel"))
        if refusal:
            log.info("Not answering in channel %s", thread.channel)
            conversations.refuse(thread, refusal)
            return
        text = question_text(event.get("text", ""), context.bot_user_id)
        files = event_files(event)
        if files and uploads is not None:
            uploads.shared(thread, files, user=event["user"], question=text)
            return
        if not text:
            conversations.help(thread)
            return
        conversations.question(thread, text, user=event["user"])

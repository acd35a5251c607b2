"""`@querybot question` in a channel or a thread: a new question in that thread. Files shared
with the mention are loaded into the thread's sandbox first (`ThreadUploads`)."""

from __future__ import annotations

from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.listeners.events.questions import new_question
from bot.listeners.querybot import Querybot

#: A mention a person typed, alone or sharing files; not an edit of one.
_ASKING_SUBTYPES = {None, "file_share"}


def on_mention(
    event: dict[str, Any],
    body: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    querybot: Querybot,
) -> None:
    if event.get("bot_id") or event.get("subtype") not in _ASKING_SUBTYPES:
        return  # other bots (no loops) and edits
    new_question(
        querybot, event, body, context, client, thread_ts=event.get("thread_ts") or event["ts"]
    )

"""A person's message as a question: its text without the bot's mention, its thread, its first
delivery, and the path every new question takes (a mention, or a direct message)."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.files.slack_files import event_files
from bot.listeners.events.schedule_words import in_words
from bot.listeners.querybot import Querybot
from bot.slack_thread import SlackThread
from bot.store.base import Store

log = logging.getLogger(__name__)


def question_text(text: str, bot_user_id: str | None) -> str:
    """`text` without the bot's own mention, with Slack's `&amp;`, `&lt;`, `&gt;` undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return text.strip()


def mentions_user(text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in text


def thread_of(
    event: dict[str, Any], body: dict[str, Any], context: BoltContext, ts: str
) -> SlackThread:
    """The thread `ts` of the event's channel, in the workspace the event came from."""
    return SlackThread(
        team=context.team_id or body.get("team_id", ""), channel=event["channel"], ts=ts
    )


def first_delivery(store: Store, body: dict[str, Any]) -> bool:
    """Whether this event is new: Slack delivers again an event it thinks was not received."""
    if store.first_delivery(body["event_id"]):
        return True
    log.info("Ignoring a repeated delivery of event %s", body["event_id"])
    return False


def new_question(
    querybot: Querybot,
    event: dict[str, Any],
    body: dict[str, Any],
    context: BoltContext,
    client: WebClient,
    *,
    thread_ts: str,
) -> None:
    """A question that opens a conversation in thread `thread_ts` (a mention, a direct message),
    taken once however often Slack delivers it: refused (with a note) where the bot does not
    answer; files shared with it are loaded into the thread's sandbox first (`ThreadUploads`),
    which then asks the question; words about schedules are dealt with first (`in_words`); no
    question at all gets the help."""
    if not first_delivery(querybot.store, body):
        return
    thread = thread_of(event, body, context, ts=thread_ts)
    refusal = querybot.channels.refusal(thread.channel, body.get("is_ext_shared_channel"))
    if refusal:
        log.info("Not answering in channel %s", thread.channel)
        querybot.conversations.refuse(thread, refusal)
        return
    text = question_text(event.get("text") or "", context.bot_user_id)
    files = event_files(event)
    if not files and text and in_words(client, querybot, thread, text, event["user"]):
        return
    if files and querybot.uploads is not None:
        querybot.uploads.shared(thread, files, user=event["user"], question=text)
    elif text:
        querybot.conversations.question(thread, text, user=event["user"])
    else:
        querybot.conversations.help(thread)

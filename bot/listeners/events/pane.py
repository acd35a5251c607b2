"""The conversation pane: a person opens their direct message with the bot, in the messages tab
(the agent view: `app_home_opened` with tab "messages") or as a thread of the older assistant
view (`assistant_thread_started`, through Bolt's `Assistant`), and is offered questions the
warehouse answers. What they then write is a direct message like any other (`on_message`): the
same graph, the same approvals, answered in its own thread of their DM, seen by them alone."""

from __future__ import annotations

from typing import Any

from slack_bolt import Assistant, BoltContext
from slack_sdk import WebClient

from bot.listeners.querybot import Querybot


def is_messages_tab(event: dict[str, Any]) -> bool:
    """Bolt matcher: the App Home opened on its messages tab."""
    return event.get("tab") == "messages"


def on_messages_tab(
    event: dict[str, Any], context: BoltContext, client: WebClient, querybot: Querybot
) -> None:
    """The messages tab opened: its prompts set for the DM (the agent view takes no thread)."""
    channel = event.get("channel")  # the DM's id; Slack always sends it, the checks do not ask
    if querybot.prompts is not None and channel:
        querybot.prompts.send(client, context.team_id or "", channel, event["user"])


def on_thread_started(
    event: dict[str, Any], context: BoltContext, client: WebClient, querybot: Querybot
) -> None:
    """A thread of the assistant view opened: its prompts set for that thread."""
    thread = event["assistant_thread"]
    if querybot.prompts is not None:
        querybot.prompts.send(
            client,
            context.team_id or "",
            thread["channel_id"],
            thread["user_id"],
            thread_ts=thread["thread_ts"],
        )


def on_context_changed() -> None:
    """The person looked at another channel with the assistant view open. Answers come from the
    warehouse, not from the channel in view, so nothing is kept (Bolt's default would write the
    context into the thread's first reply)."""


def assistant() -> Assistant:
    """Bolt's `Assistant` for the older view: only its thread start is the pane's; the people's
    messages in its threads go on to `on_message` as any direct message does."""
    pane = Assistant()
    pane.thread_started(on_thread_started)
    pane.thread_context_changed(on_context_changed)
    return pane

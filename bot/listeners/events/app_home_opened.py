"""The App Home tab: published each time a person opens it (`app_home_opened`, tab `home`)."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.listeners.events.home_tab import publish_home
from bot.listeners.querybot import Querybot


def on_home_opened(event: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    if event.get("tab") == "home":
        publish_home(client, querybot, event["user"])
    # the messages tab is the pane's (pane.on_messages_tab)

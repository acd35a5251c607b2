"""Events Slack sends: a mention, a message without one, the Home or messages tab opened, a
thread of the assistant view started."""

from __future__ import annotations

from slack_bolt import App

from bot.listeners.events.app_home_opened import on_home_opened
from bot.listeners.events.app_mention import on_mention
from bot.listeners.events.message import on_message
from bot.listeners.events.pane import assistant, is_messages_tab, on_messages_tab


def register(app: App) -> None:
    app.assistant(assistant())
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    # the messages tab first: a listener that matches takes the event
    app.event("app_home_opened", matchers=[is_messages_tab])(on_messages_tab)
    app.event("app_home_opened")(on_home_opened)

"""Events Slack sends: a mention, a message without one, the Home tab opened."""

from __future__ import annotations

from slack_bolt import App

from bot.listeners.events.app_home_opened import on_home_opened
from bot.listeners.events.app_mention import on_mention
from bot.listeners.events.message import on_message


def register(app: App) -> None:
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event("app_home_opened")(on_home_opened)

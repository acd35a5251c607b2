"""Bolt listeners, grouped by kind of request as in Slack's Bolt starter template: `events`
(mentions, messages, the Home tab), `actions` (button clicks), `views` (modal submissions).
Each package's `register` wires its module-level callbacks; `register` here wires them all,
with the bot's own objects reaching them through the request context (`Querybot`).
"""

from __future__ import annotations

from slack_bolt import App

from bot.listeners import actions, events, views
from bot.listeners.querybot import Querybot


def register(app: App, querybot: Querybot) -> None:
    """Wire every listener, each acting through `querybot` (built by `wire`)."""
    app.use(querybot.provide)
    events.register(app)
    actions.register(app)
    views.register(app)

"""Bolt listeners, one module per kind of request; `register` wires them all to an app."""

from __future__ import annotations

from slack_bolt import App

from bot.listeners import actions, edits, mentions, messages
from bot.store import Store
from bot.threads import Conversations


def register(app: App, conversations: Conversations, store: Store) -> None:
    mentions.register(app, conversations, store)
    messages.register(app, conversations, store)
    actions.register(app, conversations, store)
    edits.register(app, conversations, store)

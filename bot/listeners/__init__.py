"""Bolt listeners, one module per kind of request; `register` wires them all to an app."""

from __future__ import annotations

from collections.abc import Callable

from slack_bolt import App

from bot.approvals import ApproverRule, Approvers
from bot.channels import ChannelRules
from bot.listeners import actions, edits, home, mentions, messages
from bot.store import Store
from bot.threads import Conversations
from bot.uploads import ThreadUploads


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    approvers: Approvers | None = None,
    channels: ChannelRules | None = None,
    tables: Callable[[], list[tuple[str, str]]] = list,
    uploads: ThreadUploads | None = None,
) -> None:
    """Wire every listener. The defaults are the default settings: anyone may approve, every
    channel that is not shared with another organisation is answered. `tables` lists the
    (name, description) of the tables the agent reads, for the Home tab. `uploads` loads files
    shared in a conversation (None: files are ignored)."""
    approvers = approvers or Approvers(ApproverRule(), app.client)
    channels = channels or ChannelRules(app.client)
    mentions.register(app, conversations, store, channels, uploads)
    messages.register(app, conversations, store, channels, uploads)
    actions.register(app, conversations, store, approvers, channels)
    edits.register(app, conversations, store, approvers, channels)
    home.register(app, store, approvers, tables)

"""Bolt listeners, grouped by kind of request as in Slack's Bolt starter template: `events`
(mentions, messages, the Home tab), `actions` (button clicks), `views` (modal submissions).
Each package's `register` wires its module-level callbacks; `register` here wires them all,
with the bot's own objects reaching them through the request context (`Querybot`).
"""

from __future__ import annotations

from collections.abc import Callable

from slack_bolt import App

from bot.access.approvals import Approvers
from bot.access.approver_rule import ApproverRule
from bot.access.channels import ChannelRules
from bot.conversations.conversations import Conversations
from bot.files.uploads import ThreadUploads
from bot.listeners import actions, events, views
from bot.listeners.querybot import Querybot
from bot.store.base import Store


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    approvers: Approvers | None = None,
    channels: ChannelRules | None = None,
    tables: Callable[[str], list[tuple[str, str]]] = lambda user: [],
    uploads: ThreadUploads | None = None,
) -> None:
    """Wire every listener. The defaults are the default settings: anyone may approve, every
    channel that is not shared with another organisation is answered. `tables` lists the
    (name, description) of the tables a user (by id) may ask about, for the Home tab. `uploads`
    loads files shared in a conversation (None: files are ignored)."""
    querybot = Querybot(
        conversations=conversations,
        store=store,
        approvers=approvers or Approvers(ApproverRule(), app.client),
        channels=channels or ChannelRules(app.client),
        tables=tables,
        uploads=uploads,
    )
    app.use(querybot.provide)
    events.register(app)
    actions.register(app)
    views.register(app)

"""The App Home tab: published each time a person opens it (`app_home_opened`, tab `home`)."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.blocks.views import home
from bot.listeners.querybot import Querybot
from bot.store.base import Status

#: A proposal's status as a person would say it.
_STATUS = {
    Status.PENDING: "waiting for approval",
    Status.RUNNING: "running",
    Status.DONE: "decided",
    Status.SUPERSEDED: "replaced",
}


def on_home_opened(event: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    if event.get("tab") != "home":
        return  # the Messages tab: direct messages are answered as they come
    user = event["user"]
    recent = [
        (r.proposal.question, _STATUS[r.status]) for r in querybot.store.recent_questions(user)
    ]
    rule = querybot.approvers.rule
    who = "Anyone" if rule.anyone else rule.describe(user)
    client.views_publish(
        user_id=user, view=home(querybot.tables(user), recent, approvers=f"Who may approve: {who}.")
    )

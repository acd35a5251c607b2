"""The App Home tab: published each time a person opens it (`app_home_opened`, tab `home`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.approvals import Approvers
from bot.blocks.views import home
from bot.store import Status, Store

#: A proposal's status as a person would say it.
_STATUS = {
    Status.PENDING: "waiting for approval",
    Status.RUNNING: "running",
    Status.DONE: "decided",
    Status.SUPERSEDED: "replaced",
}


def register(
    app: App, store: Store, approvers: Approvers, tables: Callable[[], list[tuple[str, str]]]
) -> None:
    @app.event("app_home_opened")
    def on_home(event: dict[str, Any], client: WebClient) -> None:
        if event.get("tab") != "home":
            return  # the Messages tab: direct messages are answered as they come
        user = event["user"]
        recent = [(r.proposal.question, _STATUS[r.status]) for r in store.recent_questions(user)]
        rule = approvers.rule
        who = "Anyone" if rule.anyone else rule.describe(user)
        who = f"Who may approve: {who}."
        client.views_publish(user_id=user, view=home(tables(), recent, approvers=who))

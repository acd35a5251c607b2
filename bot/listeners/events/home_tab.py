"""The Home tab's content for one person, read from the store, the approval rules and the
warehouses: their recent questions with what each came to, the proposals waiting for their
approval, and the warehouses they may ask.

A proposal waits "for them" when the approval rules let them approve it and they can see its
card: it sits in a channel they are in (`users.conversations`, scopes channels:read and
groups:read) or in their own direct messages with the bot. Each item links to its card in its
thread (`chat.getPermalink`); an item Slack gives no link for is shown without one.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks.home import HOME_ITEMS, Asked, Waiting, home
from bot.listeners.querybot import Querybot
from bot.store.base import ProposalRecord, Status

log = logging.getLogger(__name__)

#: Waiting proposals looked at (the newest), before keeping those the person may approve.
PENDING_LOOKED_AT = 200
#: Pages of `users.conversations` read (999 channels each, the most Slack gives).
CHANNEL_PAGES = 10

#: What a proposal came to, as a person would say it (by its status, then by its outcome).
_STATUS = {
    Status.PENDING: "waiting for approval",
    Status.RUNNING: "running",
    Status.SUPERSEDED: "replaced by an edit",
}
_OUTCOME = {
    "answer": "answered",
    "failed": "failed",
    "cancelled": "cancelled",
    "rejected": "rejected",
    "proposal": "a corrected query waits for approval",
    "clarify": "I asked you something back",
}


def publish_home(client: WebClient, querybot: Querybot, user: str) -> None:
    """Publish `user`'s Home tab."""
    store = querybot.store
    records = store.recent_questions(user, HOME_ITEMS)
    finished = store.asked.outcomes([r.proposal_id for r in records])
    asked = [
        Asked(r.proposal.question, _outcome(r, finished.get(r.proposal_id)), _permalink(client, r))
        for r in records
    ]
    waiting = _waiting(client, querybot, user)
    rule = querybot.approvers.rule
    who = "Anyone" if rule.anyone else rule.describe(user)
    view = home(
        asked=asked,
        asked_total=store.asked.question_count(user),
        waiting=[
            Waiting(r.proposal.question, r.requested_by, _permalink(client, r))
            for r in waiting[:HOME_ITEMS]
        ],
        waiting_total=len(waiting),
        warehouses=querybot.warehouses(user),
        approvers=f"Who may approve: {who}.",
        schedules=None if querybot.schedules is None else querybot.schedules.mine(user),
    )
    client.views_publish(user_id=user, view=view)


def _outcome(record: ProposalRecord, outcome: str | None) -> str:
    if record.status in _STATUS:
        return _STATUS[record.status]
    if record.approved is False:
        return "rejected"
    return _OUTCOME.get(outcome or "", "decided")


def _waiting(client: WebClient, querybot: Querybot, user: str) -> list[ProposalRecord]:
    """The pending proposals `user` may approve and can see, newest first."""
    maybe = [
        r
        for r in querybot.store.pending(PENDING_LOOKED_AT)
        if querybot.approvers.why_not_approve(user, r) is None
    ]
    if not maybe:
        return []
    channels = _channels_of(client, user)
    return [
        r
        for r in maybe
        if r.channel in channels or (r.channel.startswith("D") and r.requested_by == user)
    ]


def _channels_of(client: WebClient, user: str) -> set[str]:
    """The channels `user` is in that the bot can see; none when Slack will not say (so no
    proposal is shown to someone who may not see it)."""
    found: set[str] = set()
    cursor = ""
    try:
        for _ in range(CHANNEL_PAGES):
            page = client.users_conversations(
                user=user,
                types="public_channel,private_channel",
                exclude_archived=True,
                limit=999,
                cursor=cursor or None,
            )
            found |= {c["id"] for c in page.get("channels") or []}
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or ""
            if not cursor:
                break
    except SlackApiError:
        log.exception("Could not read the channels of %s for their Home tab", user)
        return set()
    return found


def _permalink(client: WebClient, record: ProposalRecord) -> str:
    """The link to `record`'s card in its thread ("" when Slack gives none)."""
    try:
        answer = client.chat_getPermalink(channel=record.channel, message_ts=record.message_ts)
    except SlackApiError:
        log.warning("No permalink for proposal %s", record.proposal_id, exc_info=True)
        return ""
    return str(answer.get("permalink") or "")

"""Edit SQL clicks: the button opens a modal with the proposal's SQL (its submission:
`on_edit_submitted`). Who may edit is checked on the click, whatever the proposal's status, and the
modal opens only on the current card of a proposal still waiting. Where questions run as the asker,
it opens only for someone whose own identity could run the query (`Clearance`); anyone else is told
why in an ephemeral note."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot import blocks
from bot.blocks.views import INPUT_TEXT
from bot.listeners.actions.clicks import OUT_OF_DATE, already_decided, clicked_card, tell
from bot.listeners.querybot import Querybot
from bot.store.base import ProposalRecord, Status

TOO_LONG = (
    "This SQL is {size:,} characters long; Slack's edit box takes at most 3,000. Paste your "
    "version in the thread with a mention instead: it is checked the same way."
)


def on_edit(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    record, card_sha = clicked_card(querybot.store, body)
    if record is None:
        tell(client, body, None, already_decided(None))
        return
    refusal = _why_not_edit(body["user"]["id"], record, card_sha, querybot)
    if refusal:
        tell(client, body, record, refusal)
    else:
        client.views_open(trigger_id=body["trigger_id"], view=blocks.edit_modal(record.proposal))


def _why_not_edit(
    user: str, record: ProposalRecord, card_sha: str, querybot: Querybot
) -> str | None:
    """Why `user`'s click may not open the edit box, or None when it may."""
    refusal = querybot.channels.refusal(record.channel)
    refusal = refusal or querybot.approvers.why_not_reject_or_edit(user, record, "edit")
    if refusal:
        return refusal
    if card_sha != record.sql_sha256:
        return OUT_OF_DATE
    if record.status is not Status.PENDING:
        return already_decided(record)
    if len(record.proposal.sql) > INPUT_TEXT:
        return TOO_LONG.format(size=len(record.proposal.sql))
    # last: it asks Slack and the warehouse (where questions run as the asker)
    return querybot.conversations.why_not_edit(record, user)

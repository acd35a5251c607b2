"""What every click listener shares: the proposal a button names, and the ephemeral note that
tells the person who clicked why their click did nothing."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot import blocks
from bot.blocks.messages import card_of
from bot.slack_thread import SlackThread
from bot.store.base import ProposalRecord, Status, Store

#: A click whose card names other SQL than the proposal's (see `card_of`).
OUT_OF_DATE = "This card is out of date: the SQL changed. Nothing was run."


def clicked_record(
    store: Store, body: dict[str, Any], proposal_id: str | None = None
) -> ProposalRecord | None:
    """The proposal a button names (its value, or `proposal_id`), if it is known and was posted
    in the clicked channel."""
    channel = (body.get("channel") or {}).get("id", "")
    record = store.proposal(proposal_id or body["actions"][0].get("value", ""))
    return record if record is not None and record.channel == channel else None


def clicked_card(store: Store, body: dict[str, Any]) -> tuple[ProposalRecord | None, str]:
    """The proposal a decision button names (if known and posted in the clicked channel), and
    the SQL hash its card showed."""
    pid, sha = card_of(body["actions"][0].get("value", ""))
    return (clicked_record(store, body, pid) if pid else None), sha


def already_decided(record: ProposalRecord | None) -> str:
    """Why a click did nothing, for the person who clicked."""
    if record is None:
        return "I do not know this proposal any more. Ask the question again for a fresh one."
    editor = blocks.mention(record.decided_by or "?")
    if record.status is Status.SUPERSEDED and record.decided_by and record.approved is None:
        return f"This proposal was replaced by an edit from {editor}; the edited version is below."
    if record.status is Status.SUPERSEDED:
        return "This proposal was replaced by a newer question in the thread; nothing was run."
    if record.status is Status.RUNNING and record.approved is None:
        return f"{editor} is editing this proposal; wait for the edited version."
    verb = "approved" if record.approved else "rejected"
    return f"This proposal was already {verb} by {editor}."


def tell(client: WebClient, body: dict[str, Any], record: ProposalRecord | None, text: str) -> None:
    """An ephemeral note to the person who clicked, in the proposal's thread when known."""
    client.chat_postEphemeral(
        channel=(body.get("channel") or {}).get("id", ""),
        user=body["user"]["id"],
        thread_ts=(SlackThread.from_id(record.thread_id).ts or None) if record else None,
        text=text,
    )

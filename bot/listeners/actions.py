"""Approve / Reject clicks: ack, claim the proposal atomically, then carry out the decision.

Only the click that moves the proposal out of PENDING does anything; every other click (a double
click, a second person, a click on a superseded proposal) gets an ephemeral note.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot import blocks
from bot.store import ProposalRecord, Status, Store
from bot.threads import Conversations, SlackThread


def already_decided(record: ProposalRecord | None) -> str:
    """Why a click did nothing, for the person who clicked."""
    if record is None:
        return "I do not know this proposal any more. Ask the question again for a fresh one."
    if record.status is Status.SUPERSEDED:
        return "This proposal was replaced by a newer question in the thread; nothing was run."
    verb = "approved" if record.approved else "rejected"
    return f"This proposal was already {verb} by {blocks.mention(record.decided_by or '?')}."


def register(app: App, conversations: Conversations, store: Store) -> None:
    def decide(ack: Ack, body: dict[str, Any], client: WebClient, approved: bool) -> None:
        ack()
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id", "")
        proposal_id = body["actions"][0].get("value", "")
        record = store.proposal(proposal_id)
        if record is not None and record.channel == channel:
            claim = store.claim(proposal_id, approved=approved, user=user)
            if claim.won and claim.record is not None:
                conversations.decision(claim.record, approved=approved, user=user)
                return
            record = claim.record
        else:
            record = None
        client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=SlackThread.from_id(record.thread_id).ts if record else None,
            text=already_decided(record),
        )

    @app.action(blocks.APPROVE_ACTION)
    def on_approve(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        decide(ack, body, client, approved=True)

    @app.action(blocks.REJECT_ACTION)
    def on_reject(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        decide(ack, body, client, approved=False)

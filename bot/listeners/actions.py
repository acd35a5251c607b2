"""Approve / Reject clicks: ack, check who clicked, claim the proposal atomically, then carry out
the decision; Cancel clicks on a running card: ack, check who clicked, then stop the query. On an
answer: "How did you get this?" (an ephemeral account of the steps) and the follow-up buttons
(asked in the thread as the person who clicked).

Who may decide is checked on every click, whatever the proposal's status (a status read before
the claim may be stale: an edit being checked puts the proposal back to PENDING when it is
refused). A click by someone the approval policy does not allow gets an ephemeral note and claims
nothing; the claim itself repeats the part of the policy that could change under it (the SQL hash
the card showed, no-self-approval) in its UPDATE. Only the click that moves the proposal out of
PENDING does anything; every other click (a double click, a second person, a click on a superseded
or edited proposal, or on a card whose SQL is not the proposal's) gets an ephemeral note.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot import blocks
from bot.approvals import Approvers
from bot.blocks.messages import card_of
from bot.channels import ChannelRules
from bot.slack_thread import SlackThread
from bot.store import ProposalRecord, Status, Store
from bot.threads import NOT_RUNNING, Conversations


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


#: A click whose card names other SQL than the proposal's (see `card_of`).
OUT_OF_DATE = "This card is out of date: the SQL changed. Nothing was run."
#: A permitted click that lost its claim to a change it could not see (an edit being checked).
CHANGED = (
    "This proposal changed while you clicked (an edit of it was being checked), so nothing was "
    "run. Look at the card again and click again if you still want to."
)


def clicked_card(store: Store, body: dict[str, Any]) -> tuple[ProposalRecord | None, str]:
    """The proposal a decision button names (if known and posted in the clicked channel), and
    the SQL hash its card showed."""
    pid, sha = card_of(body["actions"][0].get("value", ""))
    return (clicked_record(store, body, pid) if pid else None), sha


def lost(record: ProposalRecord | None, card_sha: str) -> str:
    """Why a permitted click's claim did not win, for the person who clicked."""
    if record is not None and record.sql_sha256 != card_sha:
        return OUT_OF_DATE
    if record is not None and record.status is Status.PENDING:
        return CHANGED
    return already_decided(record)


def clicked_record(
    store: Store, body: dict[str, Any], proposal_id: str | None = None
) -> ProposalRecord | None:
    """The proposal a button names (its value, or `proposal_id`), if it is known and was posted
    in the clicked channel."""
    channel = (body.get("channel") or {}).get("id", "")
    record = store.proposal(proposal_id or body["actions"][0].get("value", ""))
    return record if record is not None and record.channel == channel else None


UNKNOWN_ANSWER = "I do not know this answer any more. Ask the question again."


def tell(client: WebClient, body: dict[str, Any], record: ProposalRecord | None, text: str) -> None:
    """An ephemeral note to the person who clicked, in the proposal's thread when known."""
    client.chat_postEphemeral(
        channel=(body.get("channel") or {}).get("id", ""),
        user=body["user"]["id"],
        thread_ts=(SlackThread.from_id(record.thread_id).ts or None) if record else None,
        text=text,
    )


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    approvers: Approvers,
    channels: ChannelRules,
) -> None:
    def decide(ack: Ack, body: dict[str, Any], client: WebClient, approved: bool) -> None:
        ack()
        user = body["user"]["id"]
        record, card_sha = clicked_card(store, body)
        if record is None:
            tell(client, body, None, already_decided(None))
            return
        refusal = channels.refusal(record.channel) or approvers.why_not_decide(
            user, record, approved=approved
        )
        if refusal:
            tell(client, body, record, refusal)
            return
        claim = store.claim(
            record.proposal_id,
            approved=approved,
            user=user,
            sql_sha256=card_sha,
            no_self_approval=approved and approvers.rule.no_self_approval,
        )
        if claim.won and claim.record is not None:
            conversations.decision(claim.record, approved=approved, user=user)
            return
        tell(client, body, claim.record, lost(claim.record, card_sha))

    @app.action(blocks.APPROVE_ACTION)
    def on_approve(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        decide(ack, body, client, approved=True)

    @app.action(blocks.REJECT_ACTION)
    def on_reject(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        decide(ack, body, client, approved=False)

    @app.action(blocks.CANCEL_ACTION)
    def on_cancel(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        user = body["user"]["id"]
        record = clicked_record(store, body)
        refusal = None
        if record is not None:
            refusal = channels.refusal(record.channel) or approvers.why_not_cancel(user, record)
        if refusal:
            tell(client, body, record, refusal)
            return
        if record is None or record.status is not Status.RUNNING or not record.approved:
            tell(client, body, record, NOT_RUNNING)
            return
        conversations.cancel(record, user=user)

    def answer_record(body: dict[str, Any], client: WebClient, pid: str) -> ProposalRecord | None:
        """The answered proposal a button on an answer names, if the bot may act on it here;
        else tell the person who clicked why not."""
        record = clicked_record(store, body, pid)
        refusal = UNKNOWN_ANSWER if record is None else channels.refusal(record.channel)
        if refusal:
            tell(client, body, record, refusal)
            return None
        return record

    @app.action(blocks.EXPLAIN_ACTION)
    def on_explain(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        record = answer_record(body, client, body["actions"][0].get("value", ""))
        if record is not None:
            conversations.explain(record, user=body["user"]["id"])

    @app.action(re.compile(rf"^{re.escape(blocks.FOLLOW_UP_PREFIX)}\d+$"))
    def on_follow_up(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        pid, question = blocks.follow_up_of(body["actions"][0].get("value", "")) or ("", "")
        record = answer_record(body, client, pid)
        if record is not None:
            conversations.suggested(record, question, user=body["user"]["id"])

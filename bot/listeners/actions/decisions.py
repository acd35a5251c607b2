"""Approve / Reject clicks: ack, check who clicked, claim the proposal atomically, then carry out
the decision; Cancel clicks on a running card: ack, check who clicked, then stop the query.

Who may decide is checked on every click, whatever the proposal's status (a status read before the
claim may be stale: an edit being checked puts the proposal back to PENDING when it is refused). A
click by someone the approval policy does not allow gets an ephemeral note and claims nothing.
Where people run as their own warehouse identity (`run_as`), an Approve click is also
refused unless the clicker's identity may read every table the query reads, as the warehouse says
(`Conversations.why_not_run`). The claim itself repeats the part of the policy that could change
under it (the SQL hash the card showed, no-self-approval) in its UPDATE. Only the click that moves
the proposal out of PENDING does anything; every other click (a double click, a second person, a
click on a superseded or edited proposal, or on a card whose SQL is not the proposal's) gets an
ephemeral note.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot.conversations.cancels import NOT_RUNNING
from bot.listeners.actions.clicks import (
    OUT_OF_DATE,
    already_decided,
    clicked_card,
    clicked_record,
    tell,
)
from bot.listeners.querybot import Querybot
from bot.store.base import ProposalRecord, Status

#: A permitted click that lost its claim to a change it could not see (an edit being checked).
CHANGED = (
    "This proposal changed while you clicked (an edit of it was being checked), so nothing was "
    "run. Look at the card again and click again if you still want to."
)


def on_approve(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    _decide(body, client, querybot, approved=True)


def on_reject(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    _decide(body, client, querybot, approved=False)


def on_cancel(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    ack()
    user = body["user"]["id"]
    record = clicked_record(querybot.store, body)
    if record is None:
        tell(client, body, None, NOT_RUNNING)
        return
    refusal = querybot.channels.refusal(record.channel) or querybot.approvers.why_not_cancel(
        user, record
    )
    if refusal:
        tell(client, body, record, refusal)
    elif record.status is not Status.RUNNING or not record.approved:
        tell(client, body, record, NOT_RUNNING)
    else:
        querybot.conversations.cancel(record, user=user)


def _decide(body: dict[str, Any], client: WebClient, querybot: Querybot, *, approved: bool) -> None:
    """Approve or reject the clicked proposal, if the person may and their click claims it."""
    user = body["user"]["id"]
    record, card_sha = clicked_card(querybot.store, body)
    if record is None:
        tell(client, body, None, already_decided(None))
        return
    refusal = querybot.channels.refusal(record.channel) or querybot.approvers.why_not_decide(
        user, record, approved=approved
    )
    if not refusal and approved and record.status is Status.PENDING:
        refusal = querybot.conversations.why_not_run(record, user)
    if refusal:
        tell(client, body, record, refusal)
        return
    claim = querybot.store.claim(
        record.proposal_id,
        approved=approved,
        user=user,
        sql_sha256=card_sha,
        no_self_approval=approved and querybot.approvers.rule.no_self_approval,
    )
    if claim.won and claim.record is not None:
        querybot.conversations.decision(claim.record, approved=approved, user=user)
    else:
        tell(client, body, claim.record, _lost(claim.record, card_sha))


def _lost(record: ProposalRecord | None, card_sha: str) -> str:
    """Why a permitted click's claim did not win, for the person who clicked."""
    if record is not None and record.sql_sha256 != card_sha:
        return OUT_OF_DATE
    if record is not None and record.status is Status.PENDING:
        return CHANGED
    return already_decided(record)

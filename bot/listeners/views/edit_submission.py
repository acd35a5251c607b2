"""The Edit SQL modal's submission: claims the proposal (as a click would) and the worker pool
checks the edit, which comes back as a new proposal.

The modal carries only the proposal id and the hash of the SQL it shows; the SQL comes from the
bot's store. Who may edit is checked again on the submission, whatever the proposal's status
(and, where questions run as the asker, that the submitter's identity could run the query:
`Clearance`), and the claim holds only while the proposal's SQL is the one the modal
showed. A submission that cannot be taken stays open with the reason under the SQL.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack

from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT, edited_proposal
from bot.listeners.querybot import Querybot
from bot.store.base import ProposalRecord

NOT_WAITING = "This proposal is no longer waiting (it was decided, edited or replaced)."
UNCHANGED = "The SQL is unchanged. Approve the proposal instead, or change something."
EMPTY = "Write the SQL to propose."
NOT_ALLOWED = "You may not edit this query (see the note in the thread)."
STALE = "This SQL is out of date: the proposal changed. Close this and edit the current card."
#: Where questions run as the asker: the submitter's identity could not run the query.
NOT_YOURS = (
    "You may not edit this query: only someone whose own access could run it may, and only "
    "while the access of the person who asked is unchanged. Nothing changed."
)


def on_edit_submitted(
    ack: Ack, body: dict[str, Any], view: dict[str, Any], querybot: Querybot
) -> None:
    user = body["user"]["id"]
    proposal_id, shown_sha = edited_proposal(view.get("private_metadata", ""))
    field = view.get("state", {}).get("values", {}).get(EDIT_BLOCK, {}).get(EDIT_INPUT, {})
    sql = (field.get("value") or "").strip()
    record = querybot.store.proposal(proposal_id) if proposal_id else None
    error = _why_not_taken(user, sql, record, shown_sha, querybot)
    if not error:
        claim = querybot.store.claim_edit(proposal_id, user=user, sql_sha256=shown_sha)
        if claim.won and claim.record is not None:
            ack()
            querybot.conversations.edit(claim.record, sql, user=user)
            return
        error = NOT_WAITING
    ack(response_action="errors", errors={EDIT_BLOCK: error})


def _why_not_taken(
    user: str, sql: str, record: ProposalRecord | None, shown_sha: str, querybot: Querybot
) -> str | None:
    """Why `user`'s edit `sql` of `record` (whose SQL the modal showed as `shown_sha`) cannot
    be claimed, or None when it can."""
    if not sql:
        return EMPTY
    if record is None:
        return NOT_WAITING
    refusal = querybot.channels.refusal(record.channel)
    if refusal or querybot.approvers.why_not_reject_or_edit(user, record, "edit"):
        return NOT_ALLOWED
    if shown_sha != record.sql_sha256:
        return STALE
    if sql == record.proposal.sql.strip():
        return UNCHANGED
    if querybot.conversations.why_not_edit(record, user):
        return NOT_YOURS
    return None

"""Edit SQL: the button opens a modal with the proposal's SQL; the submission claims the proposal
(as a click would) and the worker pool checks the edit, which comes back as a new proposal.

The modal carries only the proposal id and the hash of the SQL it shows; the SQL comes from the
bot's store. Who may edit is checked on the click and again on the submission, whatever the
proposal's status, and the claim holds only while the proposal's SQL is the one the modal showed.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot import blocks
from bot.approvals import Approvers
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT, EDIT_VIEW, INPUT_TEXT, edited_proposal
from bot.channels import ChannelRules
from bot.listeners.actions import OUT_OF_DATE, already_decided, clicked_card, tell
from bot.store import Status, Store
from bot.threads import Conversations

TOO_LONG = (
    "This SQL is {size:,} characters long; Slack's edit box takes at most 3,000. Paste your "
    "version in the thread with a mention instead: it is checked the same way."
)
NOT_WAITING = "This proposal is no longer waiting (it was decided, edited or replaced)."
UNCHANGED = "The SQL is unchanged. Approve the proposal instead, or change something."
EMPTY = "Write the SQL to propose."
NOT_ALLOWED = "You may not edit this query (see the note in the thread)."
STALE = "This SQL is out of date: the proposal changed. Close this and edit the current card."


def register(
    app: App,
    conversations: Conversations,
    store: Store,
    approvers: Approvers,
    channels: ChannelRules,
) -> None:
    @app.action(blocks.EDIT_ACTION)
    def on_edit(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        record, card_sha = clicked_card(store, body)
        if record is None:
            tell(client, body, None, already_decided(None))
            return
        refusal = channels.refusal(record.channel) or approvers.why_not_reject_or_edit(
            body["user"]["id"], record, "edit"
        )
        if refusal:
            tell(client, body, record, refusal)
            return
        if card_sha != record.sql_sha256:
            tell(client, body, record, OUT_OF_DATE)
            return
        if record.status is not Status.PENDING:
            tell(client, body, record, already_decided(record))
            return
        if len(record.proposal.sql) > INPUT_TEXT:
            tell(client, body, record, TOO_LONG.format(size=len(record.proposal.sql)))
            return
        client.views_open(trigger_id=body["trigger_id"], view=blocks.edit_modal(record.proposal))

    @app.view(EDIT_VIEW)
    def on_submit(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = body["user"]["id"]
        proposal_id, shown_sha = edited_proposal(view.get("private_metadata", ""))
        field = view.get("state", {}).get("values", {}).get(EDIT_BLOCK, {}).get(EDIT_INPUT, {})
        sql = (field.get("value") or "").strip()
        record = store.proposal(proposal_id) if proposal_id else None
        error = ""
        if not sql:
            error = EMPTY
        elif record is None:
            error = NOT_WAITING
        elif channels.refusal(record.channel) or approvers.why_not_reject_or_edit(
            user, record, "edit"
        ):
            error = NOT_ALLOWED
        elif shown_sha != record.sql_sha256:
            error = STALE
        elif sql == record.proposal.sql.strip():
            error = UNCHANGED
        else:
            claim = store.claim_edit(proposal_id, user=user, sql_sha256=shown_sha)
            if claim.won and claim.record is not None:
                ack()
                conversations.edit(claim.record, sql, user=user)
                return
            error = NOT_WAITING
        ack(response_action="errors", errors={EDIT_BLOCK: error})

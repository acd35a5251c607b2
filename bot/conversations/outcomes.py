"""Showing in a thread what a question, a decision or an edit came to: the proposal card (its
buttons recorded in the store first), the answer, the clarifying question, or the failure; and
the decided card redrawn with its verdict.

In a channel whose answers are private (`answers = "private"`) the answer goes only to the person
who asked and the person who approved (`Answers.post_privately`), and every card says so; elsewhere
a card that runs as the asker's access says the channel will see the result."""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.outcome import Answer, Outcome
from bot import blocks
from bot.blocks import Message, escape
from bot.conversations.answers import Answers
from bot.slack_thread import SlackThread, post, reply, update
from bot.store.base import ProposalRecord, Store

log = logging.getLogger(__name__)

ASK_FAILED = (
    "Something went wrong while working on this question, so nothing was run. "
    "Ask again in a minute; if it keeps happening, tell whoever runs querybot (the details "
    "are in its log)."
)
DECIDE_FAILED = (
    "Something went wrong while carrying out this decision; the query may not have run. "
    "Ask the question again for a fresh proposal; if it keeps happening, tell whoever runs "
    "querybot (the details are in its log)."
)
REPAIRED = (
    "The approved query failed when it ran, so I corrected it. The new version needs its own "
    "approval."
)
#: Added to a card whose approval did not end in an answer (the thread says why).
RUN_FAILED = ":x: did not complete (see below)"


class Outcomes:
    """Posts outcomes in their threads and redraws decided cards."""

    def __init__(
        self,
        client: WebClient,
        store: Store,
        *,
        display_rows: int,
        private: Callable[[str], bool] = lambda channel: False,
        feedback: bool = True,
        schedule: bool = False,
    ) -> None:
        self.client = client
        self.store = store
        self.answers = Answers(
            client, display_rows=display_rows, feedback=feedback, schedule=schedule
        )
        #: Whether a channel's answers go only to the asker and the approver.
        self.private = private

    def audience(self, channel: str) -> blocks.Audience:
        """Who will see the results of `channel`'s cards."""
        return blocks.Audience(channel, private=self.private(channel))

    def _answer(
        self,
        thread: SlackThread,
        answer: Answer,
        *,
        requested_by: str,
        approved_sql: str | None,
    ) -> None:
        """Post `answer` where its channel's answers go."""
        if self.private(thread.channel):
            to = list(dict.fromkeys([requested_by, answer.approved_by]))
            self.answers.post_privately(thread, answer, to, approved_sql=approved_sql)
        else:
            self.answers.post(thread, answer, approved_sql=approved_sql)

    def show(
        self,
        outcome: Outcome,
        thread: SlackThread,
        placeholder: str | None,
        *,
        requested_by: str,
        note: str = "",
        edited_by: str | None = None,
        approved_sql: str | None = None,
    ) -> None:
        """Post `outcome` in the thread, replacing `placeholder` when there is one;
        `approved_sql`: the SQL of the card whose approval led to it (see `Answers.post`)."""
        if outcome.kind == "proposal" and outcome.proposal:
            assert placeholder is not None
            # Recorded before the buttons exist, so no click can name an unknown proposal.
            self.store.add_proposal(
                outcome.proposal,
                thread_id=thread.id,
                channel=thread.channel,
                message_ts=placeholder,
                requested_by=requested_by,
                edited_by=edited_by,
            )
            message = blocks.proposal(
                outcome.proposal,
                requested_by=requested_by,
                note=note,
                audience=self.audience(thread.channel),
            )
            update(self.client, thread.channel, placeholder, message)
            self.answers.proposed_sql(thread, outcome.proposal)  # when only its start shows
        elif outcome.kind == "answer" and outcome.answer:
            self._answer(
                thread, outcome.answer, requested_by=requested_by, approved_sql=approved_sql
            )
        elif outcome.kind == "rejected":
            return  # the proposal's message already says who rejected it
        elif outcome.kind == "clarify":
            reply(self.client, thread, placeholder, blocks.clarify(outcome.message))
        else:
            reply(self.client, thread, placeholder, blocks.failure(outcome.message or ASK_FAILED))

    def conclude(
        self,
        record: ProposalRecord,
        approved: bool,
        verdict: str,
        outcome: Outcome | None,
        *,
        canceller: str | None,
        running_shown: bool,
    ) -> None:
        """Redraw a decided card and post what its decision led to (None: it broke)."""
        thread = SlackThread.from_id(record.thread_id)
        card_sql = record.proposal.sql if approved else None  # what the approved card shows
        if outcome is not None and outcome.kind == "cancelled":
            self.redraw(record, f"{verdict} · {blocks.cancelled_by(canceller)}")
        elif approved and (outcome is None or outcome.kind == "failed"):
            self.redraw(record, f"{verdict} · {RUN_FAILED}")
        elif running_shown:
            self.redraw(record, verdict)  # the card no longer says "Running…"
        if outcome is None:
            self.fail(thread, None, DECIDE_FAILED)
            return
        try:
            if outcome.kind == "proposal":
                if outcome.answer:  # an empty result, then the loosened query (agent relax)
                    self._answer(
                        thread,
                        outcome.answer,
                        requested_by=record.requested_by,
                        approved_sql=card_sql,
                    )
                placeholder = post(self.client, thread, blocks.working())
                note = escape(outcome.message) if outcome.answer else REPAIRED
                self.show(outcome, thread, placeholder, requested_by=record.requested_by, note=note)
            elif outcome.kind == "cancelled":
                post(self.client, thread, blocks.cancelled(canceller))
            else:
                self.show(
                    outcome, thread, None, requested_by=record.requested_by, approved_sql=card_sql
                )
            log.info("Decision on proposal %s done: %s", record.proposal_id, outcome.kind)
        except Exception:
            log.exception("Posting the outcome of proposal %s failed", record.proposal_id)
            self.fail(thread, None, DECIDE_FAILED)

    def running_card(self, record: ProposalRecord, verdict: str, elapsed_s: int) -> Message:
        """The approved card while its query runs: "Running… N s" and the Cancel button."""
        return blocks.running_card(
            record.proposal,
            requested_by=record.requested_by,
            verdict=blocks.running(verdict, elapsed_s),
            audience=self.audience(record.channel),
        )

    def decided_card(self, record: ProposalRecord, verdict: str) -> Message:
        """The card of `record` without its buttons, saying `verdict`."""
        return blocks.decided(
            record.proposal,
            requested_by=record.requested_by,
            verdict=verdict,
            audience=self.audience(record.channel),
        )

    def redraw(self, record: ProposalRecord, verdict: str) -> None:
        """The card of `record` without its buttons, saying `verdict`."""
        message = self.decided_card(record, verdict)
        try:
            update(self.client, record.channel, record.message_ts, message)
        except SlackApiError:
            log.exception("Could not redraw proposal %s", record.proposal_id)

    def fail(self, thread: SlackThread, placeholder: str | None, text: str) -> None:
        """Say what went wrong (`text`) in the thread, in place of `placeholder` if any."""
        try:
            reply(self.client, thread, placeholder, blocks.failure(text))
        except Exception:
            log.exception("Could not post a failure in %s", thread.id)

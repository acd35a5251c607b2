"""Conversations in Slack threads: what the worker pool does for a question or a decision, and
what it posts back.

Listeners stay quick (parse, de-duplicate, claim) and hand over to `Conversations`, which runs
every agent call in the worker pool, one job at a time per thread, and makes sure each question
ends with something in its thread: a proposal, a clarifying question, an answer or a failure.
A Cancel click is the exception: it runs on its own thread, since the conversation's worker is
busy running the very query it stops.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.explain import Explanation
from agent.outcome import Outcome
from bot import blocks
from bot.answers import Answers
from bot.blocks import Message, escape
from bot.progress import Progress
from bot.slack_thread import SlackThread, post
from bot.store import ProposalRecord, QuestionRecord, Status, Store
from bot.work import Work

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
EDIT_FAILED = (
    "Something went wrong while checking the edited SQL, so nothing changed and nothing was run. "
    "The original proposal still waits; edit again or approve it."
)
NOT_RUNNING = (
    "There is nothing to cancel: this query already finished (or is already being cancelled)."
)
REPAIRED = (
    "The approved query failed when it ran, so I corrected it. The new version needs its own "
    "approval."
)
RESTARTED_ASKING = (
    "querybot restarted while it was working on this question, so there is no answer and "
    "nothing was run. Ask the question again."
)
RESTARTED_RUNNING = (
    "querybot restarted while this query ran; it may not have finished, and no result was "
    "posted. Nothing was re-run. Ask again for a fresh proposal."
)
RESTARTED_BEFORE_RUN = (
    "querybot restarted before this approval took effect, so nothing was run. Ask again for a "
    "fresh proposal."
)
#: Above an outcome that a restart kept from being posted (found in the thread's checkpoint).
RESTARTED_POSTING = "querybot restarted before posting what this approval led to; here it is."
RESTARTED_EDITING = (
    "querybot restarted while it checked an edit of this proposal; nothing was run. Ask again "
    "for a fresh proposal."
)
#: Added to a card whose decision a restart interrupted.
INTERRUPTED = ":warning: interrupted by a restart"
#: Added to a card whose approval did not end in an answer (the thread says why).
RUN_FAILED = ":x: did not complete (see below)"


class ThreadAgent(Protocol):
    """The part of `agent.conversation.Agent` the bot drives."""

    def ask(self, thread_id: str, question: str, *, user: str) -> Outcome: ...

    def decide(
        self,
        thread_id: str,
        proposal_id: str,
        *,
        approved: bool,
        user: str,
        labels: Mapping[str, str] | None = None,
        sql_sha256: str | None = None,
    ) -> Outcome: ...

    def edit(self, thread_id: str, proposal_id: str, sql: str, *, user: str) -> Outcome: ...

    def cancel(self, thread_id: str, proposal_id: str, *, user: str) -> bool: ...

    def has_thread(self, thread_id: str) -> bool: ...

    def explain(self, thread_id: str, proposal_id: str | None = None) -> Explanation | None: ...

    def interrupted_decision(self, thread_id: str, proposal_id: str) -> Outcome | None: ...


class Conversations:
    """Runs questions and decisions for Slack threads and posts their outcomes."""

    def __init__(
        self,
        client: WebClient,
        agent: ThreadAgent,
        store: Store,
        work: Work,
        *,
        display_rows: int,
        progress_s: float = 3.0,
    ) -> None:
        self.client = client
        self.agent = agent
        self.store = store
        self.work = work
        #: Seconds before a long step first shows its progress (see bot/progress.py).
        self.progress_s = progress_s
        #: Who asked to cancel each running query (proposal id -> user), for its card.
        self._cancelled_by: dict[str, str] = {}
        #: Proposals whose approved query this process is running (`Agent.decide` under way):
        #: the only ones a Cancel click may stop. Its outcome may still be being posted after.
        self._deciding: set[str] = set()
        self._cancel_lock = threading.Lock()
        self.answers = Answers(client, display_rows=display_rows)

    # -- called by listeners (Bolt's threads): quick Slack calls only --------------------------

    def help(self, thread: SlackThread) -> None:
        self._post(thread, blocks.help_message())

    def refuse(self, thread: SlackThread, mrkdwn: str) -> None:
        """Say politely that the bot does not answer here (see bot/channels.py)."""
        self._post(thread, blocks.refused(mrkdwn))

    def question(self, thread: SlackThread, text: str, *, user: str) -> None:
        """A mention: show "Working on it…" at once, then answer in the worker pool."""
        placeholder = self._post(thread, blocks.working())
        self.store.start_question(thread.id, thread.channel, placeholder, user)
        self.work.submit(thread.id, lambda: self._ask(thread, text, user, placeholder))

    def follow_up(self, thread: SlackThread, text: str, *, user: str) -> None:
        """A reply without a mention: answered only in threads the agent already knows."""
        self.work.submit(thread.id, lambda: self._follow_up(thread, text, user))

    def decision(self, record: ProposalRecord, *, approved: bool, user: str) -> None:
        """A click that won the claim: swap the buttons for the verdict, then carry it out."""
        assert record.status is Status.RUNNING
        verdict = blocks.approved_by(user) if approved else blocks.rejected_by(user)
        message = blocks.decided(record.proposal, requested_by=record.requested_by, verdict=verdict)
        try:
            self._update(record.channel, record.message_ts, message)
        except SlackApiError:
            log.exception("Could not mark proposal %s as decided", record.proposal_id)
        self.work.submit(record.thread_id, lambda: self._decide(record, approved, user))

    def suggested(self, record: ProposalRecord, text: str, *, user: str) -> None:
        """A follow-up button under an answer: say in the thread who asked what, then ask it
        there as that person, like any question."""
        thread = SlackThread.from_id(record.thread_id)
        try:
            self._post(thread, blocks.asked(user, text))
        except SlackApiError:  # the note is a courtesy; the question still gets its answer
            log.exception("Could not note the follow-up in %s", thread.id)
        self.question(thread, text, user=user)

    def explain(self, record: ProposalRecord, *, user: str) -> None:
        """A "How did you get this?" click: the answer's steps, to the person who clicked only
        (others may click too; the thread stays a record of questions and answers). A state
        read, so it runs beside the thread's queue rather than behind a long query."""
        self.work.submit(f"{record.thread_id}:explain", lambda: self._explain(record, user))

    def retire_pending(self, thread_id: str, verdict: str) -> None:
        """Mark the thread's waiting proposals as replaced with `verdict` (nothing runs): what
        the thread is answered from changed (a file was loaded into it)."""
        for old in self.store.supersede_pending(thread_id):
            self._redraw(old, verdict)

    def cancel(self, record: ProposalRecord, *, user: str) -> None:
        """A Cancel click on a running card: stop the query from a thread of its own (the
        thread's worker is busy running it). The decision's job then shows the cancellation."""
        threading.Thread(
            target=self._cancel, args=(record, user), name="querybot-cancel", daemon=True
        ).start()

    def edit(self, record: ProposalRecord, sql: str, *, user: str) -> None:
        """An Edit SQL submission that won the claim: check the edit in the worker pool."""
        assert record.status is Status.RUNNING
        self.work.submit(record.thread_id, lambda: self._edit(record, sql, user))

    # -- jobs (worker pool) ---------------------------------------------------------------------

    def _follow_up(self, thread: SlackThread, text: str, user: str) -> None:
        if not self.agent.has_thread(thread.id):
            return
        placeholder = self._post(thread, blocks.working())
        self.store.start_question(thread.id, thread.channel, placeholder, user)
        self._ask(thread, text, user, placeholder)

    def watch(self, every_s: float) -> threading.Event:
        """`recover()` now and then every `every_s` seconds, so the work of a replica that died
        is reported by the others without waiting for a restart; in between, keep this
        process's liveness lock (bot/store.py). Set the event to stop."""
        stop = threading.Event()

        def loop() -> None:
            for tick in itertools.count():
                try:
                    self.store.keep_alive()
                    if tick % 4 == 0:
                        self.recover()
                except Exception:  # the store unreachable for a moment: try again later
                    log.exception("Looking for interrupted work failed")
                if stop.wait(every_s / 4):
                    return

        threading.Thread(target=loop, name="querybot-recover", daemon=True).start()
        return stop

    def recover(self) -> None:
        """Tell each thread that a process which is gone (`kill -9`, a crash) left mid-way what
        happened. Nothing is run again: a question shows its proposal if it got that far, else
        says to ask again; a query that was running says it may not have finished. Runs in the
        worker pool, in order with each thread's later work."""
        questions, proposals = self.store.abandoned()
        for question in questions:
            log.warning("Question in %s was interrupted by a restart", question.thread_id)
            self.work.submit(question.thread_id, lambda q=question: self._recover_question(q))
        for record in proposals:
            log.warning("Proposal %s was interrupted by a restart", record.proposal_id)
            self.work.submit(record.thread_id, lambda r=record: self._recover_proposal(r))

    def _ask(self, thread: SlackThread, text: str, user: str, placeholder: str) -> None:
        log.info("Question in %s from %s (%d characters)", thread.id, user, len(text))
        try:
            for old in self.store.supersede_pending(thread.id):
                self._redraw(old, blocks.SUPERSEDED)
            with Progress(
                lambda s: self._update(thread.channel, placeholder, blocks.writing(s)),
                first_s=self.progress_s,
            ):
                outcome = self.agent.ask(thread.id, text, user=user)
            self._show(outcome, thread, placeholder, requested_by=user)
            log.info("Question in %s answered: %s", thread.id, outcome.kind)
        except Exception:
            log.exception("Answering a question in %s failed", thread.id)
            self._fail(thread, placeholder, ASK_FAILED)
        finally:
            self.store.end_question(thread.channel, placeholder)

    def _recover_question(self, question: QuestionRecord) -> None:
        thread = SlackThread.from_id(question.thread_id)
        record = self.store.proposal_at(question.channel, question.message_ts)
        try:
            if record is None:
                self._update(
                    question.channel, question.message_ts, blocks.failure(RESTARTED_ASKING)
                )
            elif record.status is Status.PENDING:
                # recorded before the restart, maybe never drawn: show it, its buttons work
                message = blocks.proposal(record.proposal, requested_by=record.requested_by)
                self._update(question.channel, question.message_ts, message)
        except SlackApiError:
            log.exception("Could not tell %s about the restart", thread.id)

    def _recover_proposal(self, record: ProposalRecord) -> None:
        thread = SlackThread.from_id(record.thread_id)
        if record.approved is False:
            return  # a rejection runs nothing; its card already says who rejected it
        if record.approved:
            verdict = blocks.approved_by(record.decided_by or "")
            outcome = self.agent.interrupted_decision(record.thread_id, record.proposal_id)
            if outcome is None:  # stopped part-way: the query may have run
                self._redraw(record, f"{verdict} · {INTERRUPTED}")
                self._fail(thread, None, RESTARTED_RUNNING)
            elif outcome.proposal and outcome.proposal.proposal_id == record.proposal_id:
                self._redraw(record, f"{verdict} · {INTERRUPTED}")
                self._fail(thread, None, RESTARTED_BEFORE_RUN)
            else:  # it finished; only its post was lost
                self._post(thread, blocks.notice(RESTARTED_POSTING))
                self._conclude(record, True, verdict, outcome, canceller=None, running_shown=True)
        else:
            self._redraw(record, INTERRUPTED)
            self._fail(thread, None, RESTARTED_EDITING)

    def _decide(self, record: ProposalRecord, approved: bool, user: str) -> None:
        thread = SlackThread.from_id(record.thread_id)
        log.info(
            "%s %s proposal %s",
            user,
            "approved" if approved else "rejected",
            record.proposal_id,
        )
        verdict = blocks.approved_by(user) if approved else blocks.rejected_by(user)
        running = Progress(
            lambda s: self._update(
                record.channel, record.message_ts, self._running_card(record, verdict, s)
            ),
            first_s=self.progress_s,
        )
        outcome: Outcome | None = None
        with self._cancel_lock:
            self._deciding.add(record.proposal_id)
        try:
            with running if approved else nullcontext():
                outcome = self.agent.decide(
                    record.thread_id,
                    record.proposal_id,
                    approved=approved,
                    user=user,
                    # the warehouse's job record names where the question came from (BigQuery)
                    labels={"slack_team": thread.team, "slack_channel": thread.channel},
                    # the SQL the clicked card showed (the claim held only for it)
                    sql_sha256=record.sql_sha256,
                )
        except Exception:
            log.exception("Deciding proposal %s failed", record.proposal_id)
        with self._cancel_lock:
            self._deciding.discard(record.proposal_id)
            canceller = self._cancelled_by.pop(record.proposal_id, None)
        self._conclude(
            record, approved, verdict, outcome, canceller=canceller, running_shown=running.shown
        )
        # Finished only once the outcome is in the thread: a process killed before (the result's
        # post held up by Slack) leaves its claim to `recover()`, which tells the thread.
        self.store.finish(record.proposal_id)

    def _conclude(
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
            self._redraw(record, f"{verdict} · {blocks.cancelled_by(canceller)}")
        elif approved and (outcome is None or outcome.kind == "failed"):
            self._redraw(record, f"{verdict} · {RUN_FAILED}")
        elif running_shown:
            self._redraw(record, verdict)  # the card no longer says "Running…"
        if outcome is None:
            self._fail(thread, None, DECIDE_FAILED)
            return
        try:
            if outcome.kind == "proposal":
                if outcome.answer:  # an empty result, then the loosened query (agent relax)
                    self.answers.post(thread, outcome.answer, approved_sql=card_sql)
                placeholder = self._post(thread, blocks.working())
                note = escape(outcome.message) if outcome.answer else REPAIRED
                self._show(
                    outcome, thread, placeholder, requested_by=record.requested_by, note=note
                )
            elif outcome.kind == "cancelled":
                self._post(thread, blocks.cancelled(canceller))
            else:
                self._show(
                    outcome, thread, None, requested_by=record.requested_by, approved_sql=card_sql
                )
            log.info("Decision on proposal %s done: %s", record.proposal_id, outcome.kind)
        except Exception:
            log.exception("Posting the outcome of proposal %s failed", record.proposal_id)
            self._fail(thread, None, DECIDE_FAILED)

    def _cancel(self, record: ProposalRecord, user: str) -> None:
        pid = record.proposal_id
        log.info("%s cancels proposal %s", user, pid)
        with self._cancel_lock:
            deciding = pid in self._deciding
            # Noted before the cancel: the decision's job may end the moment the query stops.
            first = deciding and pid not in self._cancelled_by
            if first:
                self._cancelled_by[pid] = user
        stopped = False
        if deciding:  # else its query has ended (or runs in another replica): nothing to record
            try:
                stopped = self.agent.cancel(record.thread_id, pid, user=user)
            except Exception:
                log.exception("Cancelling proposal %s failed", pid)
        if stopped:
            return
        if first:
            with self._cancel_lock:
                self._cancelled_by.pop(pid, None)
        try:
            thread = SlackThread.from_id(record.thread_id)
            self.client.chat_postEphemeral(
                channel=record.channel, user=user, thread_ts=thread.ts or None, text=NOT_RUNNING
            )
        except SlackApiError:
            log.exception("Could not tell %s that proposal %s was not running", user, pid)

    def _explain(self, record: ProposalRecord, user: str) -> None:
        account = self.agent.explain(record.thread_id, record.proposal_id)
        message = blocks.explanation(account) if account else blocks.unknown_explanation()
        thread = SlackThread.from_id(record.thread_id)
        self.client.chat_postEphemeral(
            channel=record.channel,
            user=user,
            thread_ts=thread.ts or None,
            text=message.text,
            blocks=message.blocks,
        )

    def _edit(self, record: ProposalRecord, sql: str, user: str) -> None:
        thread = SlackThread.from_id(record.thread_id)
        pid = record.proposal_id
        log.info("%s edited proposal %s (%d characters)", user, pid, len(sql))
        try:
            outcome = self.agent.edit(record.thread_id, pid, sql, user=user)
        except Exception:
            log.exception("Editing proposal %s failed", pid)
            self.store.release(pid, editor=user)
            self._fail(thread, None, EDIT_FAILED)
            return
        if outcome.kind == "proposal" and outcome.proposal:
            self.store.supersede(pid)
            self._redraw(record, blocks.edited_by(user))
            placeholder = self._post(thread, blocks.working())
            note = (
                f"Edited by {blocks.mention(user)}: the edit passed the checks and needs approval."
            )
            self._show(
                outcome,
                thread,
                placeholder,
                requested_by=record.requested_by,
                note=note,
                edited_by=user,
            )
        elif outcome.proposal is not None:
            # Refused by the gate: the original proposal waits, its buttons still work.
            self.store.release(pid, editor=user)
            self._fail(thread, None, outcome.message)
        else:
            # The agent no longer waits on this proposal: nothing to approve any more.
            self.store.finish(pid)
            self._redraw(record, blocks.SUPERSEDED)
            self._fail(thread, None, outcome.message or EDIT_FAILED)
        log.info("Edit of proposal %s done: %s", pid, outcome.kind)

    # -- rendering ------------------------------------------------------------------------------

    def _show(
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
            message = blocks.proposal(outcome.proposal, requested_by=requested_by, note=note)
            self._update(thread.channel, placeholder, message)
            self.answers.proposed_sql(thread, outcome.proposal)  # when only its start shows
        elif outcome.kind == "answer" and outcome.answer:
            self.answers.post(thread, outcome.answer, approved_sql=approved_sql)
        elif outcome.kind == "rejected":
            return  # the proposal's message already says who rejected it
        elif outcome.kind == "clarify":
            self._reply(thread, placeholder, blocks.clarify(outcome.message))
        else:
            self._reply(thread, placeholder, blocks.failure(outcome.message or ASK_FAILED))

    @staticmethod
    def _running_card(record: ProposalRecord, verdict: str, elapsed_s: int) -> Message:
        """The approved card while its query runs: "Running… N s" and the Cancel button."""
        return blocks.running_card(
            record.proposal,
            requested_by=record.requested_by,
            verdict=blocks.running(verdict, elapsed_s),
        )

    def _redraw(self, record: ProposalRecord, verdict: str) -> None:
        message = blocks.decided(record.proposal, requested_by=record.requested_by, verdict=verdict)
        try:
            self._update(record.channel, record.message_ts, message)
        except SlackApiError:
            log.exception("Could not redraw proposal %s", record.proposal_id)

    def _fail(self, thread: SlackThread, placeholder: str | None, text: str) -> None:
        try:
            self._reply(thread, placeholder, blocks.failure(text))
        except Exception:
            log.exception("Could not post a failure in %s", thread.id)

    # -- Slack calls ----------------------------------------------------------------------------

    def _reply(self, thread: SlackThread, placeholder: str | None, message: Message) -> None:
        if placeholder:
            self._update(thread.channel, placeholder, message)
        else:
            self._post(thread, message)

    def _post(self, thread: SlackThread, message: Message) -> str:
        return post(self.client, thread, message)

    def _update(self, channel: str, ts: str, message: Message) -> None:
        self.client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)

"""Conversations in Slack threads: where the work for a question or a decision runs, and
what it does there.

Listeners stay quick (parse, de-duplicate, claim) and hand over to `Conversations`, which runs
every agent call in the worker pool, one job at a time per thread, and makes sure each question
ends with something in its thread: a proposal, a clarifying question, an answer or a failure
(`Outcomes` shows it); while a question or an approved query is worked on, Slack's status
under the thread names the graph's step (`Statuses`), and a plan streamed into the thread shows
its steps as they happen (`Streams`), above what they led to: a question's plan starts before
its "Working on it…" message, and every plan stops before the job posts its outcome. A Cancel
click is the exception: it runs on its own thread, since the conversation's worker is busy
running the very query it stops (`Cancels`). Work that a process which is gone left mid-way
is reported by `Recovery`. The wiring (`wire`) builds those collaborators and hands them to
`Conversations` (`Collaborators`), which builds nothing itself.

Each job resolves its thread to the Agent that answers it once (`Router`); in a thread no Agent
answers, a question or decision comes to the route's refusal. Where the route's warehouse has
run_as rules, the asker's warehouse identity is resolved before the model is asked: an unmapped
person is refused there, and the question otherwise runs as them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.outcome import Outcome
from bot import blocks
from bot.access.clearance import APPROVE, EDIT, EXPLAIN, Clearance
from bot.access.identity import Directory
from bot.blocks import Message
from bot.conversations.cancels import Cancels
from bot.conversations.outcomes import ASK_FAILED, Outcomes
from bot.conversations.progress import Progress
from bot.conversations.recovery import Recovery
from bot.conversations.status import Statuses
from bot.conversations.stream import RUNNING, StepStream, Streams
from bot.conversations.work import Work
from bot.routing import Router
from bot.slack_thread import SlackThread, post, tell, update
from bot.store.base import ProposalRecord, Status, Store

log = logging.getLogger(__name__)

EDIT_FAILED = (
    "Something went wrong while checking the edited SQL, so nothing changed and nothing was run. "
    "The original proposal still waits; edit again or approve it."
)


@dataclass(frozen=True)
class Collaborators:
    """What `Conversations` hands parts of its work to, built together by `wire`."""

    #: Shows each outcome in its thread.
    outcomes: Outcomes
    #: Stops a running query on a Cancel click.
    cancels: Cancels
    #: Who each person is in each warehouse, from Slack's directory.
    identities: Directory
    #: Who may approve, edit or read the account of a proposal run as the asker.
    clearance: Clearance
    #: Tells threads what became of work a process that is gone left mid-way.
    recovery: Recovery
    #: Slack's status under a thread while its question or approved query is worked on.
    statuses: Statuses
    #: The graph's steps streamed into the thread as a plan, where the workspace takes it.
    streams: Streams


class Conversations:
    """Runs questions and decisions for Slack threads and posts their outcomes."""

    def __init__(
        self,
        client: WebClient,
        router: Router,
        store: Store,
        work: Work,
        parts: Collaborators,
        *,
        progress_s: float = 3.0,
    ) -> None:
        self.client = client
        self.router = router
        self.store = store
        self.work = work
        #: Seconds before a long step first shows its progress (see `Progress`).
        self.progress_s = progress_s
        self.outcomes = parts.outcomes
        self.cancels = parts.cancels
        self.identities = parts.identities
        self.clearance = parts.clearance
        self.recovery = parts.recovery
        self.statuses = parts.statuses
        self.streams = parts.streams

    # -- called by listeners (Bolt's threads): quick Slack calls only --------------------------

    def help(self, thread: SlackThread) -> None:
        self._post(thread, blocks.help_message())

    def refuse(self, thread: SlackThread, mrkdwn: str) -> None:
        """Say politely that the bot does not answer here (see `ChannelRules`)."""
        self._post(thread, blocks.refused(mrkdwn))

    def question(self, thread: SlackThread, text: str, *, user: str) -> None:
        """A mention: show "Working on it…" at once, then answer in the worker pool."""
        placeholder, stream = self._begin(thread, user)
        self.work.submit(thread.id, lambda: self._ask(thread, text, user, placeholder, stream))

    def follow_up(self, thread: SlackThread, text: str, *, user: str) -> None:
        """A reply without a mention: answered only in threads the agent already knows."""
        self.work.submit(thread.id, lambda: self._follow_up(thread, text, user))

    def decision(self, record: ProposalRecord, *, approved: bool, user: str) -> None:
        """A click that won the claim: swap the buttons for the verdict, then carry it out."""
        assert record.status is Status.RUNNING
        verdict = blocks.approved_by(user) if approved else blocks.rejected_by(user)
        message = self.outcomes.decided_card(record, verdict)
        try:
            update(self.client, record.channel, record.message_ts, message)
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
        (others may click too; the thread stays a record of questions and answers), where
        questions run as the asker only if the clicker's identity could run its query
        (`Clearance`; else an ephemeral says why). A state read, so it runs beside the
        thread's queue rather than behind a long query."""
        self.work.submit(f"{record.thread_id}:explain", lambda: self._explain(record, user))

    def why_not_run(self, record: ProposalRecord, user: str) -> str | None:
        """None when `user` could run `record`'s query themselves (`Clearance`: where
        people run as their own warehouse identity, theirs must read every table it reads, and
        the asker's identity must still be the one the proposal runs as). Else why not (mrkdwn,
        for an ephemeral). Asks Slack and the warehouse: a listener's thread may call it, once
        per Approve click."""
        return self.clearance.why_not(APPROVE, record, user)

    def why_not_edit(self, record: ProposalRecord, user: str) -> str | None:
        """As `why_not_run`, for opening (or submitting) the Edit SQL box."""
        return self.clearance.why_not(EDIT, record, user)

    def retire_pending(self, thread_id: str, verdict: str) -> None:
        """Mark the thread's waiting proposals as replaced with `verdict` (nothing runs): what
        the thread is answered from changed (a file was loaded into it)."""
        for old in self.store.supersede_pending(thread_id):
            self.outcomes.redraw(old, verdict)

    def cancel(self, record: ProposalRecord, *, user: str) -> None:
        """A Cancel click on a running card: stop the query from a thread of its own (the
        thread's worker is busy running it). The decision's job then shows the cancellation."""
        threading.Thread(
            target=self.cancels.stop, args=(record, user), name="querybot-cancel", daemon=True
        ).start()

    def edit(self, record: ProposalRecord, sql: str, *, user: str) -> None:
        """An Edit SQL submission that won the claim: check the edit in the worker pool."""
        assert record.status is Status.RUNNING
        self.work.submit(record.thread_id, lambda: self._edit(record, sql, user))

    # -- jobs (worker pool) ---------------------------------------------------------------------

    def _follow_up(self, thread: SlackThread, text: str, user: str) -> None:
        if not self.router.route(thread.id).is_conversation():
            return
        placeholder, stream = self._begin(thread, user)
        self._ask(thread, text, user, placeholder, stream)

    def _begin(self, thread: SlackThread, user: str) -> tuple[str, StepStream]:
        """A question's plan started, then its "Working on it…" message posted (below the plan,
        which leads up to what that message becomes) and recorded as a question in the works."""
        stream = self.streams.thread(thread.team, thread.channel, thread.ts, user)
        stream.open()
        try:
            placeholder = self._post(thread, blocks.working())
            self.store.start_question(thread.id, thread.channel, placeholder, user)
        except BaseException:
            stream.close()  # leave no plan spinning over a question that never started
            raise
        return placeholder, stream

    def _ask(
        self,
        thread: SlackThread,
        text: str,
        user: str,
        placeholder: str,
        stream: StepStream,
    ) -> None:
        log.info("Question in %s from %s (%d characters)", thread.id, user, len(text))
        status = self.statuses.thread(thread.team, thread.channel, thread.ts)

        def on_step(name: str) -> None:
            status.step(name)
            stream.step(name)

        def on_end(outcome: Outcome) -> None:
            stream.end(outcome)
            stream.close()  # the plan finished above the outcome posted next

        # the status ends once the outcome is in the thread, whatever it is
        with status, stream:
            self._answer(thread, text, user, placeholder, on_step, on_end)

    def _answer(
        self,
        thread: SlackThread,
        text: str,
        user: str,
        placeholder: str,
        on_step: Callable[[str], None],
        on_end: Callable[[Outcome], None],
    ) -> None:
        try:
            for old in self.store.supersede_pending(thread.id):
                self.outcomes.redraw(old, blocks.SUPERSEDED)
            with Progress(
                lambda s: update(self.client, thread.channel, placeholder, blocks.writing(s)),
                first_s=self.progress_s,
            ):
                route = self.router.route(thread.id)
                agent = route.agent
                run_as = self.identities.run_as(route.run_as, user)
                if agent is None:
                    outcome = route.refused()
                elif run_as.refusal:
                    log.info("Refused a question in %s: %s is not mapped", thread.id, user)
                    outcome = Outcome(kind="failed", message=run_as.refusal)
                else:
                    outcome = agent.ask(
                        thread.id, text, user=user, identity=run_as.role, on_step=on_step
                    )
            on_end(outcome)
            self.outcomes.show(outcome, thread, placeholder, requested_by=user)
            log.info("Question in %s answered: %s", thread.id, outcome.kind)
        except Exception:
            log.exception("Answering a question in %s failed", thread.id)
            on_end(Outcome(kind="failed", message=ASK_FAILED))
            self.outcomes.fail(thread, placeholder, ASK_FAILED)
        finally:
            self.store.end_question(thread.channel, placeholder)

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
            lambda s: update(
                self.client,
                record.channel,
                record.message_ts,
                self.outcomes.running_card(record, verdict, s),
            ),
            first_s=self.progress_s,
        )
        self.cancels.begin(record.proposal_id)
        # a direct message outside a thread: the status goes under the card
        status = self.statuses.thread(thread.team, thread.channel, thread.ts or record.message_ts)
        stream = self.streams.thread(thread.team, thread.channel, thread.ts, user, title=RUNNING)

        def on_step(name: str) -> None:
            status.step(name)
            stream.step(name)

        with status if approved else nullcontext(), stream if approved else nullcontext():
            outcome = self._carry_out(record, thread, approved, user, running, on_step)
            if approved:  # the plan of the run finished above what it led to
                if outcome is not None:
                    stream.end(outcome)
                stream.close()
            canceller = self.cancels.end(record.proposal_id)
            self.outcomes.conclude(
                record, approved, verdict, outcome, canceller=canceller, running_shown=running.shown
            )
        # Finished only once the outcome is in the thread: a process killed before (the result's
        # post held up by Slack) leaves its claim to `recover()`, which tells the thread.
        self.store.finish(record.proposal_id, outcome.kind if outcome is not None else "failed")

    def _carry_out(
        self,
        record: ProposalRecord,
        thread: SlackThread,
        approved: bool,
        user: str,
        running: Progress,
        on_step: Callable[[str], None],
    ) -> Outcome | None:
        """The agent's decision on `record`; None when it failed (logged)."""
        try:
            with running if approved else nullcontext():
                route = self.router.route(record.thread_id)
                if route.agent is None:
                    outcome = route.refused()
                else:
                    outcome = route.agent.decide(
                        record.thread_id,
                        record.proposal_id,
                        approved=approved,
                        user=user,
                        # the warehouse's job record names where the question came from (BigQuery)
                        labels={"slack_team": thread.team, "slack_channel": thread.channel},
                        # the SQL the clicked card showed (the claim held only for it)
                        sql_sha256=record.sql_sha256,
                        on_step=on_step,
                    )
        except Exception:
            log.exception("Deciding proposal %s failed", record.proposal_id)
            return None
        return outcome

    def _explain(self, record: ProposalRecord, user: str) -> None:
        thread = SlackThread.from_id(record.thread_id)
        refusal = self.clearance.why_not(EXPLAIN, record, user)
        if refusal:
            tell(self.client, thread, user, refusal)
            return
        agent = self.router.route(record.thread_id).agent
        account = agent.explain(record.thread_id, record.proposal_id) if agent else None
        message = blocks.explanation(account) if account else blocks.unknown_explanation()
        tell(self.client, thread, user, message)

    def _edit(self, record: ProposalRecord, sql: str, user: str) -> None:
        thread = SlackThread.from_id(record.thread_id)
        pid = record.proposal_id
        log.info("%s edited proposal %s (%d characters)", user, pid, len(sql))
        try:
            route = self.router.route(record.thread_id)
            agent = route.agent
            outcome = agent.edit(thread.id, pid, sql, user=user) if agent else route.refused()
        except Exception:
            log.exception("Editing proposal %s failed", pid)
            self.store.release(pid, editor=user)
            self.outcomes.fail(thread, None, EDIT_FAILED)
            return
        if outcome.kind == "proposal" and outcome.proposal:
            self.store.supersede(pid)
            self.outcomes.redraw(record, blocks.edited_by(user))
            placeholder = self._post(thread, blocks.working())
            note = (
                f"Edited by {blocks.mention(user)}: the edit passed the checks and needs approval."
            )
            self.outcomes.show(
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
            self.outcomes.fail(thread, None, outcome.message)
        else:
            # The agent no longer waits on this proposal: nothing to approve any more.
            self.store.finish(pid)
            self.outcomes.redraw(record, blocks.SUPERSEDED)
            self.outcomes.fail(thread, None, outcome.message or EDIT_FAILED)
        log.info("Edit of proposal %s done: %s", pid, outcome.kind)

    def _post(self, thread: SlackThread, message: Message) -> str:
        return post(self.client, thread, message)

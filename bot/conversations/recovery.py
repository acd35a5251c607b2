"""After a restart: each thread that a process which is gone (`kill -9`, a crash, another replica
that died) left mid-way is told what happened. Nothing is run again: a question shows its
proposal if it got that far, else says to ask again; a query that was running says it may not
have finished; an outcome the restart kept from being posted is posted.
"""

from __future__ import annotations

import itertools
import logging
import threading
from functools import partial

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.conversations.outcomes import Outcomes
from bot.conversations.work import Work
from bot.routing import Router
from bot.slack_thread import SlackThread, post, update
from bot.store.base import ProposalRecord, QuestionRecord, Status, Store

log = logging.getLogger(__name__)

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


class Recovery:
    """Finds the work of processes that are gone and tells its threads (module docstring)."""

    def __init__(
        self, client: WebClient, router: Router, store: Store, work: Work, outcomes: Outcomes
    ) -> None:
        self.client = client
        self.router = router
        self.store = store
        self.work = work
        self.outcomes = outcomes

    def watch(self, every_s: float) -> threading.Event:
        """`recover()` now and then every `every_s` seconds, so the work of a replica that died
        is reported by the others without waiting for a restart; in between, keep this
        process's liveness lock (the store's). Set the event to stop."""
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
        """Queue a report for each question and decision that a process which is gone left
        mid-way. Each runs in the worker pool, in order with its thread's later work."""
        questions, proposals = self.store.abandoned()
        for question in questions:
            log.warning("Question in %s was interrupted by a restart", question.thread_id)
            self.work.submit(question.thread_id, partial(self._question, question))
        for record in proposals:
            log.warning("Proposal %s was interrupted by a restart", record.proposal_id)
            self.work.submit(record.thread_id, partial(self._proposal, record))

    def _question(self, question: QuestionRecord) -> None:
        record = self.store.proposal_at(question.channel, question.message_ts)
        try:
            if record is None:
                message = blocks.failure(RESTARTED_ASKING)
                update(self.client, question.channel, question.message_ts, message)
            elif record.status is Status.PENDING:
                # recorded before the restart, maybe never drawn: show it, its buttons work
                message = blocks.proposal(
                    record.proposal,
                    requested_by=record.requested_by,
                    audience=self.outcomes.audience(record.channel),
                )
                update(self.client, question.channel, question.message_ts, message)
        except SlackApiError:
            log.exception("Could not tell %s about the restart", question.thread_id)

    def _proposal(self, record: ProposalRecord) -> None:
        thread = SlackThread.from_id(record.thread_id)
        if record.approved is False:
            return  # a rejection runs nothing; its card already says who rejected it
        if record.approved is None:  # an edit was being checked
            self.outcomes.redraw(record, INTERRUPTED)
            self.outcomes.fail(thread, None, RESTARTED_EDITING)
            return
        verdict = blocks.approved_by(record.decided_by or "")
        thread_id, pid = record.thread_id, record.proposal_id
        agent = self.router.route(thread_id).agent
        outcome = agent.interrupted_decision(thread_id, pid) if agent else None
        if outcome is None:  # stopped part-way: the query may have run
            self.outcomes.redraw(record, f"{verdict} · {INTERRUPTED}")
            self.outcomes.fail(thread, None, RESTARTED_RUNNING)
        elif outcome.proposal and outcome.proposal.proposal_id == pid:
            self.outcomes.redraw(record, f"{verdict} · {INTERRUPTED}")
            self.outcomes.fail(thread, None, RESTARTED_BEFORE_RUN)
        else:  # it finished; only its post was lost
            post(self.client, thread, blocks.notice(RESTARTED_POSTING))
            self.outcomes.conclude(
                record, True, verdict, outcome, canceller=None, running_shown=True
            )

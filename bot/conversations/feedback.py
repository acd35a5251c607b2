"""Acting on a person's thumbs up or down on an answer: every rating is kept for review (the bot
store's feedback log, per warehouse); a liked approved answer becomes a verified example of its
thread's agent, and what a person says was wrong goes to that agent's failure memory
(`agent.feedback`). Quick database writes: a listener's thread runs them."""

from __future__ import annotations

import logging
import sqlite3

import psycopg

from agent import feedback as teach
from bot.routing import Router
from bot.slack_thread import SlackThread
from bot.store.base import ProposalRecord, Status, Store
from bot.store.feedback import Rating

log = logging.getLogger(__name__)

#: Why a liked answer cannot become a verified example.
NOT_ANSWERED = "This answer is not one the bot ran after an approval, so it cannot be verified."
GOVERNED = (
    "This answer comes from a governed metric, which is answered from its definition each time: "
    "it needs no verified example. Your thumbs up is counted."
)
NO_AGENT = "This conversation is no longer connected to a warehouse, so nothing was saved."
NOT_SAVED = "The example could not be saved (the bot's database failed). Try again in a minute."


def warehouse_of(router: Router, record: ProposalRecord) -> str:
    """The name of the warehouse whose answer `record` is ("" when none answers there now)."""
    return router.config.warehouse_for(SlackThread.from_id(record.thread_id).channel) or ""


def rate(
    router: Router, store: Store, record: ProposalRecord, user: str, rating: str, reason: str = ""
) -> None:
    """Keep `user`'s `rating` of `record`'s answer (replacing theirs of it)."""
    proposal = record.proposal
    store.feedback.rate(
        Rating(
            proposal.proposal_id,
            user,
            warehouse_of(router, record),
            rating,
            reason,
            proposal.question,
            proposal.sql,
        )
    )


def answered(record: ProposalRecord) -> bool:
    """Whether `record`'s query ran after an approval (so its answer may be verified)."""
    return record.status is Status.DONE and record.approved is True


def verify(router: Router, record: ProposalRecord, user: str) -> str | None:
    """Make `record`'s approved run an example verified by `user`; None when it was saved,
    else why not (for an ephemeral note)."""
    if not answered(record):
        return NOT_ANSWERED
    agent = router.route(record.thread_id).agent
    if agent is None:
        return NO_AGENT
    try:
        kept = teach.verify(
            agent.deps, record.proposal, approved_by=record.decided_by or "", by=user
        )
    except (sqlite3.Error, psycopg.Error):
        log.exception("Could not save the verified example of %s", record.proposal_id)
        return NOT_SAVED
    return None if kept else GOVERNED


def remember_wrong(router: Router, record: ProposalRecord, reason: str) -> bool:
    """Tell the thread's agent what was wrong with `record`'s answer; whether its failure
    memory kept it (it never costs the person their note: a failure is logged)."""
    agent = router.route(record.thread_id).agent
    if agent is None:
        return False
    try:
        return teach.remember_wrong(agent.deps, record.thread_id, record.proposal, reason)
    except (sqlite3.Error, psycopg.Error):
        log.exception("Could not remember what was wrong with %s", record.proposal_id)
        return False

"""Cancel clicks on a running card: which approved queries this process is running, and who
asked to stop each, so that the decision's job, when its query ends, can say on the card who
cancelled it.

Only a query whose decision runs here (`Agent.decide` under way) can be stopped from here; a
click on any other card is told there is nothing to cancel.
"""

from __future__ import annotations

import logging
import threading

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.routing import Router
from bot.slack_thread import SlackThread, tell
from bot.store.base import ProposalRecord

log = logging.getLogger(__name__)

NOT_RUNNING = (
    "There is nothing to cancel: this query already finished (or is already being cancelled)."
)


class Cancels:
    """The queries this process runs, by proposal id, and who asked to cancel each."""

    def __init__(self, client: WebClient, router: Router) -> None:
        self.client = client
        self.router = router
        self._lock = threading.Lock()
        #: Proposals whose approved query this process is running: the only ones a Cancel
        #: click may stop. Its outcome may still be being posted after.
        self._deciding: set[str] = set()
        #: Who asked to cancel each running query (proposal id -> user), for its card.
        self._cancelled_by: dict[str, str] = {}

    def begin(self, proposal_id: str) -> None:
        """The decision on `proposal_id` starts: a Cancel click may stop its query from now."""
        with self._lock:
            self._deciding.add(proposal_id)

    def end(self, proposal_id: str) -> str | None:
        """The decision on `proposal_id` ended; returns who asked to cancel it, if anyone."""
        with self._lock:
            self._deciding.discard(proposal_id)
            return self._cancelled_by.pop(proposal_id, None)

    def stop(self, record: ProposalRecord, user: str) -> None:
        """Stop the query of `record` for `user` (blocks: run it off the listener), or tell
        `user` there is nothing to cancel."""
        pid = record.proposal_id
        log.info("%s cancels proposal %s", user, pid)
        with self._lock:
            deciding = pid in self._deciding
            # Noted before the cancel: the decision's job may end the moment the query stops.
            first = deciding and pid not in self._cancelled_by
            if first:
                self._cancelled_by[pid] = user
        stopped = False
        if deciding:  # else its query has ended (or runs in another replica): nothing to record
            try:
                agent = self.router.route(record.thread_id).agent
                stopped = agent.cancel(record.thread_id, pid, user=user) if agent else False
            except Exception:
                log.exception("Cancelling proposal %s failed", pid)
        if stopped:
            return
        if first:
            with self._lock:
                self._cancelled_by.pop(pid, None)
        try:
            tell(self.client, SlackThread.from_id(record.thread_id), user, NOT_RUNNING)
        except SlackApiError:
            log.exception("Could not tell %s that proposal %s was not running", user, pid)

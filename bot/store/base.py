"""The bot's own state: which Slack deliveries were handled, and which proposal sits in which
message with what decision.

The agent keeps the conversation (LangGraph checkpoints); this store keeps what only the Slack side
knows, so a click still works after a restart. Two rules hold it together:

- `first_delivery(event_id)` is true once per event id: Slack's retries are dropped.
- `claim()` moves a proposal PENDING -> RUNNING in one conditional UPDATE, so of two clicks (two
  threads, two processes) exactly one wins and runs anything. An edit claims the same way
  (`claim_edit`), so an approval and an edit of one proposal never both go ahead. The same
  UPDATE holds what the click was allowed on: the SQL hash its card showed, and, under
  no-self-approval, that the clicker is neither the asker nor the editor. So no edit, `release()`
  or other replica between the permission check and the claim can make a refused click win.
- Work in progress names the process doing it (`instance_id`; each process holds a lock on its
  id while it lives: `flock` on a file for SQLite, an advisory lock for PostgreSQL). After a
  crash (`kill -9`, a lost machine), `abandoned()` hands the questions and claimed proposals of
  processes that are gone to whoever asks first, once, so each thread can be told what happened.

The SQL is plain (ON CONFLICT, RETURNING, `?` placeholders), so both back ends share it (each
runs it through its `Storage`): `SqliteStore` (one process, or replicas sharing a disk) and
`PostgresStore` (replicas on several machines).
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent.memory.storage import Storage
from agent.outcome import Proposal
from bot.schedules.records import ScheduleLog
from bot.store.answered import AnsweredLog
from bot.store.asked import AskedLog
from bot.store.feedback import FeedbackLog
from bot.store.liveness import Liveness
from bot.store.tables import TABLES

#: How long an event id is remembered; Slack retries within minutes.
EVENT_TTL_S = 24 * 3600

_COLUMNS = (
    "proposal_id, thread_id, channel, message_ts, sql_sha256, requested_by, status, approved,"
    " decided_by, edited_by, proposal"
)
#: What every claim requires (parameters: proposal id, PENDING, the clicked card's SQL hash).
_CLAIMABLE = "proposal_id = ? AND status = ? AND sql_sha256 = ?"


class Status(StrEnum):
    """Where a proposal is. Only PENDING can be claimed."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    DONE = "DONE"
    SUPERSEDED = "SUPERSEDED"


@dataclass(frozen=True)
class ProposalRecord:
    """A proposal as the bot posted it: where its message is and who decided what. The proposal
    is the agent's (`proposal`); its id and SQL hash are also columns of the row, for the
    statements that find and claim it."""

    thread_id: str
    channel: str
    message_ts: str
    requested_by: str
    status: Status
    #: None until claimed; then whether the click was Approve (None again for an edit's claim).
    approved: bool | None
    #: Who approved or rejected it, or who edited it (RUNNING or SUPERSEDED with approved None).
    decided_by: str | None
    #: Who wrote this proposal's SQL when it came from an edit (they may not approve it).
    edited_by: str | None
    #: The proposal itself, to redraw its message when it is decided or superseded.
    proposal: Proposal

    @property
    def proposal_id(self) -> str:
        return self.proposal.proposal_id

    @property
    def sql_sha256(self) -> str:
        """The hash of the proposal's SQL: a click must name it to claim the proposal."""
        return self.proposal.sql_sha256


@dataclass(frozen=True)
class QuestionRecord:
    """A question being worked on: its "Working on it…" message, who asked, which process."""

    thread_id: str
    channel: str
    message_ts: str
    user: str


@dataclass(frozen=True)
class Claim:
    """The result of a click: `won` when this click moved the proposal out of PENDING."""

    won: bool
    #: The record after the attempt (None when the proposal id is unknown).
    record: ProposalRecord | None


class Store(Liveness):
    """The bot's state behind one interface; subclasses say how a statement runs and how a
    process proves it is alive (`Liveness`)."""

    @abstractmethod
    def close(self) -> None: ...

    #: The database (set by subclasses): a SQLite file or PostgreSQL.
    _db: Storage

    def _open(self, db: Storage) -> None:
        """Use `db`, creating the tables (or the columns they gained since) where missing."""
        self._db = db
        db.create(TABLES)
        #: What people said of answers.
        self.feedback = FeedbackLog(db)
        #: What became of each person's questions (their Home tab).
        self.asked = AskedLog(db)
        #: Each thread's latest answered proposal (what a schedule in words schedules).
        self.answered = AnsweredLog(db)
        #: Scheduled questions and their runs.
        self.schedules = ScheduleLog(db)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (in its own transaction) and return every row it produced."""
        return self._db.rows(sql, params)

    def first_delivery(self, event_id: str) -> bool:
        """True the first time `event_id` is seen, False for every later delivery."""
        now = time.time()
        self._rows("DELETE FROM bot_events WHERE seen_at < ?", (now - EVENT_TTL_S,))
        inserted = self._rows(
            "INSERT INTO bot_events (event_id, seen_at) VALUES (?, ?)"
            " ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
            (event_id, now),
        )
        return len(inserted) == 1

    def add_proposal(
        self,
        proposal: Proposal,
        *,
        thread_id: str,
        channel: str,
        message_ts: str,
        requested_by: str,
        edited_by: str | None = None,
    ) -> ProposalRecord:
        """Record a proposal shown in `channel` at `message_ts`, waiting for a click."""
        now = time.time()
        self._rows(
            f"INSERT INTO bot_proposals ({_COLUMNS}, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)",
            (
                proposal.proposal_id,
                thread_id,
                channel,
                message_ts,
                proposal.sql_sha256,
                requested_by,
                Status.PENDING,
                edited_by,
                json.dumps(proposal.to_dict()),
                now,
                now,
            ),
        )
        record = self.proposal(proposal.proposal_id)
        assert record is not None
        return record

    def proposal(self, proposal_id: str) -> ProposalRecord | None:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM bot_proposals WHERE proposal_id = ?", (proposal_id,)
        )
        return _record(rows[0]) if rows else None

    def claim(
        self,
        proposal_id: str,
        *,
        approved: bool,
        user: str,
        sql_sha256: str,
        no_self_approval: bool = False,
    ) -> Claim:
        """Move a PENDING proposal to RUNNING for `user`'s decision; at most one caller wins.

        It wins only while the proposal's SQL hash is `sql_sha256` (the one on the clicked card)
        and, with `no_self_approval`, while `user` is neither its asker nor its editor: checked
        in the UPDATE itself, not before it."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, approved = ?, decided_by = ?, claimed_by = ?,"
            f" updated_at = ? WHERE {_CLAIMABLE}"
            " AND (? = 0 OR (requested_by <> ? AND COALESCE(edited_by, '') <> ?))"
            f" RETURNING {_COLUMNS}",
            (
                Status.RUNNING,
                int(approved),
                user,
                self.instance_id,
                time.time(),
                proposal_id,
                Status.PENDING,
                sql_sha256,
                int(no_self_approval),
                user,
                user,
            ),
        )
        if rows:
            return Claim(won=True, record=_record(rows[0]))
        return Claim(won=False, record=self.proposal(proposal_id))

    def claim_edit(self, proposal_id: str, *, user: str, sql_sha256: str) -> Claim:
        """Move a PENDING proposal to RUNNING for `user`'s edit of the SQL whose hash is
        `sql_sha256` (the one the modal showed); at most one caller wins."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, approved = NULL, decided_by = ?, claimed_by = ?,"
            f" updated_at = ? WHERE {_CLAIMABLE}"
            f" RETURNING {_COLUMNS}",
            (
                Status.RUNNING,
                user,
                self.instance_id,
                time.time(),
                proposal_id,
                Status.PENDING,
                sql_sha256,
            ),
        )
        if rows:
            return Claim(won=True, record=_record(rows[0]))
        return Claim(won=False, record=self.proposal(proposal_id))

    def release(self, proposal_id: str, *, editor: str) -> bool:
        """A refused edit: the proposal waits for a click again. Only `editor`'s edit claim made
        by this process is released (never an approval's claim); True when it was."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, decided_by = NULL, claimed_by = NULL,"
            " updated_at = ? WHERE proposal_id = ? AND status = ? AND approved IS NULL"
            " AND decided_by = ? AND claimed_by = ? RETURNING proposal_id",
            (Status.PENDING, time.time(), proposal_id, Status.RUNNING, editor, self.instance_id),
        )
        return bool(rows)

    def supersede(self, proposal_id: str) -> None:
        """A proposal claimed for an edit was replaced by its edited version."""
        self._rows(
            "UPDATE bot_proposals SET status = ?, updated_at = ?"
            " WHERE proposal_id = ? AND status = ? AND approved IS NULL",
            (Status.SUPERSEDED, time.time(), proposal_id, Status.RUNNING),
        )

    def recent_questions(self, user: str, limit: int = 5) -> list[ProposalRecord]:
        """`user`'s latest proposals, newest first (one per question: edits are left out)."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM bot_proposals WHERE requested_by = ? AND edited_by IS NULL"
            " ORDER BY created_at DESC LIMIT ?",
            (user, limit),
        )
        return [_record(row) for row in rows]

    def finish(self, proposal_id: str, outcome: str = "") -> None:
        """The decision on a claimed proposal has been carried out (or failed for good);
        `outcome` is what it came to (an `Outcome.kind`, "" when nothing came of it), kept for
        the asker's Home tab."""
        self._rows(
            "UPDATE bot_proposals SET status = ?, outcome = ?, updated_at = ?"
            " WHERE proposal_id = ?",
            (Status.DONE, outcome or None, time.time(), proposal_id),
        )

    def pending(self, limit: int = 50) -> list[ProposalRecord]:
        """The latest proposals still waiting for a click, newest first (for the Home tab,
        which keeps those a person may approve)."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM bot_proposals WHERE status = ?"
            " ORDER BY created_at DESC LIMIT ?",
            (Status.PENDING, limit),
        )
        return [_record(row) for row in rows]

    def proposal_at(self, channel: str, message_ts: str) -> ProposalRecord | None:
        """The proposal shown in the message `message_ts` of `channel`, if one was recorded."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM bot_proposals WHERE channel = ? AND message_ts = ?"
            " ORDER BY created_at DESC LIMIT 1",
            (channel, message_ts),
        )
        return _record(rows[0]) if rows else None

    def start_question(self, thread_id: str, channel: str, message_ts: str, user: str) -> None:
        """A question is being worked on in the message `message_ts` ("Working on it…")."""
        self._rows(
            "INSERT INTO bot_questions (channel, message_ts, thread_id, user_id, owner, started_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (channel, message_ts) DO NOTHING",
            (channel, message_ts, thread_id, user, self.instance_id, time.time()),
        )

    def end_question(self, channel: str, message_ts: str) -> None:
        """The question in `message_ts` got its answer, proposal or failure."""
        self._rows(
            "DELETE FROM bot_questions WHERE channel = ? AND message_ts = ? AND owner = ?",
            (channel, message_ts, self.instance_id),
        )

    def abandoned(self) -> tuple[list[QuestionRecord], list[ProposalRecord]]:
        """Questions and claimed (RUNNING) proposals whose process is gone, each taken over by
        this call alone: the questions are forgotten and the proposals marked DONE, so of two
        processes starting together only one tells a thread what happened."""
        owners = {
            owner
            for (owner,) in self._rows(
                "SELECT DISTINCT owner FROM bot_questions UNION SELECT DISTINCT claimed_by"
                " FROM bot_proposals WHERE status = ? AND claimed_by IS NOT NULL",
                (Status.RUNNING,),
            )
        }
        # A claim without an owner was made by a version that did not record one: its process
        # cannot be checked, so it is left alone.
        found = frozenset(o for o in owners if o != self.instance_id and not self._alive(o))
        dead = found if self.free_lock_is_death else found & self._suspects
        self._suspects = found
        questions: list[QuestionRecord] = []
        proposals: list[ProposalRecord] = []
        for owner in dead:
            for channel, ts, thread_id, user in self._rows(
                "DELETE FROM bot_questions WHERE owner = ?"
                " RETURNING channel, message_ts, thread_id, user_id",
                (owner,),
            ):
                questions.append(QuestionRecord(thread_id, channel, ts, user))
            rows = self._rows(
                "UPDATE bot_proposals SET status = ?, updated_at = ?"
                " WHERE status = ? AND claimed_by = ?"
                f" RETURNING {_COLUMNS}",
                (Status.DONE, time.time(), Status.RUNNING, owner),
            )
            proposals += [_record(row) for row in rows]
        return questions, proposals

    def supersede_pending(self, thread_id: str) -> list[ProposalRecord]:
        """Mark the thread's PENDING proposals SUPERSEDED (a new question replaces them)."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, updated_at = ?"
            " WHERE thread_id = ? AND status = ?"
            f" RETURNING {_COLUMNS}",
            (Status.SUPERSEDED, time.time(), thread_id, Status.PENDING),
        )
        return [_record(row) for row in rows]


def _record(row: tuple[Any, ...]) -> ProposalRecord:
    # the id and hash columns repeat the proposal's own (add_proposal writes both from it)
    _, thread_id, channel, ts, _, requested_by, status, approved, decided_by, edited_by, body = row
    return ProposalRecord(
        thread_id=thread_id,
        channel=channel,
        message_ts=ts,
        requested_by=requested_by,
        status=Status(status),
        approved=None if approved is None else bool(approved),
        decided_by=decided_by,
        edited_by=edited_by,
        proposal=Proposal.from_dict(json.loads(body)),
    )

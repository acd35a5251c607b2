"""The bot's own state: which Slack deliveries were handled, and which proposal sits in which
message with what decision.

The agent keeps the conversation (LangGraph checkpoints); this store keeps what only the Slack side
knows, so a click still works after a restart. Two rules hold it together:

- `first_delivery(event_id)` is true once per event id: Slack's retries are dropped.
- `claim()` moves a proposal PENDING -> RUNNING in one conditional UPDATE, so of two clicks (two
  threads, two processes) exactly one wins and runs anything. An edit claims the same way
  (`claim_edit`), so an approval and an edit of one proposal never both go ahead.

The SQL is plain (ON CONFLICT, RETURNING, `?` placeholders), so both back ends share it:
`SqliteStore` (one process, or replicas sharing a disk) and `PostgresStore` (replicas on several
machines); `open_store` picks one from the settings.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.outcome import Proposal

if TYPE_CHECKING:
    from bot.settings import Settings

#: How long an event id is remembered; Slack retries within minutes.
EVENT_TTL_S = 24 * 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_events (
    event_id TEXT PRIMARY KEY,
    seen_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_events_seen_at ON bot_events (seen_at);
CREATE TABLE IF NOT EXISTS bot_proposals (
    proposal_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    sql_sha256 TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    status TEXT NOT NULL,
    approved INTEGER,
    decided_by TEXT,
    edited_by TEXT,
    proposal TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_proposals_thread ON bot_proposals (thread_id, status);
CREATE INDEX IF NOT EXISTS bot_proposals_requester ON bot_proposals (requested_by, created_at);
"""
#: Columns added after the first release, for stores created before them.
_ADDED = {"edited_by": "ALTER TABLE bot_proposals ADD COLUMN edited_by TEXT"}

_COLUMNS = (
    "proposal_id, thread_id, channel, message_ts, sql_sha256, requested_by, status, approved,"
    " decided_by, edited_by, proposal"
)


class Status(StrEnum):
    """Where a proposal is. Only PENDING can be claimed."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    DONE = "DONE"
    SUPERSEDED = "SUPERSEDED"


@dataclass(frozen=True)
class ProposalRecord:
    """A proposal as the bot posted it: where its message is and who decided what."""

    proposal_id: str
    thread_id: str
    channel: str
    message_ts: str
    sql_sha256: str
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


@dataclass(frozen=True)
class Claim:
    """The result of a click: `won` when this click moved the proposal out of PENDING."""

    won: bool
    #: The record after the attempt (None when the proposal id is unknown).
    record: ProposalRecord | None


class Store(ABC):
    """The bot's state behind one interface; subclasses only say how a statement runs."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (in its own transaction) and return every row it produced."""

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
                json.dumps(asdict(proposal)),
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

    def claim(self, proposal_id: str, *, approved: bool, user: str) -> Claim:
        """Move a PENDING proposal to RUNNING for `user`'s decision; at most one caller wins."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, approved = ?, decided_by = ?, updated_at = ?"
            " WHERE proposal_id = ? AND status = ?"
            f" RETURNING {_COLUMNS}",
            (Status.RUNNING, int(approved), user, time.time(), proposal_id, Status.PENDING),
        )
        if rows:
            return Claim(won=True, record=_record(rows[0]))
        return Claim(won=False, record=self.proposal(proposal_id))

    def claim_edit(self, proposal_id: str, *, user: str) -> Claim:
        """Move a PENDING proposal to RUNNING for `user`'s edit; at most one caller wins."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, approved = NULL, decided_by = ?, updated_at = ?"
            " WHERE proposal_id = ? AND status = ?"
            f" RETURNING {_COLUMNS}",
            (Status.RUNNING, user, time.time(), proposal_id, Status.PENDING),
        )
        if rows:
            return Claim(won=True, record=_record(rows[0]))
        return Claim(won=False, record=self.proposal(proposal_id))

    def release(self, proposal_id: str) -> None:
        """A refused edit: the proposal waits for a click again."""
        self._rows(
            "UPDATE bot_proposals SET status = ?, decided_by = NULL, updated_at = ?"
            " WHERE proposal_id = ? AND status = ?",
            (Status.PENDING, time.time(), proposal_id, Status.RUNNING),
        )

    def supersede(self, proposal_id: str) -> None:
        """A claimed proposal was replaced (by its edited version)."""
        self._rows(
            "UPDATE bot_proposals SET status = ?, updated_at = ? WHERE proposal_id = ?",
            (Status.SUPERSEDED, time.time(), proposal_id),
        )

    def recent_questions(self, user: str, limit: int = 5) -> list[ProposalRecord]:
        """`user`'s latest proposals, newest first (one per question: edits are left out)."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM bot_proposals WHERE requested_by = ? AND edited_by IS NULL"
            " ORDER BY created_at DESC LIMIT ?",
            (user, limit),
        )
        return [_record(row) for row in rows]

    def finish(self, proposal_id: str) -> None:
        """The decision on a claimed proposal has been carried out (or failed for good)."""
        self._rows(
            "UPDATE bot_proposals SET status = ?, updated_at = ? WHERE proposal_id = ?",
            (Status.DONE, time.time(), proposal_id),
        )

    def supersede_pending(self, thread_id: str) -> list[ProposalRecord]:
        """Mark the thread's PENDING proposals SUPERSEDED (a new question replaces them)."""
        rows = self._rows(
            "UPDATE bot_proposals SET status = ?, updated_at = ?"
            " WHERE thread_id = ? AND status = ?"
            f" RETURNING {_COLUMNS}",
            (Status.SUPERSEDED, time.time(), thread_id, Status.PENDING),
        )
        return [_record(row) for row in rows]


class SqliteStore(Store):
    """SQLite-backed store, safe to share between threads (one connection behind a lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # Another process (a second replica, the checkpointer) may hold the write lock briefly.
        self._conn.execute("PRAGMA busy_timeout=5000")
        with self._lock:
            self._conn.executescript(_SCHEMA)
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(bot_proposals)")}
            for column, statement in _ADDED.items():
                if column not in have:
                    self._conn.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        # Fetch everything under the lock (RETURNING included: a write commits only once its
        # statement has been stepped to the end).
        with self._lock:
            return self._conn.execute(sql, params).fetchall()


def open_store(settings: Settings) -> Store:
    """The store `QUERYBOT_STATE_URL` names (PostgreSQL), else SQLite in the data directory."""
    if settings.state_url:
        from bot.store_postgres import PostgresStore

        return PostgresStore(settings.state_url)
    return SqliteStore(settings.state_db)


def _record(row: tuple[Any, ...]) -> ProposalRecord:
    (
        pid,
        thread_id,
        channel,
        ts,
        sha,
        requested_by,
        status,
        approved,
        decided_by,
        edited_by,
        body,
    ) = row
    return ProposalRecord(
        proposal_id=pid,
        thread_id=thread_id,
        channel=channel,
        message_ts=ts,
        sql_sha256=sha,
        requested_by=requested_by,
        status=Status(status),
        approved=None if approved is None else bool(approved),
        decided_by=decided_by,
        edited_by=edited_by,
        proposal=Proposal(**json.loads(body)),
    )

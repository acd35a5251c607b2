"""The append-only audit log: every proposal, gate rejection, decision and execution.

One table (`audit`), in SQLite or, for several replicas, PostgreSQL (a `Storage`); triggers refuse
UPDATE and DELETE, so rows can only be added. The execute step asks `approved_sha256` before running
anything: SQL whose hash has no recorded approval cannot run.

Columns:
    id           increasing integer
    at           UTC time, ISO 8601
    thread_id    the conversation (a Slack thread, a terminal session)
    event        proposed | gate_rejected | approved | rejected | executed | execution_failed
                 | cancel_requested | execution_cancelled
    proposal_id  the proposal the event is about (empty for gate rejections)
    actor        who asked (proposed, gate_rejected), who clicked (approved, rejected,
                 cancel_requested) or who approved (executed, execution_*)
    sql          the exact SQL text
    sql_sha256   sha256 of `sql` (UTF-8)
    detail       JSON: gate reasons, or rows / bytes / elapsed_s, or the error; `run_as`
                 (proposed) and `ran_as` (executed, execution_*): the warehouse identity
                 (a role, a service account) the query runs as, when the deployment maps
                 people to identities (absent: the connector's own login)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from agent.memory.storage import Storage, Tables, open_storage

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    event TEXT NOT NULL,
    proposal_id TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL DEFAULT '',
    sql TEXT NOT NULL DEFAULT '',
    sql_sha256 TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_proposal ON audit (proposal_id, event);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

#: The columns, in the order `events` reads them.
COLUMNS = ("id", "at", "thread_id", "event", "proposal_id", "actor", "sql", "sql_sha256", "detail")

PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    event TEXT NOT NULL,
    proposal_id TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL DEFAULT '',
    sql TEXT NOT NULL DEFAULT '',
    sql_sha256 TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_proposal ON audit (proposal_id, event);
CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
CREATE OR REPLACE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE OR REPLACE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
"""


def sql_sha256(sql: str) -> str:
    """The hash an approval names: of the exact text that will run."""
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


class AuditLog:
    """The log in a SQLite file (or in memory), or in PostgreSQL shared by replicas."""

    def __init__(self, where: Storage | Path | str = ":memory:") -> None:
        self._db = open_storage(where, Tables("audit", SCHEMA, PG_SCHEMA))

    def record(
        self,
        thread_id: str,
        event: str,
        *,
        proposal_id: str = "",
        actor: str = "",
        sql: str = "",
        detail: dict[str, Any] | None = None,
    ) -> None:
        row = (
            dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            thread_id,
            event,
            proposal_id,
            actor,
            sql,
            sql_sha256(sql) if sql else "",
            json.dumps(detail or {}, default=str),
        )
        self._db.rows(
            "INSERT INTO audit (at, thread_id, event, proposal_id, actor, sql, sql_sha256,"
            " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )

    def approved_sha256(self, proposal_id: str) -> str | None:
        """The hash recorded when `proposal_id` was approved, or None if it never was."""
        rows = self._db.rows(
            "SELECT sql_sha256 FROM audit WHERE proposal_id = ? AND event = 'approved'"
            " ORDER BY id LIMIT 1",
            (proposal_id,),
        )
        return rows[0][0] if rows else None

    def cancelled_by(self, proposal_id: str) -> str | None:
        """Who first asked to cancel `proposal_id`'s run, or None if nobody did."""
        rows = self._db.rows(
            "SELECT actor FROM audit WHERE proposal_id = ? AND event = 'cancel_requested'"
            " ORDER BY id LIMIT 1",
            (proposal_id,),
        )
        return rows[0][0] if rows else None

    def events(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        """Rows oldest first (all, or one thread's), with `detail` decoded."""
        where = " WHERE thread_id = ?" if thread_id else ""
        query = f"SELECT {', '.join(COLUMNS)} FROM audit{where} ORDER BY id"
        found = self._db.rows(query, (thread_id,) if thread_id else ())
        rows = [dict(zip(COLUMNS, row, strict=True)) for row in found]
        for row in rows:
            row["detail"] = json.loads(row["detail"])
        return rows

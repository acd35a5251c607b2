"""The append-only audit log: every proposal, gate rejection, decision and execution.

One SQLite table (`audit`); triggers refuse UPDATE and DELETE, so rows can only be added. The
execute step asks `approved_sha256` before running anything: SQL whose hash has no recorded
approval cannot run.

Columns:
    id           increasing integer
    at           UTC time, ISO 8601
    thread_id    the conversation (a Slack thread, a terminal session)
    event        proposed | gate_rejected | approved | rejected | executed | execution_failed
    proposal_id  the proposal the event is about (empty for gate rejections)
    actor        who asked (proposed, gate_rejected) or who clicked (approved, rejected)
    sql          the exact SQL text
    sql_sha256   sha256 of `sql` (UTF-8)
    detail       JSON: gate reasons, or rows / bytes / elapsed_s, or the error
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

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


def sql_sha256(sql: str) -> str:
    """The hash an approval names: of the exact text that will run."""
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


class AuditLog:
    """Append-only record of what was proposed, decided and run. Thread-safe."""

    def __init__(self, path: Path | str = ":memory:") -> None:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(SCHEMA)

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
        with self._lock:
            self._conn.execute(
                "INSERT INTO audit (at, thread_id, event, proposal_id, actor, sql, sql_sha256,"
                " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def approved_sha256(self, proposal_id: str) -> str | None:
        """The hash recorded when `proposal_id` was approved, or None if it never was."""
        with self._lock:
            row = self._conn.execute(
                "SELECT sql_sha256 FROM audit WHERE proposal_id = ? AND event = 'approved'"
                " ORDER BY id LIMIT 1",
                (proposal_id,),
            ).fetchone()
        return row[0] if row else None

    def events(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        """Rows oldest first (all, or one thread's), with `detail` decoded."""
        where = " WHERE thread_id = ?" if thread_id else ""
        query = f"SELECT * FROM audit{where} ORDER BY id"
        with self._lock:
            cursor = self._conn.execute(query, (thread_id,) if thread_id else ())
            names = [c[0] for c in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        for row in rows:
            row["detail"] = json.loads(row["detail"])
        return rows

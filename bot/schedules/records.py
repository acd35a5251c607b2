"""Scheduled questions as the bot store keeps them: each schedule (the approved SQL it runs, who
owns and who approved it, when and where it posts, an optional alert) and each of its runs.

The records live in the bot store's database (SQLite or PostgreSQL, `bot.store.tables`), so
moving the state moves the schedules; the scheduling engine (`bot.schedules.engine`) only fires
them. A run is keyed by its schedule and the time it was due: `claim_run` inserts that key once,
so of two replicas (or a restart) firing the same run exactly one carries it out, and a run left
`running` by a process that died is taken over once (`take_over`), never run beside it.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from agent.memory.storage import Storage

ACTIVE, PAUSED = "active", "paused"
#: A run's states: being carried out; done, its message posted; done, nothing to post (a quiet
#: alert); failed this once; not run (its schedule was paused or gone when it came due).
RUNNING, POSTED, QUIET, FAILED, SKIPPED = "running", "posted", "quiet", "failed", "skipped"

_COLUMNS = (
    "schedule_id, owner, approved_by, proposal_id, thread_id, question, sql, sql_sha256, run_as,"
    " post_channel, post_thread_ts, cron, time_zone, alert, status, paused_reason, failures,"
    " created_at"
)
_RUN_COLUMNS = "schedule_id, due_at, status, instance_id, message_ts, result, note"


@dataclass(frozen=True)
class Alert:
    """A condition on a run's result, checked on each run: post only when it fires (and once
    when it clears). `kind`: "above" / "below" (the first number of the first row against
    `threshold`), "change" (that number moved by more than `threshold` percent since the last
    run), "rows_appear" / "rows_disappear" (the result went from no rows to some, or back)."""

    kind: str
    threshold: float = 0.0

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "threshold": self.threshold})

    @classmethod
    def from_json(cls, text: str) -> Alert | None:
        if not text:
            return None
        data = json.loads(text)
        return cls(str(data["kind"]), float(data.get("threshold", 0.0)))


@dataclass(frozen=True)
class Schedule:
    """One scheduled question. The SQL is the approved SQL, exactly (its hash beside it):
    changing it is a new proposal, never an edit of the schedule."""

    owner: str
    approved_by: str
    proposal_id: str
    #: The thread the answer was approved in: its warehouse answers every run.
    thread_id: str
    question: str
    sql: str
    sql_sha256: str
    #: The warehouse identity runs act as ("" for the connector's login).
    run_as: str
    post_channel: str
    #: The thread to post in ("" for the channel's top level, or a direct message).
    post_thread_ts: str
    #: A five-field cron expression, read in `time_zone` (an IANA name: the owner's, in Slack).
    cron: str
    time_zone: str
    alert: Alert | None = None
    status: str = ACTIVE
    paused_reason: str = ""
    #: Runs that failed in a row; the schedule pauses after `MAX_FAILURES`.
    failures: int = 0
    schedule_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class Run:
    """One run of a schedule: the time it was due (ISO 8601, UTC), its state, the process
    carrying it out, its message (once posted) and the figures it posted (for the next run's
    change and alert)."""

    schedule_id: str
    due_at: str
    status: str
    instance_id: str
    message_ts: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    note: str = ""


class ScheduleLog:
    """The schedules and their runs, in the bot store's database."""

    def __init__(self, db: Storage) -> None:
        self._db = db

    # -- schedules --------------------------------------------------------------------------

    def add(self, schedule: Schedule) -> Schedule:
        now = time.time()
        self._db.rows(
            f"INSERT INTO bot_schedules ({_COLUMNS}, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*_values(schedule), now, now),
        )
        return replace(schedule, created_at=now)

    def get(self, schedule_id: str) -> Schedule | None:
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM bot_schedules WHERE schedule_id = ?", (schedule_id,)
        )
        return _schedule(rows[0]) if rows else None

    def all(self, *, owner: str | None = None) -> list[Schedule]:
        """Every schedule (of `owner` only, when named), oldest first."""
        where, params = ("WHERE owner = ?", (owner,)) if owner else ("", ())
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM bot_schedules {where} ORDER BY created_at", params
        )
        return [_schedule(row) for row in rows]

    def pause(self, schedule_id: str, reason: str) -> None:
        self._set(schedule_id, "status = ?, paused_reason = ?", (PAUSED, reason))

    def resume(self, schedule_id: str) -> None:
        self._set(schedule_id, "status = ?, paused_reason = '', failures = 0", (ACTIVE,))

    def set_when(self, schedule_id: str, cron: str, time_zone: str) -> None:
        self._set(schedule_id, "cron = ?, time_zone = ?", (cron, time_zone))

    def failed_once(self, schedule_id: str) -> int:
        """Count one more failed run in a row; returns the count."""
        rows = self._db.rows(
            "UPDATE bot_schedules SET failures = failures + 1, updated_at = ?"
            " WHERE schedule_id = ? RETURNING failures",
            (time.time(), schedule_id),
        )
        return int(rows[0][0]) if rows else 0

    def succeeded(self, schedule_id: str) -> None:
        self._set(schedule_id, "failures = 0", ())

    def delete(self, schedule_id: str) -> None:
        self._db.rows("DELETE FROM bot_schedule_runs WHERE schedule_id = ?", (schedule_id,))
        self._db.rows("DELETE FROM bot_schedules WHERE schedule_id = ?", (schedule_id,))

    def _set(self, schedule_id: str, assignments: str, params: tuple[Any, ...]) -> None:
        self._db.rows(
            f"UPDATE bot_schedules SET {assignments}, updated_at = ? WHERE schedule_id = ?",
            (*params, time.time(), schedule_id),
        )

    # -- runs -------------------------------------------------------------------------------

    def claim_run(self, schedule_id: str, due_at: str, instance_id: str, note: str = "") -> bool:
        """True for the one caller that starts the run due at `due_at`; False for every other
        (the run is done, or under way in a process that is alive)."""
        inserted = self._db.rows(
            f"INSERT INTO bot_schedule_runs ({_RUN_COLUMNS}, started_at)"
            " VALUES (?, ?, ?, ?, '', '{}', ?, ?)"
            " ON CONFLICT (schedule_id, due_at) DO NOTHING RETURNING schedule_id",
            (schedule_id, due_at, RUNNING, instance_id, note, time.time()),
        )
        return len(inserted) == 1

    def take_over(self, run: Run, instance_id: str) -> bool:
        """Take a run left `running` by a process found dead; True for the one that does."""
        moved = self._db.rows(
            "UPDATE bot_schedule_runs SET instance_id = ? WHERE schedule_id = ? AND due_at = ?"
            " AND status = ? AND instance_id = ? RETURNING schedule_id",
            (instance_id, run.schedule_id, run.due_at, RUNNING, run.instance_id),
        )
        return len(moved) == 1

    def release_run(self, run: Run) -> None:
        """Forget a run that failed this once, so its next try can claim it again."""
        self._db.rows(
            "DELETE FROM bot_schedule_runs WHERE schedule_id = ? AND due_at = ? AND status = ?"
            " AND instance_id = ?",
            (run.schedule_id, run.due_at, RUNNING, run.instance_id),
        )

    def run(self, schedule_id: str, due_at: str) -> Run | None:
        rows = self._db.rows(
            f"SELECT {_RUN_COLUMNS} FROM bot_schedule_runs WHERE schedule_id = ? AND due_at = ?",
            (schedule_id, due_at),
        )
        return _run(rows[0]) if rows else None

    def finish_run(
        self,
        run: Run,
        status: str,
        *,
        message_ts: str = "",
        result: dict[str, Any] | None = None,
        note: str = "",
    ) -> None:
        self._db.rows(
            "UPDATE bot_schedule_runs SET status = ?, message_ts = ?, result = ?, note = ?,"
            " finished_at = ? WHERE schedule_id = ? AND due_at = ?",
            (
                status,
                message_ts,
                json.dumps(result or {}),
                note or run.note,
                time.time(),
                run.schedule_id,
                run.due_at,
            ),
        )

    def last_done(self, schedule_id: str, before: str) -> Run | None:
        """The latest run due before `before` that ran (posted or quiet): what the next run
        compares with."""
        rows = self._db.rows(
            f"SELECT {_RUN_COLUMNS} FROM bot_schedule_runs WHERE schedule_id = ? AND due_at < ?"
            " AND status IN (?, ?) ORDER BY due_at DESC LIMIT 1",
            (schedule_id, before, POSTED, QUIET),
        )
        return _run(rows[0]) if rows else None

    def ran_after(self, schedule_id: str, due_at: str) -> bool:
        """Whether a run due after `due_at` has already run (posted or quiet)."""
        rows = self._db.rows(
            "SELECT 1 FROM bot_schedule_runs WHERE schedule_id = ? AND due_at > ?"
            " AND status IN (?, ?) LIMIT 1",
            (schedule_id, due_at, POSTED, QUIET),
        )
        return bool(rows)

    def latest_due(self, schedule_id: str) -> str:
        """When the schedule's latest run was due ("" for none yet)."""
        rows = self._db.rows(
            "SELECT MAX(due_at) FROM bot_schedule_runs WHERE schedule_id = ?", (schedule_id,)
        )
        return str(rows[0][0] or "") if rows else ""

    def running(self) -> list[Run]:
        """Runs under way (or left so by a process that died)."""
        rows = self._db.rows(
            f"SELECT {_RUN_COLUMNS} FROM bot_schedule_runs WHERE status = ?", (RUNNING,)
        )
        return [_run(row) for row in rows]


def _values(s: Schedule) -> tuple[Any, ...]:
    alert = s.alert.to_json() if s.alert else ""
    return (
        s.schedule_id,
        s.owner,
        s.approved_by,
        s.proposal_id,
        s.thread_id,
        s.question,
        s.sql,
        s.sql_sha256,
        s.run_as,
        s.post_channel,
        s.post_thread_ts,
        s.cron,
        s.time_zone,
        alert,
        s.status,
        s.paused_reason,
        s.failures,
    )


def _schedule(row: tuple[Any, ...]) -> Schedule:
    (sid, owner, approver, pid, thread, question, sql, sha, run_as, channel, thread_ts, cron, tz,
     alert, status, reason, failures, created) = row  # fmt: skip
    return Schedule(
        owner=owner,
        approved_by=approver,
        proposal_id=pid,
        thread_id=thread,
        question=question,
        sql=sql,
        sql_sha256=sha,
        run_as=run_as,
        post_channel=channel,
        post_thread_ts=thread_ts,
        cron=cron,
        time_zone=tz,
        alert=Alert.from_json(alert),
        status=status,
        paused_reason=reason,
        failures=int(failures),
        schedule_id=sid,
        created_at=float(created),
    )


def _run(row: tuple[Any, ...]) -> Run:
    sid, due_at, status, instance, ts, result, note = row
    return Run(sid, due_at, status, instance, ts, json.loads(result or "{}"), note)

"""What people said of answers (thumbs up or down, and what was wrong), kept for review and
counted per warehouse (`querybot doctor`).

One row per person and answer: a later rating replaces theirs (a thumbs down then a reason, or a
change of mind). The question and SQL are copied in, so a review needs nothing else. The table is
the bot store's (`bot.store.tables`), in SQLite or PostgreSQL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agent.memory.storage import Storage

UP, DOWN = "up", "down"


@dataclass(frozen=True)
class Rating:
    proposal_id: str
    user: str
    warehouse: str
    #: UP or DOWN.
    rating: str
    #: What the person said was wrong ("" for a thumbs up, or a down not yet explained).
    reason: str
    question: str
    sql: str
    #: When it was kept (seconds since the epoch; the store sets it, so a rating is the same
    #: rating whenever it was given: not compared).
    rated_at: float = field(default=0.0, compare=False)


class FeedbackLog:
    """The ratings of answers, in the bot store's database."""

    def __init__(self, db: Storage) -> None:
        self._db = db

    def rate(self, rating: Rating) -> None:
        """Keep `rating`, replacing the same person's earlier one of the same answer."""
        self._db.rows(
            "INSERT INTO bot_feedback (proposal_id, user_id, warehouse, rating, reason, question,"
            " sql, rated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (proposal_id, user_id)"
            " DO UPDATE SET rating = excluded.rating, reason = excluded.reason,"
            " rated_at = excluded.rated_at",
            (
                rating.proposal_id,
                rating.user,
                rating.warehouse,
                rating.rating,
                rating.reason,
                rating.question,
                rating.sql,
                time.time(),
            ),
        )

    def to_review(self, limit: int = 50, *, warehouse: str | None = None) -> list[Rating]:
        """The latest thumbs down (of `warehouse` only, when named), newest first: each
        person's standing rating of an answer, so a thumbs down they took back is not one."""
        only = "" if warehouse is None else " AND warehouse = ?"
        rows = self._db.rows(
            "SELECT proposal_id, user_id, warehouse, rating, reason, question, sql, rated_at"
            f" FROM bot_feedback WHERE rating = ?{only} ORDER BY rated_at DESC LIMIT ?",
            (DOWN, *([] if warehouse is None else [warehouse]), limit),
        )
        return [
            Rating(pid, user, where, kind, reason, question, sql, float(rated_at))
            for pid, user, where, kind, reason, question, sql, rated_at in rows
        ]

    def counts(self) -> dict[str, tuple[int, int]]:
        """Warehouse -> (thumbs up, thumbs down)."""
        rows = self._db.rows(
            "SELECT warehouse, rating, count(*) FROM bot_feedback GROUP BY warehouse, rating"
        )
        counts: dict[str, list[int]] = {}
        for warehouse, rating, n in rows:
            counts.setdefault(warehouse, [0, 0])[0 if rating == UP else 1] += int(n)
        return {w: (up, down) for w, (up, down) in sorted(counts.items())}

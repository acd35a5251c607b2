"""Which proposal of a thread last came to an answer: what "@querybot schedule this every
Monday at 9" in that thread schedules. Read from the bot store's proposals (`Store.finish`
records what each decision came to)."""

from __future__ import annotations

from agent.memory.storage import Storage


class AnsweredLog:
    """Reads of the bot store's proposals by the thread they were answered in."""

    def __init__(self, db: Storage) -> None:
        self._db = db

    def latest(self, thread_id: str) -> str | None:
        """The id of the thread's latest proposal that was approved and answered, if any."""
        rows = self._db.rows(
            "SELECT proposal_id FROM bot_proposals WHERE thread_id = ? AND status = 'DONE'"
            " AND approved = 1 AND outcome = 'answer' ORDER BY updated_at DESC LIMIT 1",
            (thread_id,),
        )
        return str(rows[0][0]) if rows else None

"""What became of the questions a person asked, read for their Home tab: how many came to a
proposal, and what each finished one came to (`Store.finish` records it)."""

from __future__ import annotations

from agent.memory.storage import Storage


class AskedLog:
    """Reads of the bot store's proposals by the person who asked them."""

    def __init__(self, db: Storage) -> None:
        self._db = db

    def question_count(self, user: str) -> int:
        """How many questions `user` asked that came to a proposal (as `recent_questions`)."""
        [(count,)] = self._db.rows(
            "SELECT COUNT(*) FROM bot_proposals WHERE requested_by = ? AND edited_by IS NULL",
            (user,),
        )
        return int(count)

    def outcomes(self, proposal_ids: list[str]) -> dict[str, str]:
        """What each finished proposal of `proposal_ids` came to (those with a recorded one)."""
        if not proposal_ids:
            return {}
        marks = ", ".join("?" for _ in proposal_ids)
        rows = self._db.rows(
            f"SELECT proposal_id, outcome FROM bot_proposals WHERE proposal_id IN ({marks})"
            " AND outcome IS NOT NULL",
            tuple(proposal_ids),
        )
        return {pid: outcome for pid, outcome in rows}

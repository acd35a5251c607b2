"""The one exception the gate uses internally; `check_sql` turns it into a rejected verdict."""

from __future__ import annotations

from agent.gate.verdict import Reason


class Rejection(Exception):
    """A statement the gate refuses, with its reasons and the SQL as understood so far."""

    def __init__(self, *reasons: Reason, sql: str = "") -> None:
        super().__init__("; ".join(str(r) for r in reasons))
        self.reasons = reasons
        self.sql = sql

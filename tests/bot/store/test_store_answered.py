"""Each thread's latest approved and answered proposal (what a schedule asked in words
schedules), on SQLite and PostgreSQL alike."""

from __future__ import annotations

from bot.store.base import Store
from tests.bot.store.test_store import SHA, add, opener, postgres_url, store

__all__ = ["opener", "postgres_url", "store"]  # the fixtures, for pytest

THREAD = "T:C:1.0"


def test_the_latest_answered_proposal_of_the_thread(store: Store) -> None:
    assert store.answered.latest(THREAD) is None
    for pid in ("p1", "p2", "p3", "p4", "p5"):
        add(store, pid, thread=THREAD)
    add(store, "other", thread="T:C:2.0")
    for pid in ("p1", "p3", "other"):
        store.claim(pid, approved=True, user="U2", sql_sha256=SHA)
        store.finish(pid, "answer")
    store.claim("p4", approved=False, user="U2", sql_sha256=SHA)  # rejected
    store.finish("p4", "rejected")
    store.claim("p5", approved=True, user="U2", sql_sha256=SHA)  # approved, but it failed
    store.finish("p5", "failed")
    assert store.answered.latest(THREAD) == "p3"  # p2 is still waiting
    assert store.answered.latest("T:C:2.0") == "other"
    assert store.answered.latest("T:C:3.0") is None

"""What the store keeps for the Home tab, on SQLite and PostgreSQL alike: what each finished
proposal came to, how many questions a person asked, and the proposals still waiting; and a
store made before the outcome was kept gains its column."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.store.base import Store
from bot.store.sqlite import SqliteStore
from bot.store.tables import SCHEMA
from tests.bot.store.test_store import add, make_proposal, opener, postgres_url, store

__all__ = ["opener", "postgres_url", "store"]  # the fixtures, for pytest


def test_a_finished_proposal_keeps_what_it_came_to(store: Store) -> None:
    for pid in ("p1", "p2", "p3"):
        add(store, pid, thread=f"T:C:{pid}")
    store.claim("p1", approved=True, user="U2", sql_sha256=make_proposal().sql_sha256)
    store.finish("p1", "answer")
    store.finish("p2")  # nothing came of it: no outcome kept
    assert store.asked.outcomes(["p1", "p2", "p3"]) == {"p1": "answer"}
    assert store.asked.outcomes([]) == {}
    assert [r.proposal_id for r in store.pending()] == ["p3"]
    assert [r.proposal_id for r in store.pending(limit=0)] == []
    assert store.asked.question_count("U1") == 3 and store.asked.question_count("U2") == 0


def test_a_store_from_before_outcomes_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(SCHEMA)  # the tables without the columns added since
    opened = SqliteStore(path)
    try:
        add(opened)
        opened.finish("p1", "failed")
        assert opened.asked.outcomes(["p1"]) == {"p1": "failed"}
    finally:
        opened.close()

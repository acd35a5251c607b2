"""`querybot doctor`'s feedback section: thumbs up and down per warehouse from the bot store
(SQLite and PostgreSQL), "none yet" before any, and nothing created where the bot never ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.doctor.feedback import check_feedback
from bot.settings import Settings
from bot.store.base import Store
from bot.store.feedback import DOWN, UP, Rating
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.support.pgdb import scratch_database


def notes(settings: Settings) -> list[str]:
    section = check_feedback(settings)
    assert {line.status for line in section.lines} == {"note"}
    return [line.text for line in section.lines]


def rate(store: Store) -> None:
    for pid, user, warehouse, rating in [
        ("p1", "U1", "sales", UP),
        ("p1", "U2", "sales", DOWN),
        ("p2", "U1", "sales", UP),
        ("p3", "U1", "finance", DOWN),
    ]:
        store.feedback.rate(Rating(pid, user, warehouse, rating, "", "q", "SELECT 1"))


COUNTS = [
    "finance: 0 up, 1 down (the thumbs down are kept for review)",
    "sales: 2 up, 1 down (the thumbs down are kept for review)",
]


def test_counts_per_warehouse_from_sqlite(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert notes(settings) == ["none yet: the bot has not run here"]
    assert not settings.state_db.exists()
    store = SqliteStore(settings.state_db)
    try:
        assert notes(settings) == ["none yet"]
        rate(store)
    finally:
        store.close()
    assert notes(settings) == COUNTS
    off = Settings(data_dir=tmp_path, slack_feedback=False)
    assert notes(off)[0].startswith("off (QUERYBOT_SLACK_FEEDBACK=false)")


@pytest.mark.slow
def test_counts_per_warehouse_from_postgres(tmp_path: Path) -> None:
    with scratch_database("doctor_feedback") as url:
        store = PostgresStore(url)
        try:
            rate(store)
        finally:
            store.close()
        assert notes(Settings(data_dir=tmp_path, state_url=url)) == COUNTS

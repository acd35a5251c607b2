"""The feedback log of the bot store, on SQLite and PostgreSQL: one rating per person and answer
(a later one replaces it, its reason too), thumbs down listed for review newest first, counts
per warehouse; a store opened again finds them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store.base import Store
from bot.store.feedback import DOWN, UP, Rating
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.support.pgdb import scratch_database


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[Store]]:
    """Two handles on one store, as two replicas (or a restart) would have."""
    if request.param == "sqlite":
        opened: list[Store] = [SqliteStore(tmp_path / "state.sqlite") for _ in range(2)]
        yield opened
    else:
        with scratch_database("feedback") as url:
            opened = [PostgresStore(url) for _ in range(2)]
            yield opened
    for store in opened:
        store.close()


def rating(pid: str, user: str, kind: str, reason: str = "", warehouse: str = "sales") -> Rating:
    return Rating(pid, user, warehouse, kind, reason, "how many orders?", "SELECT count(*) FROM o")


def test_ratings_are_kept_once_per_person_and_counted_per_warehouse(stores: list[Store]) -> None:
    one, other = stores
    one.feedback.rate(rating("p1", "U1", DOWN))
    one.feedback.rate(rating("p1", "U1", DOWN, "counts cancelled orders"))
    other.feedback.rate(rating("p1", "U2", UP))
    other.feedback.rate(rating("p2", "U1", UP, warehouse="finance"))
    assert one.feedback.counts() == {"finance": (1, 0), "sales": (1, 1)}
    assert other.feedback.to_review() == [rating("p1", "U1", DOWN, "counts cancelled orders")]
    other.feedback.rate(rating("p1", "U1", UP))  # a change of mind
    assert one.feedback.counts() == {"finance": (1, 0), "sales": (2, 0)}
    assert one.feedback.to_review() == []


def test_thumbs_down_are_listed_newest_first(stores: list[Store]) -> None:
    store = stores[0]
    for n in range(3):
        store.feedback.rate(rating(f"p{n}", "U1", DOWN, f"reason {n}"))
    assert [r.reason for r in store.feedback.to_review(limit=2)] == ["reason 2", "reason 1"]

"""bot.store: retried deliveries are seen once, and of many clicks exactly one claims a proposal.

Every test runs on both back ends: SQLite, and PostgreSQL (a scratch database, see pgdb.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pgdb import rows, scratch_database

from agent.outcome import Proposal
from bot.settings import Settings, SettingsError
from bot.store import SqliteStore, Status, Store, open_store
from bot.store_postgres import PostgresStore

#: Opens another handle on one shared store, as another process (replica) would.
Opener = Callable[[], Store]


def make_proposal(pid: str = "p1", sql: str = "SELECT 1") -> Proposal:
    return Proposal(
        proposal_id=pid,
        question="¿Cuánto? 売上 📈",
        sql=sql,
        explanation="Counts <things> & stuff",
        tables=["demo.main.orders"],
        sql_sha256="ab" * 32,
        warnings=["no LIMIT given; added LIMIT 1000"],
    )


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with scratch_database("store") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[Store] = []

    def open_one() -> Store:
        if request.param == "sqlite":
            store: Store = SqliteStore(tmp_path / "state.sqlite")
        else:
            store = PostgresStore(request.getfixturevalue("postgres_url"))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()
    if request.param == "postgres":
        rows(request.getfixturevalue("postgres_url"), "TRUNCATE bot_events, bot_proposals")


@pytest.fixture
def store(opener: Opener) -> Store:
    return opener()


def add(store: Store, pid: str = "p1", thread: str = "T:C:1.0") -> None:
    store.add_proposal(
        make_proposal(pid), thread_id=thread, channel="C", message_ts="2.0", requested_by="U1"
    )


def test_first_delivery_is_true_once_per_event(store: Store) -> None:
    assert store.first_delivery("Ev1")
    assert not store.first_delivery("Ev1")
    assert store.first_delivery("Ev2")


def test_first_delivery_under_concurrent_retries(opener: Opener) -> None:
    stores = [opener() for _ in range(2)]  # as two processes would
    results: list[bool] = []
    barrier = threading.Barrier(10)

    def deliver(i: int) -> None:
        barrier.wait()
        results.append(stores[i % 2].first_delivery("EvSame"))

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 9 + [True]


def test_proposal_round_trips(store: Store) -> None:
    add(store)
    record = store.proposal("p1")
    assert record is not None
    assert record.proposal == make_proposal("p1")
    assert (record.thread_id, record.channel, record.message_ts) == ("T:C:1.0", "C", "2.0")
    assert record.sql_sha256 == "ab" * 32
    assert record.status is Status.PENDING
    assert (record.approved, record.decided_by) == (None, None)
    assert store.proposal("unknown") is None


def test_claim_wins_once_and_reports_the_winner(store: Store) -> None:
    add(store)
    first = store.claim("p1", approved=True, user="U2")
    second = store.claim("p1", approved=False, user="U3")
    assert first.won and first.record and first.record.status is Status.RUNNING
    assert not second.won
    assert second.record is not None
    assert (second.record.approved, second.record.decided_by) == (True, "U2")


def test_claim_of_unknown_proposal(store: Store) -> None:
    claim = store.claim("nope", approved=True, user="U2")
    assert not claim.won and claim.record is None


def test_concurrent_claims_from_two_connections_have_one_winner(opener: Opener) -> None:
    stores = [opener() for _ in range(2)]
    add(stores[0])
    barrier = threading.Barrier(16)
    wins: list[str] = []

    def click(i: int) -> None:
        barrier.wait()
        if stores[i % 2].claim("p1", approved=True, user=f"U{i}").won:
            wins.append(f"U{i}")

    threads = [threading.Thread(target=click, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    record = stores[1].proposal("p1")
    assert record and record.decided_by == wins[0]


def test_finish_and_later_claims(store: Store) -> None:
    add(store)
    store.claim("p1", approved=True, user="U2")
    store.finish("p1")
    record = store.proposal("p1")
    assert record and record.status is Status.DONE
    assert not store.claim("p1", approved=True, user="U3").won


def test_supersede_marks_only_pending_proposals_of_that_thread(store: Store) -> None:
    add(store, "old", "T:C:1.0")
    add(store, "decided", "T:C:1.0")
    add(store, "elsewhere", "T:C:9.0")
    store.claim("decided", approved=True, user="U2")
    superseded = store.supersede_pending("T:C:1.0")
    assert [r.proposal_id for r in superseded] == ["old"]
    assert superseded[0].status is Status.SUPERSEDED
    assert not store.claim("old", approved=True, user="U2").won
    assert store.claim("elsewhere", approved=True, user="U2").won
    assert store.supersede_pending("T:C:1.0") == []


def test_state_survives_reopening(opener: Opener) -> None:
    first = opener()
    first.first_delivery("Ev1")
    add(first)
    first.close()
    again = opener()
    assert not again.first_delivery("Ev1")
    assert again.claim("p1", approved=True, user="U2").won


def test_the_state_url_setting_picks_the_store(tmp_path: Path, postgres_url: str) -> None:
    local = Settings.from_env({"QUERYBOT_DATA_DIR": str(tmp_path)}, dotenv=False)
    assert local.state_url is None
    assert isinstance(open_store(local), SqliteStore)
    shared = Settings.from_env({"QUERYBOT_STATE_URL": postgres_url}, dotenv=False)
    assert isinstance(open_store(shared), PostgresStore)
    with pytest.raises(SettingsError, match="QUERYBOT_STATE_URL"):
        Settings.from_env({"QUERYBOT_STATE_URL": "mysql://x/y"}, dotenv=False)

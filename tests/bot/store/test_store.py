"""bot.store.base: retried deliveries are seen once, and of many clicks exactly one claims a
proposal.

Every test runs on both back ends: SQLite, and PostgreSQL (a scratch database, see pgdb.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.outcome import Proposal
from bot.settings import Settings, SettingsError
from bot.store.base import Status, Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from bot.wiring import open_store
from tests.support.pgdb import rows, scratch_database

SHA = "ab" * 32

#: Opens another handle on one shared store, as another process (replica) would.
Opener = Callable[[], Store]


def make_proposal(pid: str = "p1", sql: str = "SELECT 1") -> Proposal:
    return Proposal(
        proposal_id=pid,
        question="¿Cuánto? 売上 📈",
        sql=sql,
        explanation="Counts <things> & stuff",
        tables=["demo.main.orders"],
        sql_sha256=SHA,
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
        rows(
            request.getfixturevalue("postgres_url"),
            "TRUNCATE bot_events, bot_proposals, bot_schedules, bot_schedule_runs",
        )


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
    assert record.sql_sha256 == SHA
    assert record.status is Status.PENDING
    assert (record.approved, record.decided_by) == (None, None)
    assert store.proposal("unknown") is None


def test_claim_wins_once_and_reports_the_winner(store: Store) -> None:
    add(store)
    first = store.claim("p1", approved=True, user="U2", sql_sha256=SHA)
    second = store.claim("p1", approved=False, user="U3", sql_sha256=SHA)
    assert first.won and first.record and first.record.status is Status.RUNNING
    assert not second.won
    assert second.record is not None
    assert (second.record.approved, second.record.decided_by) == (True, "U2")


def test_claim_of_unknown_proposal(store: Store) -> None:
    claim = store.claim("nope", approved=True, user="U2", sql_sha256=SHA)
    assert not claim.won and claim.record is None


def test_concurrent_claims_from_two_connections_have_one_winner(opener: Opener) -> None:
    stores = [opener() for _ in range(2)]
    add(stores[0])
    barrier = threading.Barrier(16)
    wins: list[str] = []

    def click(i: int) -> None:
        barrier.wait()
        if stores[i % 2].claim("p1", approved=True, user=f"U{i}", sql_sha256=SHA).won:
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
    store.claim("p1", approved=True, user="U2", sql_sha256=SHA)
    store.finish("p1")
    record = store.proposal("p1")
    assert record and record.status is Status.DONE
    assert not store.claim("p1", approved=True, user="U3", sql_sha256=SHA).won


def test_supersede_marks_only_pending_proposals_of_that_thread(store: Store) -> None:
    add(store, "old", "T:C:1.0")
    add(store, "decided", "T:C:1.0")
    add(store, "elsewhere", "T:C:9.0")
    store.claim("decided", approved=True, user="U2", sql_sha256=SHA)
    superseded = store.supersede_pending("T:C:1.0")
    assert [r.proposal_id for r in superseded] == ["old"]
    assert superseded[0].status is Status.SUPERSEDED
    assert not store.claim("old", approved=True, user="U2", sql_sha256=SHA).won
    assert store.claim("elsewhere", approved=True, user="U2", sql_sha256=SHA).won
    assert store.supersede_pending("T:C:1.0") == []


def test_state_survives_reopening(opener: Opener) -> None:
    first = opener()
    first.first_delivery("Ev1")
    add(first)
    first.close()
    again = opener()
    assert not again.first_delivery("Ev1")
    assert again.claim("p1", approved=True, user="U2", sql_sha256=SHA).won


def test_the_state_url_setting_picks_the_store(tmp_path: Path, postgres_url: str) -> None:
    local = Settings.from_env({"QUERYBOT_DATA_DIR": str(tmp_path)}, dotenv=False)
    assert local.state_url is None
    assert isinstance(open_store(local), SqliteStore)
    shared = Settings.from_env({"QUERYBOT_STATE_URL": postgres_url}, dotenv=False)
    assert isinstance(open_store(shared), PostgresStore)
    with pytest.raises(SettingsError, match="QUERYBOT_STATE_URL"):
        Settings.from_env({"QUERYBOT_STATE_URL": "mysql://x/y"}, dotenv=False)


# -- what a claim holds to: the SQL hash the card showed, and no-self-approval -----------------


def test_a_claim_naming_other_sql_wins_nothing(store: Store) -> None:
    add(store)
    assert not store.claim("p1", approved=True, user="U2", sql_sha256="cd" * 32).won
    assert not store.claim_edit("p1", user="U2", sql_sha256="").won
    record = store.proposal("p1")
    assert record and record.status is Status.PENDING and record.decided_by is None
    assert store.claim("p1", approved=True, user="U2", sql_sha256=SHA).won


def test_no_self_approval_is_part_of_the_claim(store: Store) -> None:
    add(store)  # asked by U1
    store.add_proposal(
        make_proposal("edited"),
        thread_id="T:C:1.0",
        channel="C",
        message_ts="3.0",
        requested_by="U1",
        edited_by="U2",
    )
    for pid, user in (("p1", "U1"), ("edited", "U1"), ("edited", "U2")):
        claim = store.claim(pid, approved=True, user=user, sql_sha256=SHA, no_self_approval=True)
        assert not claim.won and claim.record and claim.record.status is Status.PENDING
    assert store.claim(
        "edited", approved=True, user="U3", sql_sha256=SHA, no_self_approval=True
    ).won
    # Rejecting is not approving: the asker may withdraw their own question.
    assert store.claim("p1", approved=False, user="U1", sql_sha256=SHA).won


def test_release_undoes_only_that_editors_edit_claim(opener: Opener) -> None:
    store, replica = opener(), opener()
    add(store)
    add(store, "approved")
    assert store.claim("approved", approved=True, user="U2", sql_sha256=SHA).won
    assert not store.release("approved", editor="U2")  # an approval is never put back
    assert store.claim_edit("p1", user="U3", sql_sha256=SHA).won
    assert not store.release("p1", editor="U4")
    assert not replica.release("p1", editor="U3")  # another process's claim
    store.supersede("approved")  # only an edit's claim is superseded
    assert [store.proposal(p).status for p in ("p1", "approved")] == [Status.RUNNING] * 2  # type: ignore[union-attr]
    assert store.release("p1", editor="U3")
    assert store.proposal("p1").status is Status.PENDING  # type: ignore[union-attr]


@pytest.mark.slow
def test_self_approvals_racing_refused_edits_never_win(opener: Opener) -> None:
    """The race of issue 15: while the asker's refused edits move the proposal PENDING ->
    RUNNING -> PENDING, their own approvals (and approvals naming other SQL), from two
    processes, hammer the claim. None may win, whatever the interleaving; afterwards another
    person's approval wins once."""
    stores = [opener(), opener()]
    add(stores[0])  # asked by U1
    done = threading.Event()
    wins: list[str] = []
    tries = [0] * 8
    edits = 0

    def click(i: int) -> None:
        user, sha = ("U1", SHA) if i % 2 else ("U2", "cd" * 32)  # the asker; other SQL
        store = stores[i // 2 % 2]
        while not done.is_set() or tries[i] < 20:
            tries[i] += 1
            if store.claim(
                "p1", approved=True, user=user, sql_sha256=sha, no_self_approval=True
            ).won:
                wins.append(user)

    clickers = [threading.Thread(target=click, args=(i,)) for i in range(8)]
    for t in clickers:
        t.start()
    try:
        for _ in range(40):
            if stores[1].claim_edit("p1", user="U1", sql_sha256=SHA).won:
                edits += 1
                assert stores[1].release("p1", editor="U1")
    finally:
        done.set()
        for t in clickers:
            t.join()
    assert wins == []
    assert edits > 0 and min(tries) >= 20
    record = stores[0].proposal("p1")
    assert record and record.status is Status.PENDING and record.decided_by is None
    assert (
        stores[0].claim("p1", approved=True, user="U3", sql_sha256=SHA, no_self_approval=True).won
    )

"""bot.schedules.records: a schedule's runs are claimed once, however many processes (replicas)
fire them, and a run left by a process that died is taken over once. On SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time

from bot.schedules.records import (
    ACTIVE,
    PAUSED,
    POSTED,
    QUIET,
    RUNNING,
    Alert,
    Schedule,
)
from bot.store.base import Store
from tests.bot.store import test_store
from tests.bot.store.test_store import Opener

#: Both back ends, each test on a fresh SQLite file or the module's PostgreSQL database.
opener = test_store.opener
postgres_url = test_store.postgres_url


def schedule(**changes: object) -> Schedule:
    values: dict[str, object] = {
        "owner": "U1",
        "approved_by": "U2",
        "proposal_id": "p1",
        "thread_id": "T:C1:1.0",
        "question": "revenue by region?",
        "sql": "SELECT 1",
        "sql_sha256": "ab" * 32,
        "run_as": "",
        "post_channel": "C1",
        "post_thread_ts": "1.0",
        "cron": "0 9 * * 1",
        "time_zone": "Europe/London",
        **changes,
    }
    return Schedule(**values)  # type: ignore[arg-type]


def test_a_schedule_is_kept_as_made(opener: Opener) -> None:
    store = opener()
    made = store.schedules.add(schedule(alert=Alert("above", 50)))
    assert store.schedules.get(made.schedule_id) == made
    assert store.schedules.all(owner="U1") == [made]
    assert store.schedules.all(owner="U9") == []
    store.schedules.pause(made.schedule_id, "the gate refuses it")
    paused = store.schedules.get(made.schedule_id)
    assert paused is not None and (paused.status, paused.paused_reason) == (
        PAUSED,
        "the gate refuses it",
    )
    assert store.schedules.failed_once(made.schedule_id) == 1
    store.schedules.resume(made.schedule_id)
    resumed = store.schedules.get(made.schedule_id)
    assert resumed is not None and (resumed.status, resumed.failures) == (ACTIVE, 0)
    store.schedules.delete(made.schedule_id)
    assert store.schedules.get(made.schedule_id) is None


def test_of_many_processes_firing_one_run_exactly_one_claims_it(opener: Opener) -> None:
    stores = [opener() for _ in range(4)]
    made = stores[0].schedules.add(schedule())
    due = "2027-03-29T08:00:00+00:00"
    won: list[str] = []
    start = threading.Barrier(len(stores) * 2)

    def fire(store: Store) -> None:
        start.wait()
        if store.schedules.claim_run(made.schedule_id, due, store.instance_id):
            won.append(store.instance_id)

    threads = [threading.Thread(target=fire, args=(s,)) for s in stores for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    run = stores[0].schedules.run(made.schedule_id, due)
    assert run is not None and (run.status, run.instance_id) == (RUNNING, won[0])


def test_a_run_left_by_a_dead_process_is_taken_over_once(opener: Opener) -> None:
    first = opener()
    made = first.schedules.add(schedule())
    due = "2027-03-29T08:00:00+00:00"
    assert first.schedules.claim_run(made.schedule_id, due, first.instance_id)
    left = first.schedules.run(made.schedule_id, due)
    assert left is not None
    others = [opener(), opener()]
    others[0].proof_wait_s = 0.2  # PostgreSQL's second look, a moment later
    assert not others[0].is_gone(first.instance_id), "a living process keeps its run"
    first.close()
    # PostgreSQL frees a closed session's advisory lock shortly after, not at once
    deadline = time.monotonic() + 10
    while not others[0].is_gone(first.instance_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert others[0].is_gone(first.instance_id)
    assert others[0].schedules.take_over(left, others[0].instance_id)
    assert not others[1].schedules.take_over(left, others[1].instance_id)


def test_the_last_run_that_ran_is_what_the_next_compares_with(opener: Opener) -> None:
    store = opener()
    made = store.schedules.add(schedule())
    sid = made.schedule_id
    for due, status, value in (
        ("2027-01-04T09:00:00+00:00", POSTED, 10),
        ("2027-01-11T09:00:00+00:00", QUIET, 12),
    ):
        assert store.schedules.claim_run(sid, due, store.instance_id)
        run = store.schedules.run(sid, due)
        assert run is not None
        store.schedules.finish_run(run, status, message_ts="1.1", result={"value": value})
    # a run that failed this once is forgotten, so its retry can claim it again
    failing = "2027-01-18T09:00:00+00:00"
    assert store.schedules.claim_run(sid, failing, store.instance_id)
    run = store.schedules.run(sid, failing)
    assert run is not None
    store.schedules.release_run(run)
    assert store.schedules.claim_run(sid, failing, store.instance_id)
    last = store.schedules.last_done(sid, failing)
    assert last is not None and last.result == {"value": 12}
    assert store.schedules.latest_due(sid) == failing
    # a run due before one that already ran is stale (a catch-up that came late)
    assert store.schedules.ran_after(sid, "2027-01-04T09:00:00+00:00")
    assert not store.schedules.ran_after(sid, "2027-01-11T09:00:00+00:00")


def test_a_living_process_that_lost_its_lock_for_a_moment_is_not_gone(
    postgres_url: str,
) -> None:
    # PostgreSQL frees a session's advisory lock when its connection ends, as when the server
    # restarts under a living process, which takes its lock again (keep_alive) within moments
    from bot.store.postgres import PostgresStore

    living, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        living._liveness.close()  # the connection holding its lock ended
        assert freed(other, living.instance_id), "PostgreSQL freed the lock"
        other.proof_wait_s = 2.0
        again = threading.Timer(0.3, living.keep_alive)
        again.start()
        assert not other.is_gone(living.instance_id), "one look at a free lock is not proof"
        again.join()
        living.close()
        assert freed(other, living.instance_id)
        assert other.is_gone(living.instance_id), "still free after the wait: gone"
    finally:
        other.close()


def freed(store: Store, instance_id: str) -> bool:
    """Whether `instance_id`'s lock is free within 10 s (PostgreSQL frees a closed session's
    advisory lock shortly after, not at once)."""
    deadline = time.monotonic() + 10
    while store._alive(instance_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True

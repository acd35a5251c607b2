"""End to end, scheduled runs on two replicas sharing PostgreSQL state (QUERYBOT_STATE_URL, in
which DBOS keeps its tables too): both fire every run, each run is carried out and posted once,
none is missed, and both replicas take part. The bots' wall clock is libfaketime's
(tests/support/clock.py); the answer scheduled is asked and approved first, at the real time.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter
from pathlib import Path

from bot.schedules.records import POSTED, Schedule
from bot.store.postgres import PostgresStore
from tests.e2e.schedule_flow import REGIONS, posts
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.clock import FakeClock, require
from tests.support.pgdb import rows, scratch_database
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin


def test_two_replicas_run_each_scheduled_run_once(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    require()
    for person in (ALICE, BOB):
        slack.set_time_zone(person, "Europe/London")
    with scratch_database("schedules_replicas") as url:
        clock = FakeClock(tmp_path / "clock", dt.datetime.now(dt.UTC))
        bots = [
            BotProcess(
                slack=slack,
                data_dir=data_dir_with(tmp_path / f"data-{name}", demo_file),
                script=write_script(tmp_path / f"{name}.jsonl", [sql_reply(REGIONS, "Counts.")]),
                env={
                    "QUERYBOT_STATE_URL": url,
                    "QUERYBOT_SCHEDULES": "true",
                    "QUERYBOT_REPLICA_ID": f"replica-{name}",
                },
            )
            for name in ("a", "b")
        ]
        with bots[0]:
            thread = flow.ask(bots[0], "how many regions?", user=ALICE)
            card = flow.proposal(slack, thread)
            flow.click(bots[0], card, approve=True, user=BOB)
            flow.result(slack, thread)
        store = PostgresStore(url)
        record = store.proposal(flow.proposal_id(card))
        assert record is not None
        made = store.schedules.add(
            Schedule(
                owner=ALICE,
                approved_by=BOB,
                proposal_id=record.proposal_id,
                thread_id=record.thread_id,
                question=record.proposal.question,
                sql=record.proposal.sql,
                sql_sha256=record.sql_sha256,
                run_as="",
                post_channel=thread.channel,
                post_thread_ts=thread.ts,
                cron="*/2 * * * * *",  # every two seconds: DBOS reads a sixth field as seconds
                time_zone="Europe/London",
            )
        )
        start = dt.datetime(2027, 1, 15, 9, tzinfo=dt.UTC)
        rows(url, "UPDATE bot_schedules SET created_at = %s", start.timestamp())
        clock.set(start)
        for bot in bots:
            bot.extra_env.update(clock.env({}))
            bot.start()
        try:
            slack.wait_for(lambda: len(posts(slack)) >= 8, timeout=60, what="eight runs")
        finally:
            for bot in bots:
                bot.stop()
        done = [
            r
            for r in rows(url, "SELECT due_at, status, instance_id FROM bot_schedule_runs")
            if r["status"] == POSTED
        ]
        store.close()
    due = Counter(m.metadata["event_payload"]["due_at"] for m in posts(slack) if m.metadata)
    assert max(due.values()) == 1, f"a run posted twice: {due}"
    times = sorted(dt.datetime.fromisoformat(d) for d in due)
    # every two seconds from the first to the last, none missed (the first may be a catch-up)
    steps = {(b - a).total_seconds() for a, b in itertools.pairwise(times[1:])}
    assert steps == {2.0}, sorted(times)
    assert len(done) == sum(due.values())
    assert made.schedule_id and len({r["instance_id"] for r in done}) == 2, "both replicas ran some"

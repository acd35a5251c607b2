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

from bot.schedules.records import POSTED
from tests.e2e.schedule_flow import Replicas, posts
from tests.support.clock import require
from tests.support.pgdb import rows, scratch_database
from tests.support.standin import SlackStandin


def ran_by(url: str) -> set[object]:
    """The processes that have posted runs."""
    found = rows(
        url, "SELECT DISTINCT instance_id FROM bot_schedule_runs WHERE status = %s", POSTED
    )
    return {r["instance_id"] for r in found}


def test_two_replicas_run_each_scheduled_run_once(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    require()
    with scratch_database("schedules_replicas") as url:
        replicas = Replicas(slack, demo_file, tmp_path, url)
        start = dt.datetime(2027, 1, 15, 9, tzinfo=dt.UTC)
        # every two seconds: DBOS reads a sixth field, first, as seconds
        [made] = replicas.schedule(1, "*/2 * * * * *", start)
        replicas.start_at(start)
        try:
            # eight runs at least, and as many as it takes for both replicas to have run some
            # (which replica takes a run is DBOS's choice: one may start the first few alone)
            slack.wait_for(
                lambda: len(posts(slack)) >= 8 and len(ran_by(url)) == 2,
                timeout=90,
                what="eight runs, by both replicas",
            )
        finally:
            replicas.stop()
        done = [
            r
            for r in rows(url, "SELECT due_at, status, instance_id FROM bot_schedule_runs")
            if r["status"] == POSTED
        ]
    due = Counter(m.metadata["event_payload"]["due_at"] for m in posts(slack) if m.metadata)
    assert max(due.values()) == 1, f"a run posted twice: {due}"
    times = sorted(dt.datetime.fromisoformat(d) for d in due)
    # every two seconds from the first to the last, none missed (the first may be a catch-up)
    steps = {(b - a).total_seconds() for a, b in itertools.pairwise(times[1:])}
    assert steps == {2.0}, sorted(times)
    assert len(done) == sum(due.values())
    assert made.schedule_id and len({r["instance_id"] for r in done}) == 2, "both replicas ran some"

"""A thousand schedules due in the same minute, across two replicas: runs done, duplicates,
missed, and how late each run's post was.

Two real `querybot run --http` processes share a scratch PostgreSQL database (their state and
DBOS's tables), the Slack stand-in and a fake wall clock (libfaketime, tests/support/clock.py)
set just before 09:00 Europe/London. One approved answer ("how many regions?") is asked through
the first replica; then N schedules of it, all `0 9 * * *`, are written to the store and both
replicas started. Lateness is the time from the due minute to the run's end (its post in the
stand-in), read from the runs' rows (`finished_at`, the replicas' fake clock) in seconds.

    uv run python -m bench.schedule_report --schedules 1000
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.schedules.records import POSTED, Schedule
from bot.schedules.runner import EVENT_TYPE
from bot.store.postgres import PostgresStore
from connectors.demo.build import ensure_demo
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.clock import FakeClock, require
from tests.support.demo_day import TODAY
from tests.support.pgdb import rows, scratch_database
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"
DUE = dt.datetime(2027, 1, 15, 9, tzinfo=ZoneInfo("Europe/London"))


def run(count: int, timeout_s: float) -> dict[str, object]:
    require()
    with (
        tempfile.TemporaryDirectory() as tmp_dir,
        SlackStandin() as slack,
        scratch_database("bench_schedules") as url,
    ):
        tmp = Path(tmp_dir)
        demo = ensure_demo(tmp / "demo", today=TODAY)
        for person in (ALICE, BOB):
            slack.set_time_zone(person, "Europe/London")
        clock = FakeClock(tmp / "clock", dt.datetime.now(dt.UTC))
        bots = [
            BotProcess(
                slack=slack,
                data_dir=data_dir_with(tmp / f"data-{name}", demo),
                script=write_script(tmp / f"{name}.jsonl", [sql_reply(REGIONS, "Counts.")]),
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
        for _ in range(count):
            store.schedules.add(
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
                    cron="0 9 * * *",
                    time_zone="Europe/London",
                )
            )
        store.close()
        rows(
            url,
            "UPDATE bot_schedules SET created_at = %s",
            (DUE - dt.timedelta(hours=1)).timestamp(),
        )
        clock.set(DUE - dt.timedelta(seconds=40))
        started = time.monotonic()
        for bot in bots:
            bot.extra_env.update(clock.env({}))
            bot.start(timeout=120)
        try:
            slack.wait_for(
                lambda: len(_posts(slack)) >= count or None, timeout=timeout_s, what="every run"
            )
        except AssertionError:
            pass  # the figures say how many were missed
        finally:
            wall_s = time.monotonic() - started
            for bot in bots:
                bot.stop()
        done = rows(
            url,
            "SELECT schedule_id, due_at, status, instance_id, finished_at FROM bot_schedule_runs",
        )
    posted = [r for r in done if r["status"] == POSTED]
    per_run = Counter(
        (m.metadata or {}).get("event_payload", {}).get("schedule_id") for m in _posts(slack)
    )
    late = sorted(float(r["finished_at"]) - DUE.timestamp() for r in posted)  # type: ignore[arg-type]
    return {
        "schedules": count,
        "runs posted": len(posted),
        "duplicates": sum(n - 1 for n in per_run.values() if n > 1),
        "missed": count - len(per_run),
        "by replica": dict(Counter(str(r["instance_id"])[:8] for r in posted)),
        "lateness p50 s": round(statistics.median(late), 2) if late else None,
        "lateness p95 s": round(late[int(0.95 * (len(late) - 1))], 2) if late else None,
        "lateness max s": round(late[-1], 2) if late else None,
        "wall s (both starts included)": round(wall_s, 1),
    }


def _posts(slack: SlackStandin) -> list[Posted]:
    return [
        m for m in slack.messages.values() if (m.metadata or {}).get("event_type") == EVENT_TYPE
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the runs")
    args = parser.parse_args()
    for key, value in run(args.schedules, args.timeout).items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()

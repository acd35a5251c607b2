"""Shared by the end-to-end schedule tests: an answer asked and approved at the real time in a
bot whose clock is then set by libfaketime (tests/support/clock.py), the schedules written to its
store while it is stopped, and the scheduled runs' posts as the stand-in holds them."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.schedules.records import Schedule
from bot.schedules.runner import EVENT_TYPE
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.clock import FakeClock, require
from tests.support.pgdb import rows as pg_rows
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"
LONDON = ZoneInfo("Europe/London")


def posts(slack: SlackStandin) -> list[Posted]:
    """The scheduled runs' posts, in the order posted."""
    found = [m for m in slack.messages.values() if (m.metadata or {}).get("event_type")]
    return sorted(
        (m for m in found if m.metadata and m.metadata["event_type"] == EVENT_TYPE),
        key=lambda m: m.ts,
    )


class Scheduled:
    """A bot with one approved answer, and the schedule tests make of it."""

    def __init__(self, slack: SlackStandin, demo_file: Path, tmp_path: Path) -> None:
        for person in (ALICE, BOB):
            slack.set_time_zone(person, "Europe/London")
        self.slack = slack
        self.clock = FakeClock(tmp_path / "clock", dt.datetime.now(dt.UTC))
        script = write_script(tmp_path / "script.jsonl", [sql_reply(REGIONS, "Counts.")])
        data = data_dir_with(tmp_path / "data", demo_file)
        self.bot = BotProcess(
            slack=slack, data_dir=data, script=script, env={"QUERYBOT_SCHEDULES": "true"}
        )
        with self.bot:
            self.thread = flow.ask(self.bot, "how many regions?", user=ALICE)
            card = flow.proposal(slack, self.thread)
            flow.click(self.bot, card, approve=True, user=BOB)
            flow.result(slack, self.thread)
            self.proposal_id = flow.proposal_id(card)

    def store(self) -> SqliteStore:
        return SqliteStore(self.bot.data_dir / "state.sqlite")

    def schedule(self, made_at: dt.datetime, **changes: object) -> Schedule:
        """Write a schedule of the answer to the bot's store (the bot stopped), as made at
        `made_at`."""
        store = self.store()
        try:
            record = store.proposal(self.proposal_id)
            assert record is not None and record.decided_by == BOB
            values: dict[str, object] = {
                "owner": ALICE,
                "approved_by": BOB,
                "proposal_id": record.proposal_id,
                "thread_id": record.thread_id,
                "question": record.proposal.question,
                "sql": record.proposal.sql,
                "sql_sha256": record.sql_sha256,
                "run_as": "",
                "post_channel": self.thread.channel,
                "post_thread_ts": self.thread.ts,
                "cron": "0 9 * * *",
                "time_zone": "Europe/London",
                **changes,
            }
            made = store.schedules.add(Schedule(**values))  # type: ignore[arg-type]
        finally:
            store.close()
        self._sql("UPDATE bot_schedules SET created_at = ?", made_at.timestamp())
        return made

    def _sql(self, statement: str, *params: object) -> None:
        with sqlite3.connect(self.bot.data_dir / "state.sqlite") as conn:
            conn.execute(statement, params)

    def start_at(self, when: dt.datetime) -> None:
        self.clock.set(when)
        self.bot.extra_env.update(self.clock.env({}))
        self.bot.start()

    def wait_posts(self, count: int, timeout: float = 45) -> list[Posted]:
        return self.slack.wait_for(
            lambda: (found := posts(self.slack)) and len(found) >= count and found,
            timeout=timeout,
            what=f"{count} scheduled posts",
        )


@pytest.fixture
def scheduled(slack: SlackStandin, demo_file: Path, tmp_path: Path) -> Scheduled:
    """A bot with an approved answer, stopped; without libfaketime the test cannot run."""
    require()
    return Scheduled(slack, demo_file, tmp_path)


class Replicas:
    """Two replicas (`querybot run`) sharing PostgreSQL state at `url` (the store and DBOS's
    tables) and a fake clock, with one answer asked and approved through the first: the tests'
    and the benchmark's (bench/schedule_report.py) setting for schedules on several replicas."""

    def __init__(self, slack: SlackStandin, demo_file: Path, tmp: Path, url: str) -> None:
        for person in (ALICE, BOB):
            slack.set_time_zone(person, "Europe/London")
        self.slack, self.url = slack, url
        self.clock = FakeClock(tmp / "clock", dt.datetime.now(dt.UTC))
        self.bots = [
            BotProcess(
                slack=slack,
                data_dir=data_dir_with(tmp / f"data-{name}", demo_file),
                script=write_script(tmp / f"{name}.jsonl", [sql_reply(REGIONS, "Counts.")]),
                env={
                    "QUERYBOT_STATE_URL": url,
                    "QUERYBOT_SCHEDULES": "true",
                    "QUERYBOT_REPLICA_ID": f"replica-{name}",
                },
            )
            for name in ("a", "b")
        ]
        with self.bots[0]:
            self.thread = flow.ask(self.bots[0], "how many regions?", user=ALICE)
            card = flow.proposal(slack, self.thread)
            flow.click(self.bots[0], card, approve=True, user=BOB)
            flow.result(slack, self.thread)
        self.proposal_id = flow.proposal_id(card)

    def schedule(self, count: int, cron: str, made_at: dt.datetime) -> list[Schedule]:
        """`count` schedules of the answer, posting in its thread, made at `made_at`."""
        store = PostgresStore(self.url)
        try:
            record = store.proposal(self.proposal_id)
            assert record is not None
            made = [
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
                        post_channel=self.thread.channel,
                        post_thread_ts=self.thread.ts,
                        cron=cron,
                        time_zone="Europe/London",
                    )
                )
                for _ in range(count)
            ]
        finally:
            store.close()
        pg_rows(self.url, "UPDATE bot_schedules SET created_at = %s", made_at.timestamp())
        return made

    def start_at(self, when: dt.datetime, timeout: float = 60) -> None:
        self.clock.set(when)
        for bot in self.bots:
            bot.extra_env.update(self.clock.env({}))
            bot.start(timeout=timeout)

    def stop(self) -> None:
        for bot in self.bots:
            bot.stop()

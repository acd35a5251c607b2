"""Shared by the end-to-end schedule tests: an answer asked and approved at the real time in a
bot whose clock is then set by libfaketime (tests/support/clock.py), the schedules written to its
store while it is stopped, the scheduled runs' posts as the stand-in holds them, and the bot's
own log lines with the (fake) time it wrote them.

The `scheduled` fixture runs each test on both state back ends (`State`): SQLite in the bot's
data directory, and a scratch PostgreSQL database (QUERYBOT_STATE_URL, where DBOS keeps its
tables too) dropped after the test. `Replicas` sets up two replicas sharing PostgreSQL state.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.schedules.records import Schedule
from bot.schedules.runner import EVENT_TYPE
from bot.store.base import Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.clock import FakeClock, require
from tests.support.pgdb import rows as pg_rows
from tests.support.pgdb import scratch_database
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"
LONDON = ZoneInfo("Europe/London")
#: How long before a run's time the bot is started when the run must come at its time (not as
#: a catch-up): longer than the bot takes to start under libfaketime (up to 34 s seen on a loaded
#: two-core machine, against 3 s on the real clock), since DBOS's scheduler waits for the next
#: run from the moment it starts (tests/support/clock.py): the clock cannot be moved on after.
LEAD = dt.timedelta(seconds=60)
#: A line of the bot's own log: the time (its fake clock, local) and the rest.
_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (.*)$", re.MULTILINE)


def posts(slack: SlackStandin) -> list[Posted]:
    """The scheduled runs' posts, in the order posted."""
    found = [m for m in slack.messages.values() if (m.metadata or {}).get("event_type")]
    return sorted(
        (m for m in found if m.metadata and m.metadata["event_type"] == EVENT_TYPE),
        key=lambda m: m.ts,
    )


class State:
    """Where the bot keeps its state, the one place that tells the back ends apart: SQLite in
    its data directory (`url` None), or the PostgreSQL database at `url`."""

    def __init__(self, data_dir: Path, url: str | None = None) -> None:
        self.data_dir, self.url = data_dir, url

    def env(self) -> dict[str, str]:
        """The bot's settings for it. On PostgreSQL a run left by a killed process is taken
        over once its lock has stayed free for half of QUERYBOT_RECOVER_EVERY_S: 1 s here."""
        if not self.url:
            return {}
        return {"QUERYBOT_STATE_URL": self.url, "QUERYBOT_RECOVER_EVERY_S": "2"}

    def store(self) -> Store:
        """The bot's store, opened by the test (close it)."""
        if self.url:
            return PostgresStore(self.url)
        return SqliteStore(self.data_dir / "state.sqlite")

    def execute(self, statement: str, *params: object) -> None:
        """One statement in the store's database, written with `?` placeholders."""
        if self.url:
            pg_rows(self.url, statement.replace("?", "%s"), *params)
            return
        with closing(sqlite3.connect(self.data_dir / "state.sqlite")) as conn, conn:
            conn.execute(statement, params)


@dataclass(frozen=True)
class Line:
    """One line of the bot's own log."""

    #: When the bot wrote it, by its (fake) clock, naive in the bot's local time.
    at: dt.datetime
    text: str


class Scheduled:
    """A bot with one approved answer, its state in SQLite or, given `url`, in PostgreSQL
    (`state`), and the schedule tests make of it."""

    def __init__(
        self, slack: SlackStandin, demo_file: Path, tmp_path: Path, url: str | None = None
    ) -> None:
        for person in (ALICE, BOB):
            slack.set_time_zone(person, "Europe/London")
        self.slack = slack
        self.clock = FakeClock(tmp_path / "clock", dt.datetime.now(dt.UTC))
        script = write_script(tmp_path / "script.jsonl", [sql_reply(REGIONS, "Counts.")])
        data = data_dir_with(tmp_path / "data", demo_file)
        #: The bot's copy of the demo warehouse (change it only while the bot is stopped).
        self.warehouse = data / demo_file.name
        self.state = State(data, url)
        self.bot = BotProcess(
            slack=slack,
            data_dir=data,
            script=script,
            env={"QUERYBOT_SCHEDULES": "true", **self.state.env()},
        )
        with self.bot:
            self.thread = flow.ask(self.bot, "how many regions?", user=ALICE)
            card = flow.proposal(slack, self.thread)
            flow.click(self.bot, card, approve=True, user=BOB)
            flow.result(slack, self.thread)
            self.proposal_id = flow.proposal_id(card)

    def store(self) -> Store:
        return self.state.store()

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
        self.state.execute("UPDATE bot_schedules SET created_at = ?", made_at.timestamp())
        return made

    def start_at(self, when: dt.datetime) -> None:
        self.clock.set(when)
        self.bot.extra_env.update(self.clock.env({}))
        self.bot.start()

    def start_before(self, due: dt.datetime) -> None:
        """Start the bot `LEAD` before `due`, so the run due then comes at its time."""
        self.start_at(due - LEAD)

    def wait_posts(self, count: int, timeout: float = 90) -> list[Posted]:
        return self.slack.wait_for(
            lambda: found if len(found := posts(self.slack)) >= count else None,
            timeout=timeout,
            what=f"{count} scheduled posts",
        )

    def mark(self) -> int:
        """Where the bot's log ends now: `lines(after=...)` reads only what comes next."""
        return len(self.bot.log())

    def lines(self, pattern: str, *, after: int = 0) -> list[Line]:
        """The bot's own log lines (after `mark()` `after`) in which `pattern` is found."""
        found = _LINE.finditer(self.bot.log()[after:])
        return [
            Line(dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f"), m[2])
            for m in found
            if re.search(pattern, m[2])
        ]

    def wait_lines(
        self, pattern: str, count: int = 1, *, after: int = 0, timeout: float = 60
    ) -> list[Line]:
        """Wait until the bot has logged `count` lines in which `pattern` is found."""
        deadline = time.monotonic() + timeout
        while len(found := self.lines(pattern, after=after)) < count:
            if time.monotonic() > deadline:
                tail = self.bot.log()[-4000:]
                raise AssertionError(f"{len(found)} of {count} lines {pattern!r}:\n{tail}")
            time.sleep(0.1)
        return found


@pytest.fixture(params=["sqlite", "postgres"])
def scheduled(
    request: pytest.FixtureRequest, slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> Iterator[Scheduled]:
    """A bot with an approved answer, stopped, its state in SQLite or in a scratch PostgreSQL
    database (dropped after the bot stops); without libfaketime the test cannot run."""
    require()
    with ExitStack() as stack:
        url = None
        if request.param == "postgres":
            url = stack.enter_context(scratch_database("schedules"))
        made = Scheduled(slack, demo_file, tmp_path, url)
        try:
            yield made
        finally:
            if made.bot.running:
                made.bot.stop()
            print(made.bot.log()[-6000:])  # shown when the test failed


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

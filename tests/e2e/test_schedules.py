"""End to end, scheduled questions through the real bot process, DBOS and the Slack stand-in,
with the bot's wall clock set by libfaketime (tests/support/clock.py): a schedule posts on time
(and at 09:00 local across a daylight-saving change), with the result, the SQL's hash and who
approved it; a bot killed while posting, or just after, posts once after its restart; runs
missed while it was down are caught up once; an approver who left, or SQL the gate now refuses,
pauses the schedule with a message to its owner; an alert posts when it fires and then stays
quiet. The answer is asked and approved at the real time (signed requests), the bot stopped, the
schedule written to its store, the clock set just before the run, and the bot started again.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from agent.memory.audit import sql_sha256
from bot.schedules.records import PAUSED, POSTED, Alert, Schedule
from bot.schedules.runner import EVENT_TYPE
from bot.store.sqlite import SqliteStore
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.clock import FakeClock, require
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"
LONDON = ZoneInfo("Europe/London")


@pytest.fixture(autouse=True)
def _libfaketime() -> None:
    require()


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
    return Scheduled(slack, demo_file, tmp_path)


def test_a_schedule_posts_on_time_with_its_evidence(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    scheduled.start_at(dt.datetime(2027, 1, 15, 8, 59, 40, tzinfo=LONDON))
    try:
        [post] = scheduled.wait_posts(1)
        assert "Caught up" not in post.all_text(), "run at its time, not caught up later"
        assert post.channel == scheduled.thread.channel and post.thread_ts == scheduled.thread.ts
        text = post.all_text()
        assert "Regions: *5*" in text or "5" in text
        assert made.sql_sha256[:12] in text and f"<@{BOB}>" in text
        assert "every day at 09:00 (Europe/London)" in text
        assert post.metadata == {
            "event_type": EVENT_TYPE,
            "event_payload": {
                "schedule_id": made.schedule_id,
                "due_at": "2027-01-15T09:00:00+00:00",
            },
        }
    finally:
        scheduled.bot.stop()
    store = scheduled.store()
    run = store.schedules.run(made.schedule_id, "2027-01-15T09:00:00+00:00")
    store.close()
    assert run is not None and (run.status, run.message_ts) == (POSTED, post.ts)


def test_nine_oclock_stays_nine_oclock_on_the_day_the_clocks_change(
    scheduled: Scheduled,
) -> None:
    # the UK moves to BST at 01:00 UTC on 2027-03-28: 09:00 local is 08:00 UTC that day
    made = scheduled.schedule(dt.datetime(2027, 3, 27, 12, tzinfo=dt.UTC))
    scheduled.start_at(dt.datetime(2027, 3, 28, 7, 59, 40, tzinfo=dt.UTC))
    try:
        [post] = scheduled.wait_posts(1)
    finally:
        scheduled.bot.stop()
    assert post.metadata is not None
    assert post.metadata["event_payload"]["due_at"] == "2027-03-28T08:00:00+00:00"
    assert made.schedule_id == post.metadata["event_payload"]["schedule_id"]


def test_killed_while_posting_then_restarted_posts_once(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    # Slack holds the run's post (HTTP 429, retry after ten minutes): the bot is mid-run
    scheduled.slack.rate_limit("chat.postMessage", retry_after=600)
    scheduled.start_at(dt.datetime(2027, 1, 15, 8, 59, 40, tzinfo=LONDON))
    scheduled.slack.wait_for(
        lambda: [c for c in scheduled.slack.calls_to("chat.postMessage") if not c.ok],
        timeout=45,
        what="the held post",
    )
    scheduled.bot.kill()
    assert posts(scheduled.slack) == []
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 0, 30, tzinfo=LONDON))
    try:
        [post] = scheduled.wait_posts(1)
        scheduled.bot.wait_log(f"Schedule {made.schedule_id} run .* posted")
        # and killed just after that post: still one post after the next restart
        scheduled.bot.kill()
        scheduled.start_at(dt.datetime(2027, 1, 15, 9, 1, tzinfo=LONDON))
        scheduled.bot.wait_log("Schedules started: 1")
        scheduled.bot.wait_log("querybot listening")
    finally:
        scheduled.bot.stop()
    assert posts(scheduled.slack) == [post]


def test_runs_missed_while_down_are_caught_up_once(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    scheduled.start_at(dt.datetime(2027, 1, 15, 8, 59, 40, tzinfo=LONDON))
    try:
        scheduled.wait_posts(1)
    finally:
        scheduled.bot.stop()
    # down for three days: the 16th, 17th and 18th at 09:00 were missed
    scheduled.start_at(dt.datetime(2027, 1, 18, 10, tzinfo=LONDON))
    try:
        _, caught_up = scheduled.wait_posts(2)
        scheduled.bot.wait_log(f"Schedule {made.schedule_id}: catching up 3 missed runs")
    finally:
        scheduled.bot.stop()
    assert caught_up.metadata is not None
    assert caught_up.metadata["event_payload"]["due_at"] == "2027-01-18T09:00:00+00:00"
    assert "Caught up after downtime: 3 scheduled runs" in caught_up.all_text()
    assert len(posts(scheduled.slack)) == 2, "one post for the three missed runs"


def test_an_approver_who_left_pauses_the_schedule_with_a_message(
    scheduled: Scheduled,
) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    scheduled.slack.deactivate(BOB)
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 0, 30, tzinfo=LONDON))  # caught up at start
    try:
        scheduled.bot.wait_log(f"Schedule {made.schedule_id} paused", timeout=45)
    finally:
        scheduled.bot.stop()
    told = [m for m in scheduled.slack.messages.values() if "is paused" in m.all_text()]
    assert (
        told
        and f"<@{BOB}>" in told[0].all_text()
        and "no longer in the workspace" in (told[0].all_text())
    )
    assert told[0].channel.startswith("D"), "told to its owner, in their direct messages"
    assert posts(scheduled.slack) == []
    store = scheduled.store()
    paused = store.schedules.get(made.schedule_id)
    store.close()
    assert paused is not None and paused.status == PAUSED


def test_sql_the_gate_now_refuses_pauses_the_schedule(scheduled: Scheduled) -> None:
    gone = "SELECT\n  region_motto\nFROM demo.main.regions\nLIMIT 1000"  # no such column
    made = scheduled.schedule(
        dt.datetime(2027, 1, 15, 8, tzinfo=LONDON), sql=gone, sql_sha256=sql_sha256(gone)
    )
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 0, 30, tzinfo=LONDON))  # caught up at start
    try:
        scheduled.bot.wait_log(f"Schedule {made.schedule_id} paused: the SQL gate now refuses")
    finally:
        scheduled.bot.stop()
    told = [m for m in scheduled.slack.messages.values() if "is paused" in m.all_text()]
    assert told and "region_motto" in told[0].all_text()
    assert posts(scheduled.slack) == []


def test_an_alert_posts_when_it_fires_then_stays_quiet(scheduled: Scheduled) -> None:
    # every three seconds (DBOS reads a sixth field, first, as seconds): 5 regions > 3
    made = scheduled.schedule(
        dt.datetime(2027, 1, 15, 8, tzinfo=LONDON),
        cron="*/3 * * * * *",
        alert=Alert("above", 3),
    )
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, tzinfo=LONDON))
    try:
        [fired] = scheduled.wait_posts(1)
        for _ in range(2):  # two more runs, both quiet
            scheduled.bot.wait_log(rf"Schedule {made.schedule_id} run \S+ quiet", timeout=20)
    finally:
        scheduled.bot.stop()
    assert "Alert: 5 is above 3." in fired.all_text()
    assert posts(scheduled.slack) == [fired]

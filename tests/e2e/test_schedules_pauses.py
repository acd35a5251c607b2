"""End to end, what stops a schedule or keeps it quiet, through the real bot process, DBOS and
the Slack stand-in under a fake clock (as tests/e2e/test_schedules.py, whose `Scheduled` sets
each up): an approver who left, or SQL the gate now refuses, pauses the schedule with a message
to its owner; an alert posts when it fires, then stays quiet while it still fires. Each run here
is the catch-up the bot makes at start for the 09:00 it started after.
"""

from __future__ import annotations

import datetime as dt

from agent.memory.audit import sql_sha256
from bot.schedules.records import PAUSED, Alert
from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, Scheduled, posts
from tests.support.slack_payloads import BOB

scheduled = schedule_flow.scheduled


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

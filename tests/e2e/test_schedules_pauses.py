"""End to end, what pauses a schedule between runs, through the real bot process, DBOS and the
Slack stand-in under a fake clock, on both state back ends (SQLite, PostgreSQL; `Scheduled` in
tests/e2e/schedule_flow.py sets each up): an approver whose access was revoked (gone from the
workspace), or SQL the gate now refuses (a column gone), pauses the schedule, with the reason,
in a message to its owner, and nothing is posted. Each run here is the catch-up the bot makes at
start for the 09:00 it started after. Failed tries pausing one: test_schedules_failures.py.
"""

from __future__ import annotations

import datetime as dt

from agent.memory.audit import sql_sha256
from bot.schedules.records import PAUSED
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
        scheduled.bot.wait_log(
            f"Schedule {made.schedule_id} paused: the SQL gate now refuses", timeout=45
        )
    finally:
        scheduled.bot.stop()
    told = [m for m in scheduled.slack.messages.values() if "is paused" in m.all_text()]
    assert told and "region_motto" in told[0].all_text()
    assert posts(scheduled.slack) == []
    store = scheduled.store()
    paused = store.schedules.get(made.schedule_id)
    store.close()
    assert paused is not None and paused.status == PAUSED
    assert "the SQL gate now refuses" in paused.paused_reason

"""End to end, scheduled questions through the real bot process, DBOS and the Slack stand-in,
with the bot's wall clock set by libfaketime (tests/support/clock.py), each test on both state
back ends (SQLite, PostgreSQL: tests/e2e/schedule_flow.py): a schedule posts on time (and at
09:00 local across a daylight-saving change), with the result, the SQL's hash and who approved
it; a bot killed (kill -9) while posting, or just after, posts once after its restart; runs
missed while it was down are caught up once. The answer is asked and approved at the real time
(signed requests), the bot stopped, the schedule written to its store, the clock set shortly
before the run, and the bot started again. What pauses a schedule: test_schedules_pauses.py;
alerts: test_schedules_alerts.py; failed tries: test_schedules_failures.py.
"""

from __future__ import annotations

import datetime as dt

from bot.schedules.records import POSTED
from bot.schedules.runner import EVENT_TYPE
from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, Scheduled, posts
from tests.support.slack_payloads import BOB

scheduled = schedule_flow.scheduled


def test_a_schedule_posts_on_time_with_its_evidence(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    scheduled.start_before(dt.datetime(2027, 1, 15, 9, tzinfo=LONDON))
    try:
        [post] = scheduled.wait_posts(1)
        assert "Caught up" not in post.all_text(), "run at its time (did the bot start late?)"
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
    scheduled.start_before(dt.datetime(2027, 3, 28, 8, tzinfo=dt.UTC))
    try:
        [post] = scheduled.wait_posts(1)
    finally:
        scheduled.bot.stop()
    assert "Caught up" not in post.all_text(), "run at its time (did the bot start late?)"
    assert post.metadata is not None
    assert post.metadata["event_payload"]["due_at"] == "2027-03-28T08:00:00+00:00"
    assert made.schedule_id == post.metadata["event_payload"]["schedule_id"]


def test_killed_while_posting_then_restarted_posts_once(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    # Slack holds the run's post (HTTP 429, retry after ten minutes): the bot is mid-run
    scheduled.slack.rate_limit("chat.postMessage", retry_after=600)
    scheduled.start_at(dt.datetime(2027, 1, 15, 8, 59, 50, tzinfo=LONDON))
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
    scheduled.start_at(dt.datetime(2027, 1, 15, 8, 59, 50, tzinfo=LONDON))
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

"""End to end, scheduled questions through the real bot process, DBOS and the Slack stand-in,
with the bot's wall clock set by libfaketime (tests/support/clock.py), each test on both state
back ends (SQLite, PostgreSQL: tests/e2e/schedule_flow.py): a bot killed (kill -9) while
posting, or just after, posts once after its restart; runs missed while it was down are caught
up once. The answer is asked and approved at the real time
(signed requests), the bot stopped, the schedule written to its store, the clock set shortly
before the run, and the bot started again. What pauses a schedule: test_schedules_pauses.py;
alerts: test_schedules_alerts.py; failed tries: test_schedules_failures.py; runs at their
time: test_schedules_on_time.py.
"""

from __future__ import annotations

import datetime as dt

from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, Scheduled, posts

scheduled = schedule_flow.scheduled


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

"""End to end, a schedule posts at its time, through the real bot process, DBOS and the Slack
stand-in under a libfaketime clock, on SQLite and PostgreSQL state (tests/e2e/schedule_flow.py):
with the result, the SQL's hash and who approved it, and at 09:00 local across a daylight-saving
change. The bot starts `LEAD` before the run, so the run comes at its time, not as a catch-up.
Apart from tests/e2e/test_schedules.py so that the two long waits run beside its tests.
"""

from __future__ import annotations

import datetime as dt

from bot.schedules.records import POSTED
from bot.schedules.runner import EVENT_TYPE
from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, Scheduled
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

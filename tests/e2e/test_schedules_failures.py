"""End to end, a scheduled run whose tries fail, through the real bot process, DBOS and the
Slack stand-in under a fake clock, on both state back ends (SQLite, PostgreSQL; `Scheduled` in
tests/e2e/schedule_flow.py sets it up). Slack answers the run's post with HTTP 500: the runner
counts the failed try, DBOS tries the run's step again with backoff (bot/schedules/engine.py:
5 s, then 10 s later), and after QUERYBOT_SCHEDULE_MAX_FAILURES (3) failed tries in a row the
schedule pauses and its owner is told. A run that fails once is posted, once, by a
later try. Each run here is the catch-up the bot makes at start for the 09:00 it started after.
"""

from __future__ import annotations

import datetime as dt
import itertools

from bot.schedules.records import ACTIVE, FAILED, PAUSED, POSTED
from tests.e2e import schedule_flow
from tests.e2e.schedule_flow import LONDON, Scheduled, posts
from tests.support.slack_payloads import ALICE

scheduled = schedule_flow.scheduled

#: HTTP calls one try of a post makes when Slack answers 500: the bot's WebClient sends it again
#: twice itself (ServerErrorRetryHandler(max_retry_count=2), bot/app.py) before the runner sees
#: the failure.
CALLS_PER_TRY = 3
#: DBOS's wait before the second try, and before the third (interval 5 s, backoff 2.0).
WAITS = (dt.timedelta(seconds=5), dt.timedelta(seconds=10))


def test_a_post_that_fails_once_is_tried_again_later_and_posted_once(
    scheduled: Scheduled,
) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    scheduled.slack.server_error("chat.postMessage", times=CALLS_PER_TRY)  # the first try's
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 0, 30, tzinfo=LONDON))  # caught up at start
    try:
        [post] = scheduled.wait_posts(1)
        [failed] = scheduled.lines(rf"Schedule {made.schedule_id} run \S+ failed \(1\)")
        [posted] = scheduled.wait_lines(rf"Schedule {made.schedule_id} run \S+ posted")
    finally:
        scheduled.bot.stop()
    assert "Slack refused the post (fatal_error)" in failed.text
    assert posted.at - failed.at >= WAITS[0], "tried again after DBOS's interval, not at once"
    refused = [c for c in scheduled.slack.calls_to("chat.postMessage") if c.status == 500]
    assert len(refused) == CALLS_PER_TRY
    assert posts(scheduled.slack) == [post], "posted once"
    assert not scheduled.lines(r"failed \(2\)|paused")
    store = scheduled.store()
    run = store.schedules.run(made.schedule_id, "2027-01-15T09:00:00+00:00")
    after = store.schedules.get(made.schedule_id)
    store.close()
    assert run is not None and (run.status, run.message_ts) == (POSTED, post.ts)
    assert after is not None and (after.status, after.failures) == (ACTIVE, 0), "count reset"


def test_a_run_whose_every_try_fails_pauses_and_tells_the_owner(scheduled: Scheduled) -> None:
    made = scheduled.schedule(dt.datetime(2027, 1, 15, 8, tzinfo=LONDON))
    # all three tries' posts; the message telling the owner, after them, goes through
    scheduled.slack.server_error("chat.postMessage", times=3 * CALLS_PER_TRY)
    scheduled.start_at(dt.datetime(2027, 1, 15, 9, 0, 30, tzinfo=LONDON))  # caught up at start
    try:
        scheduled.bot.wait_log(f"Schedule {made.schedule_id} paused", timeout=90)
        tries = scheduled.wait_lines(rf"Schedule {made.schedule_id} run \S+ failed \(\d\)", 3)
    finally:
        scheduled.bot.stop()
    assert [t.text.partition("failed ")[2][:3] for t in tries] == ["(1)", "(2)", "(3)"]
    # each try after the one before by at least DBOS's wait, the second wait longer (backoff)
    for (before, then), wait in zip(itertools.pairwise(tries), WAITS, strict=True):
        assert then.at - before.at >= wait, (before, then)
    told = [m for m in scheduled.slack.messages.values() if "is paused" in m.all_text()]
    assert len(told) == 1 and told[0].channel.startswith("D"), "told its owner, directly"
    text = told[0].all_text()
    assert "its last 3 tries failed" in text and "Slack refused the post" in text, text
    assert f"<@{ALICE}>" in text, "who can resume it"
    assert posts(scheduled.slack) == [], "nothing posted as a scheduled run"
    store = scheduled.store()
    paused = store.schedules.get(made.schedule_id)
    run = store.schedules.run(made.schedule_id, "2027-01-15T09:00:00+00:00")
    store.close()
    assert paused is not None and paused.status == PAUSED
    assert "tries failed" in paused.paused_reason
    assert run is not None and run.status == FAILED

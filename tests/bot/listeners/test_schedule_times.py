"""A schedule's "Edit time" through the listeners, against the Slack stand-in, with the real
`Schedules` and its engine (as tests/bot/listeners/test_schedules.py, whose fixtures it uses):
the time modal from a person's list and from the Home tab, for the owner only, a paused schedule
kept paused, and DBOS's schedule made again."""

from __future__ import annotations

import json

import pytest
from dbos import DBOS

from bot.blocks.schedule_modal import TIME_VIEW, WHEN_BLOCK
from bot.blocks.schedules import EDIT_TIME, PAUSE
from bot.schedules.records import ACTIVE, PAUSED
from bot.schedules.service import NOT_YOURS
from tests.bot.listeners.listener_app import Bot
from tests.bot.listeners.test_feedback import as_posted
from tests.bot.listeners.test_schedules import (
    CARA,
    answered,
    bot,
    home_click,
    only_schedule,
    submit,
)
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE

pytestmark = pytest.mark.slow
__all__ = ["bot"]


def test_edit_time_changes_when_it_runs_for_its_owner_only(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("schedule this every Monday at 9", channel=channel, thread_ts=ts)
    schedule = only_schedule(bot)
    bot.ask("schedules", channel=channel, thread_ts=ts)
    shown = as_posted(bot.slack.ephemerals_for(channel, ALICE)[-1])
    opened = len(bot.slack.opened_views)
    bot.click(shown, EDIT_TIME, user=CARA)  # not hers: no modal
    assert bot.slack.ephemerals_for(channel, CARA)[-1]["text"] == NOT_YOURS.format(
        owner=f"<@{ALICE}>"
    )
    assert len(bot.slack.opened_views) == opened
    bot.click(shown, EDIT_TIME, user=ALICE)
    view = bot.slack.opened_views[-1]["view"]
    assert view["callback_id"] == TIME_VIEW
    [when] = [b for b in view["blocks"] if b.get("block_id") == WHEN_BLOCK]
    assert when["element"]["initial_value"] == "0 9 * * 1"
    answer = submit(bot, view, when="every blue moon")
    assert answer["response_action"] == "errors" and "every blue moon" in str(answer)
    assert submit(bot, view, user=CARA, when="every day at 7")["response_action"] == "errors"
    assert submit(bot, view, when="every weekday at 8:30am") == {}
    changed = only_schedule(bot)
    assert (changed.cron, changed.time_zone) == ("30 8 * * 1-5", "Europe/London")
    assert (changed.sql_sha256, changed.status) == (schedule.sql_sha256, ACTIVE)
    said = bot.slack.ephemerals_for(channel, ALICE)[-1]
    assert said["text"].startswith(
        "Changed: it now runs every weekday at 08:30 (Europe/London); next on "
    )
    assert said["thread_ts"] == ts, "said where the list was clicked"
    fired = DBOS.get_schedule(schedule.schedule_id)
    assert fired is not None
    assert (fired["schedule"], fired["cron_timezone"]) == ("30 8 * * 1-5", "Europe/London")


def test_edit_time_on_the_home_tab_keeps_a_paused_schedule_paused(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("schedule this every Monday at 9", channel=channel, thread_ts=ts)
    schedule = only_schedule(bot)
    bot.slack.set_time_zone(ALICE, "America/New_York")  # she moved: her time zone now
    bot.event(payloads.home_opened(ALICE))
    bot.submit(home_click(bot.slack.published_views[-1]["view"], PAUSE, ALICE))
    bot.submit(home_click(bot.slack.published_views[-1]["view"], EDIT_TIME, ALICE))
    view = bot.slack.opened_views[-1]["view"]
    assert json.loads(view["private_metadata"]) == {
        "schedule_id": schedule.schedule_id,
        "channel": "",
        "thread_ts": "",
    }
    assert submit(bot, view, when="daily at noon") == {}
    changed = only_schedule(bot)
    assert (changed.cron, changed.time_zone, changed.status) == (
        "0 12 * * *",
        "America/New_York",
        PAUSED,
    )
    fired = DBOS.get_schedule(schedule.schedule_id)
    assert fired is not None and fired["status"] == "PAUSED"
    told = [m for m in bot.slack.messages.values() if m.text.startswith("Changed:")]
    assert told and told[0].channel.startswith("D"), "said in her direct messages"
    assert "once resumed (it is paused)" in told[0].text
    assert "every day at 12:00 (America/New_York)" in json.dumps(
        bot.slack.published_views[-1]["view"]
    )

"""bot.schedules.when: what people say turned into cron, read in their time zone, with a 9:00
schedule kept at 9:00 local across daylight-saving changes."""

from __future__ import annotations

import datetime as dt

import pytest

from bot.schedules.when import WhenError, describe, last_due, next_due, to_cron


@pytest.mark.parametrize(
    ("words", "cron"),
    [
        ("every Monday at 9", "0 9 * * 1"),
        ("every weekday at 8:30am", "30 8 * * 1-5"),
        ("daily at 17:00", "0 17 * * *"),
        ("every day at 5pm", "0 17 * * *"),
        ("every hour", "0 * * * *"),
        ("on the 1st at 9", "0 9 1 * *"),
        ("every monday and thursday at noon", "0 12 * * 1,4"),
        ("Every Fridays at 12am", "0 0 * * 5"),
        ("0 9 * * 1", "0 9 * * 1"),
    ],
)
def test_words_become_cron(words: str, cron: str) -> None:
    assert to_cron(words) == cron


@pytest.mark.parametrize(
    "words", ["whenever", "every moonday at 9", "every day at 25", "on the 31st at 9", "at 13pm"]
)
def test_what_is_no_time_says_what_would_be(words: str) -> None:
    with pytest.raises(WhenError, match=r"Try|time of day|1st to the 28th|not a time"):
        to_cron(words)


def test_cron_is_described_as_written() -> None:
    assert describe("0 9 * * 1", "Europe/London") == "every Monday at 09:00 (Europe/London)"
    assert describe("30 8 * * 1-5", "UTC") == "every weekday at 08:30 (UTC)"
    assert describe("*/5 * * * *", "UTC") == "`*/5 * * * *` (UTC)"
    assert describe("*/3 * * * * *", "UTC") == "`*/3 * * * * *` (UTC)"  # seconds first


def test_nine_oclock_stays_nine_oclock_across_daylight_saving() -> None:
    # the UK moves to BST on 2027-03-28 (01:00 UTC) and back on 2027-10-31 (01:00 UTC)
    before = dt.datetime(2027, 3, 27, 12, tzinfo=dt.UTC)
    spring = next_due("0 9 * * *", "Europe/London", before)
    assert spring.astimezone(dt.UTC) == dt.datetime(2027, 3, 28, 8, tzinfo=dt.UTC)
    assert (spring.hour, spring.minute) == (9, 0)
    autumn = next_due("0 9 * * *", "Europe/London", dt.datetime(2027, 10, 30, 12, tzinfo=dt.UTC))
    assert autumn.astimezone(dt.UTC) == dt.datetime(2027, 10, 31, 9, tzinfo=dt.UTC)
    new_york = next_due("0 9 * * *", "America/New_York", dt.datetime(2027, 3, 14, tzinfo=dt.UTC))
    assert new_york.astimezone(dt.UTC).hour == 13  # EDT from 2027-03-14


def test_the_last_due_time_includes_the_moment_itself() -> None:
    nine = dt.datetime(2027, 1, 4, 9, tzinfo=dt.UTC)
    assert last_due("0 9 * * 1", "UTC", nine) == nine
    assert last_due("0 9 * * 1", "UTC", nine - dt.timedelta(seconds=1)) == nine - dt.timedelta(
        days=7
    )

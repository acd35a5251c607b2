"""Schedules asked in words: what is read as a schedule (and when and where it posts), and what
stays a question for the agent."""

from __future__ import annotations

import pytest

from bot.schedules.requests import (
    CHANNEL,
    DIRECT,
    THREAD,
    ScheduleRequest,
    is_list_request,
    schedule_request,
)
from bot.schedules.when import WhenError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("schedule this every weekday at 8", ScheduleRequest("0 8 * * 1-5", "every weekday at 8")),
        (
            "every Monday at 9 post this in <#C0SALES01|sales>",
            ScheduleRequest("0 9 * * 1", "every Monday at 9", CHANNEL, "C0SALES01"),
        ),
        (
            "schedule it daily at 17:00 and send it to <#C0SALES01>",
            ScheduleRequest("0 17 * * *", "daily at 17:00", CHANNEL, "C0SALES01"),
        ),
        ("every day at 9am to me", ScheduleRequest("0 9 * * *", "every day at 9am", DIRECT)),
        (
            "post this every Monday at 9 in my DMs",
            ScheduleRequest("0 9 * * 1", "every Monday at 9", DIRECT),
        ),
        ("Schedule this every hour here.", ScheduleRequest("0 * * * *", "every hour", THREAD)),
        (
            "every monday and friday at 8:30am in this thread",
            ScheduleRequest("30 8 * * 1,5", "every monday and friday at 8:30am", THREAD),
        ),
        ("schedule this 0 9 * * 1", ScheduleRequest("0 9 * * 1", "0 9 * * 1")),
    ],
)
def test_a_schedule_in_words_is_read_whole(text: str, expected: ScheduleRequest) -> None:
    assert schedule_request(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "what did every customer buy?",
        "how many orders every day?",
        "every region's revenue in 2024",
        "show sales here",
        "revenue to me",
        "which products sell every Monday at 9?",
        "every Monday at 9 in <#C0SALES01> to me",  # two places: not guessed at
        "",
    ],
)
def test_a_question_that_is_not_wholly_a_schedule_stays_a_question(text: str) -> None:
    assert schedule_request(text) is None


def test_schedule_this_without_a_time_it_can_read_says_what_would_do() -> None:
    with pytest.raises(WhenError, match="Say when"):
        schedule_request("schedule this")
    with pytest.raises(WhenError, match="every blue moon"):
        schedule_request("schedule it every blue moon")
    with pytest.raises(WhenError, match="day from the 1st to the 28th"):
        schedule_request("schedule this on the 31st at 9")


@pytest.mark.parametrize("text", ["schedules", "Schedules?", "my schedules", "list my schedules"])
def test_schedules_asks_for_the_list(text: str) -> None:
    assert is_list_request(text)


@pytest.mark.parametrize("text", ["schedules for sales", "how many schedules ran?", "schedule"])
def test_other_words_are_not_the_list(text: str) -> None:
    assert not is_list_request(text)

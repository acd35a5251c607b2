"""The schedule modal's values checked before the modal closes: what is made of them, and the
message shown under the field that is wrong."""

from __future__ import annotations

import pytest

from bot.blocks.schedule_modal import (
    ALERT_BLOCK,
    CHANNEL,
    CHANNEL_BLOCK,
    DIRECT,
    THREAD,
    THRESHOLD_BLOCK,
    WHEN_BLOCK,
    ScheduleForm,
)
from bot.listeners.scheduling import Wanted
from bot.listeners.views.schedule_submission import (
    NEEDS_NUMBER,
    NEGATIVE,
    NO_ALERT,
    NO_CHANNEL,
    NOT_A_NUMBER,
    checked,
)
from bot.schedules.records import Alert


def form(when: str = "every Monday at 9", where: str = THREAD, channel: str = "", alert: str = "",
         threshold: str = "") -> ScheduleForm:  # fmt: skip
    return ScheduleForm(when, where, channel, alert, threshold)


def test_a_filled_form_is_the_schedule_it_says() -> None:
    assert checked(form()) == (Wanted("0 9 * * 1"), {})
    wanted = Wanted("30 8 * * 1-5", CHANNEL, "C0SALES01", Alert("above", 100.5))
    assert checked(form("every weekday at 8:30am", CHANNEL, "C0SALES01", "above", "100.5")) == (
        wanted,
        {},
    )
    assert checked(form("hourly", DIRECT, alert="rows_appear")) == (
        Wanted("0 * * * *", DIRECT, "", Alert("rows_appear", 0.0)),
        {},
    )


def test_a_channel_picked_for_another_place_is_left_out() -> None:
    assert checked(form(channel="C0SALES01")) == (Wanted("0 9 * * 1"), {})


def test_a_time_it_cannot_read_is_shown_under_when() -> None:
    wanted, errors = checked(form("every blue moon"))
    assert wanted is None and list(errors) == [WHEN_BLOCK]
    assert "every blue moon" in errors[WHEN_BLOCK] and "every Monday at 9" in errors[WHEN_BLOCK]
    assert "Try" in checked(form(""))[1][WHEN_BLOCK]


@pytest.mark.parametrize(
    ("changes", "block", "message"),
    [
        ({"where": CHANNEL}, CHANNEL_BLOCK, NO_CHANNEL),
        ({"alert": "above"}, THRESHOLD_BLOCK, NEEDS_NUMBER),
        ({"alert": "change", "threshold": "0"}, THRESHOLD_BLOCK, NEGATIVE),
        ({"alert": "below", "threshold": "ten"}, THRESHOLD_BLOCK, NOT_A_NUMBER),
        ({"alert": "below", "threshold": "nan"}, THRESHOLD_BLOCK, NOT_A_NUMBER),
        ({"threshold": "5"}, THRESHOLD_BLOCK, NO_ALERT),
    ],
)
def test_each_problem_is_shown_under_its_field(changes: dict, block: str, message: str) -> None:
    assert checked(form(**changes)) == (None, {block: message})


def test_an_alert_it_does_not_know_is_shown_under_alert() -> None:
    wanted, errors = checked(form(alert="sideways"))
    assert wanted is None and list(errors) == [ALERT_BLOCK]


def test_every_problem_is_shown_at_once() -> None:
    _, errors = checked(form("soon", CHANNEL, alert="above"))
    assert set(errors) == {WHEN_BLOCK, CHANNEL_BLOCK, THRESHOLD_BLOCK}

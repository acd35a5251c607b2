"""When a schedule runs: the few ways people say it ("every Monday at 9", "every weekday at
8:30am", "daily at 17:00", "every hour", "on the 1st of every month at 9", or a cron
expression) turned into a five-field cron expression, read in the owner's time zone.

Cron is parsed and iterated by croniter as the scheduling engine (DBOS) reads it (a sixth field
is seconds, first), over time-zone-aware times, so a 9:00 schedule stays at 9:00 local across a
daylight-saving change.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_TIME = r"(?:at\s+)?(?P<time>noon|midnight|\d{1,2}(?::\d{2})?\s*(?:am|pm)?)"
_FORMS = (
    (re.compile(rf"^(?:every\s+day|daily|each\s+day)\s+{_TIME}$"), "day"),
    (re.compile(rf"^(?:every\s+weekday|weekdays|each\s+weekday)\s+{_TIME}$"), "weekday"),
    (re.compile(rf"^(?:every|each)\s+(?P<days>[a-z,\s]+?)\s+{_TIME}$"), "days"),
    (
        re.compile(
            rf"^(?:on\s+the\s+|every\s+month\s+on\s+the\s+)?(?P<dom>\d{{1,2}})(?:st|nd|rd|th)?"
            rf"(?:\s+of\s+(?:every|each)\s+month)?\s+{_TIME}$"
        ),
        "month",
    ),
)
_HOURLY = re.compile(r"^(?:every\s+hour|hourly)$")
#: What a person reads for a cron expression this module writes.
_WORDS = {"1-5": "every weekday", "*": "every day"}


class WhenError(ValueError):
    """Words or an expression that say no time this module can schedule; the message says what
    would."""


EXAMPLES = '"every Monday at 9", "every weekday at 8:30am", "daily at 17:00", "every hour"'


def to_cron(text: str) -> str:
    """The cron expression for `text` (words as above, or five cron fields)."""
    words = " ".join(text.lower().replace(" and ", ", ").split())
    if _HOURLY.match(words):
        return "0 * * * *"
    if len(words.split()) == 5 and croniter.is_valid(words):
        return words
    for pattern, form in _FORMS:
        found = pattern.match(words)
        if not found:
            continue
        hour, minute = _clock(found["time"])
        if form == "day":
            return f"{minute} {hour} * * *"
        if form == "weekday":
            return f"{minute} {hour} * * 1-5"
        if form == "month":
            day = int(found["dom"])
            if not 1 <= day <= 28:
                raise WhenError("A monthly schedule runs on a day from the 1st to the 28th.")
            return f"{minute} {hour} {day} * *"
        days = _weekdays(found["days"])
        if days:
            return f"{minute} {hour} * * {days}"
    raise WhenError(f"I could not read {text!r} as a time. Try {EXAMPLES}, or a cron expression.")


def _clock(text: str) -> tuple[int, int]:
    if text == "noon":
        return 12, 0
    if text == "midnight":
        return 0, 0
    found = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?", text)
    assert found  # the patterns above only match such times
    hour, minute, half = int(found[1]), int(found[2] or 0), found[3]
    if half:
        if not 1 <= hour <= 12:
            raise WhenError(f"{text} is not a time of day.")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise WhenError(f"{text} is not a time of day.")
    return hour, minute


def _weekdays(text: str) -> str:
    days = []
    for word in re.split(r"[,\s]+", text.strip()):
        name = word.rstrip("s")  # "mondays"
        match = [i for i, day in enumerate(_DAYS) if day.startswith(name) and len(name) >= 3]
        if len(match) != 1:
            return ""
        days.append(match[0])
    return ",".join(str(d) for d in sorted(set(days)))


def time_zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; WhenError when there is none of that name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise WhenError(f"{name!r} is not a time zone I know.") from exc


def next_due(cron: str, zone: str, after: dt.datetime) -> dt.datetime:
    """The first time after `after` (aware) that `cron` names, read in `zone`; aware, local."""
    return croniter(cron, after.astimezone(time_zone(zone)), second_at_beginning=True).get_next(
        dt.datetime
    )


def last_due(cron: str, zone: str, at_or_before: dt.datetime) -> dt.datetime:
    """The latest time at or before `at_or_before` (aware) that `cron` names, in `zone`."""
    start = at_or_before.astimezone(time_zone(zone)) + dt.timedelta(seconds=1)
    return croniter(cron, start, second_at_beginning=True).get_prev(dt.datetime)


def describe(cron: str, zone: str) -> str:
    """`cron` as a person reads it ("every Monday at 09:00 (Europe/London)"), for the forms
    `to_cron` writes; other expressions are shown as they are."""
    fields = cron.split()
    where = f" ({zone})"
    if cron == "0 * * * *":
        return "every hour" + where
    if len(fields) != 5:
        return f"`{cron}`{where}"
    minute, hour, dom, month, dow = fields
    if not (minute.isdigit() and hour.isdigit()) or month != "*":
        return f"`{cron}`{where}"
    at = f"at {int(hour):02d}:{int(minute):02d}"
    if dom != "*" and dow == "*" and dom.isdigit():
        return f"on day {dom} of every month {at}{where}"
    if dom != "*":
        return f"`{cron}`{where}"
    if dow in _WORDS:
        return f"{_WORDS[dow]} {at}{where}"
    if re.fullmatch(r"[0-6](,[0-6])*", dow):
        names = [_DAYS[int(d)].capitalize() for d in dow.split(",")]
        return f"every {', '.join(names)} {at}{where}"
    return f"`{cron}`{where}"

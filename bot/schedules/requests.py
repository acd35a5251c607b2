"""A schedule asked for in words, in a thread with an answer: "schedule this every weekday at 8",
"every Monday at 9 post this in #sales", "... to me", "... here"; and "schedules", a person's
list.

Read deterministically (no model): an optional "schedule this" (or "schedule it"), an optional
destination ("in #channel" as Slack writes it, `<#C123|sales>`; "to me" or "in my DMs"; "here"
or "in this thread"), an optional "post this", and what is left must be a time `to_cron` reads
whole. So a question that merely contains "every" ("what did every customer buy?") is not a
schedule: it goes to the agent as any question does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.schedules.when import EXAMPLES, WhenError, to_cron

#: Where a schedule asked in words posts (the same names as the modal's choices).
THREAD, CHANNEL, DIRECT = "thread", "channel", "direct"

_SCHEDULE = re.compile(r"^(?:please\s+)?schedule\s+(?:this|it)\b[\s,:]*", re.I)
_POST = r"(?:(?:and\s+)?(?:post|send|share)\s+(?:this|it|them|the\s+results?)\s*)?"
_DESTINATIONS = (
    (re.compile(rf"\s*{_POST}\b(?:in|to|into)\s+<#([CG][A-Z0-9]+)(?:\|[^>]*)?>", re.I), CHANNEL),
    (re.compile(rf"\s*{_POST}\b(?:to\s+me|to\s+my\s+dms?|in\s+my\s+dms?)\b", re.I), DIRECT),
    (re.compile(rf"\s*{_POST}\b(?:here|in\s+this\s+thread)\b", re.I), THREAD),
)
_POST_ALONE = re.compile(rf"\s*{_POST}$|^{_POST}", re.I)
_SAY_WHEN = f"Say when, e.g. `@querybot schedule this every Monday at 9`: {EXAMPLES}."
_TWO_PLACES = 'Name one place to post: "in #channel", "to me" or "here".'
_LIST = re.compile(r"^(?:my\s+|list\s+(?:my\s+)?)?schedules\??$", re.I)


@dataclass(frozen=True)
class ScheduleRequest:
    """A schedule asked for in words: its cron expression, the words it came from, and where
    it posts (`channel`: the channel id, for CHANNEL)."""

    cron: str
    when: str
    where: str = THREAD
    channel: str = ""


def is_list_request(text: str) -> bool:
    """Whether `text` (a mention's, without the bot's name) asks for the person's schedules."""
    return bool(_LIST.match(text.strip()))


def schedule_request(text: str) -> ScheduleRequest | None:
    """The schedule `text` asks for, or None when it is not wholly a schedule request. Words
    that begin "schedule this" but say no time it can read raise WhenError (saying what would
    do), since they cannot be a question for the agent."""
    words = " ".join(text.split()).rstrip(".!")
    asked = _SCHEDULE.match(words)
    words = words[asked.end() :] if asked else words
    where, channel = THREAD, ""
    for pattern, kind in _DESTINATIONS:
        found = list(pattern.finditer(words))
        if len(found) == 1:
            where, channel = kind, found[0].group(1) if kind == CHANNEL else ""
            words = words[: found[0].start()] + " " + words[found[0].end() :]
            break
        if found:
            if asked:
                raise WhenError(_TWO_PLACES)
            return None  # two destinations: not something to guess at
    when = " ".join(_POST_ALONE.sub("", " ".join(words.split())).split()).strip(" ,")
    try:
        cron = to_cron(when)
    except WhenError as exc:
        if asked:
            raise WhenError(_SAY_WHEN if not when else str(exc)) from exc
        return None
    return ScheduleRequest(cron=cron, when=when, where=where, channel=channel)

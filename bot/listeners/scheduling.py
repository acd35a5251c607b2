"""Making a schedule from an answer, as the modal's submission and a request in words both do:
the owner's time zone from Slack, where the runs post, `Schedules.create`, and the confirmation
in the answer's thread (a refusal is told to the person only, with what to do instead).

Runs post where the answer's people could see it: an answer of a channel whose answers are
private can be scheduled to the owner's direct messages only, and a channel picked as the
destination must be one the bot answers in (never a Slack Connect channel, where results would
leave the workspace) whose answers are not private. Their direct messages have an id of their
own (D…), which the runner needs: the first message there, a short note, gives it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks.base import escaped
from bot.blocks.schedules import schedule_made, when_and_what
from bot.listeners.querybot import Querybot
from bot.schedules.records import Alert
from bot.schedules.requests import CHANNEL, DIRECT, THREAD
from bot.schedules.service import ScheduleRefused
from bot.schedules.when import WhenError, describe, time_zone
from bot.slack_thread import SlackThread, post, tell
from bot.store.base import ProposalRecord

log = logging.getLogger(__name__)

PRIVATE_ONLY_DM = (
    "This channel's answers are private, so a schedule of one can post only to your direct "
    'messages. Pick "My direct messages" (or say "to me").'
)
CANNOT_POST = (
    "I could not post in <#{channel}> ({error}). Invite me there (`/invite @querybot`) and "
    "schedule it again, or pick another place."
)
NO_DM = "I could not write to your direct messages ({error}), so nothing was scheduled."
NOT_MADE = "Not scheduled: {why}"
FAILED = (
    "something went wrong while making it. Try again in a minute (`@querybot schedules` shows "
    "what you have); if it keeps happening, tell whoever runs querybot (its log says why)."
)


@dataclass(frozen=True)
class Wanted:
    """A schedule as a person asked for it: when (cron), where it posts (THREAD, CHANNEL with
    its id, or DIRECT), and an optional alert."""

    cron: str
    where: str = THREAD
    channel: str = ""
    alert: Alert | None = None


def where_refusal(querybot: Querybot, record: ProposalRecord, wanted: Wanted) -> str | None:
    """Why runs of `record` may not post where `wanted` says, or None when they may. Asks
    Slack whether a picked channel is shared with another organisation (cached)."""
    config = querybot.conversations.router.config
    if config.answers_private(record.channel) and wanted.where != DIRECT:
        return PRIVATE_ONLY_DM
    if wanted.where == CHANNEL:
        refusal = querybot.channels.refusal(wanted.channel)
        if refusal:
            return f"I do not post in <#{wanted.channel}>: {refusal}"
        if config.answers_private(wanted.channel):
            return f"<#{wanted.channel}>'s answers are private; pick another place to post."
    return None


def owner_zone(client: WebClient, user: str) -> str:
    """`user`'s time zone in Slack (an IANA name), else UTC."""
    try:
        zone = str(client.users_info(user=user)["user"].get("tz") or "UTC")
        time_zone(zone)
        return zone
    except (SlackApiError, WhenError, KeyError, TypeError):
        log.warning("No time zone for %s in Slack; scheduling in UTC", user)
        return "UTC"


def make_schedule(
    client: WebClient, querybot: Querybot, record: ProposalRecord, user: str, wanted: Wanted
) -> None:
    """Make the schedule `user` wants of `record`'s answer, and say so in its thread (a
    refusal: to `user` only)."""
    assert querybot.schedules is not None
    thread = SlackThread.from_id(record.thread_id)
    refusal = where_refusal(querybot, record, wanted)
    if refusal:
        tell(client, thread, user, NOT_MADE.format(why=refusal))
        return
    zone = owner_zone(client, user)
    when = describe(wanted.cron, zone)
    question = escaped(record.proposal.question, 300)
    channel, thread_ts, note_ts = thread.channel, thread.ts, ""
    if wanted.where == CHANNEL:
        channel, thread_ts = wanted.channel, ""
    elif wanted.where == DIRECT:
        try:
            note = client.chat_postMessage(
                channel=user, text=f":calendar: Setting up *{question}*, {when}, to post here…"
            )
        except SlackApiError as exc:
            tell(client, thread, user, NO_DM.format(error=exc.response.get("error")))
            return
        channel, thread_ts, note_ts = str(note["channel"]), "", str(note["ts"])
    try:
        schedule = querybot.schedules.create(
            record,
            user=user,
            cron=wanted.cron,
            zone=zone,
            channel=channel,
            thread_ts=thread_ts,
            alert=wanted.alert,
        )
    except (ScheduleRefused, WhenError) as exc:
        _not_made(client, thread, user, str(exc), (channel, note_ts))
        return
    except Exception:
        log.exception("Making a schedule of %s for %s failed", record.proposal_id, user)
        _not_made(client, thread, user, FAILED, (channel, note_ts))
        return
    if wanted.where == CHANNEL:
        try:
            client.chat_postMessage(
                channel=channel,
                text=f":calendar: {when_and_what(schedule)}: scheduled by <@{user}> to post here.",
            )
        except SlackApiError as exc:
            querybot.schedules.delete(schedule.schedule_id, user)
            error = exc.response.get("error")
            tell(client, thread, user, CANNOT_POST.format(channel=channel, error=error))
            return
    if note_ts:
        text = f":calendar: {when_and_what(schedule)}: its runs post here."
        _update(client, channel, note_ts, text)
    try:
        post(client, thread, schedule_made(schedule, user, thread.ts))
    except SlackApiError:  # the schedule is made; the note is a courtesy
        log.exception("Could not confirm schedule %s in %s", schedule.schedule_id, thread.id)


def _not_made(
    client: WebClient, thread: SlackThread, user: str, why: str, note: tuple[str, str]
) -> None:
    """Tell `user` why nothing was scheduled, and say so in the direct-message `note` (channel,
    ts) when one was posted."""
    tell(client, thread, user, NOT_MADE.format(why=why))
    channel, ts = note
    if ts:
        _update(client, channel, ts, f":x: {NOT_MADE.format(why=why)}")


def _update(client: WebClient, channel: str, ts: str, text: str) -> None:
    try:
        client.chat_update(channel=channel, ts=ts, text=text)
    except SlackApiError:
        log.exception("Could not update the note %s in %s", ts, channel)

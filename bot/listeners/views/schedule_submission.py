"""The schedule modal's submission: its values checked (the time read by `to_cron`, a channel
when "A channel" is picked, the alert's threshold a number), a problem shown under its field
in the modal; then the modal closes at once (Slack wants the answer within 3 s) and the
schedule is made, which asks Slack again (the owner's time zone, a direct message's id) and is
confirmed in the answer's thread, or refused to the person only (`make_schedule`).

The time modal's submission (`on_time_submitted`) changes only when a schedule runs, read in
its owner's Slack time zone as when it was made, and tells the person where they clicked."""

from __future__ import annotations

import logging
import math
from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot.blocks.schedule_modal import (
    ALERT_BLOCK,
    CHANNEL,
    CHANNEL_BLOCK,
    NEEDS_THRESHOLD,
    THRESHOLD_BLOCK,
    WHEN_BLOCK,
    ScheduleForm,
    form_of,
    scheduled_answer,
    timed_schedule,
)
from bot.listeners.actions.schedules import say_done
from bot.listeners.querybot import Querybot
from bot.listeners.scheduling import Wanted, make_schedule, owner_zone
from bot.schedules.alerts import CHANGE, KINDS
from bot.schedules.records import Alert
from bot.schedules.when import WhenError, to_cron

UNKNOWN = "I do not know this answer any more, so it cannot be scheduled. Close this."
OFF = "Scheduled questions are turned off here, so nothing can be scheduled. Close this."
NO_CHANNEL = "Pick the channel to post in, or choose another place."
NOT_A_NUMBER = "The threshold is a number, like 100 or 2.5."
NEEDS_NUMBER = "This alert compares with a number: give the threshold."
NO_ALERT = "A threshold needs an alert: pick one above, or clear the threshold."
NEGATIVE = "A change is a percentage above 0, like 10 for 10%."
TIME_FAILED = (
    "Something went wrong, so its time may not have changed. Look at `@querybot schedules`, "
    "and try again in a minute; if it keeps happening, tell whoever runs querybot (its log "
    "says why)."
)

log = logging.getLogger(__name__)


def on_schedule_submitted(
    ack: Ack, body: dict[str, Any], view: dict[str, Any], client: WebClient, querybot: Querybot
) -> None:
    pid = scheduled_answer(view.get("private_metadata", ""))[0]
    record = querybot.store.proposal(pid) if pid else None
    if querybot.schedules is None or record is None:
        ack(response_action="errors", errors={WHEN_BLOCK: OFF if record else UNKNOWN})
        return
    wanted, errors = checked(form_of(view))
    if errors or wanted is None:
        ack(response_action="errors", errors=errors)
        return
    ack()
    make_schedule(client, querybot, record, body["user"]["id"], wanted)


def on_time_submitted(
    ack: Ack, body: dict[str, Any], view: dict[str, Any], client: WebClient, querybot: Querybot
) -> None:
    schedule_id, channel, thread_ts = timed_schedule(view.get("private_metadata", ""))
    user = body["user"]["id"]
    if querybot.schedules is None:
        ack(response_action="errors", errors={WHEN_BLOCK: OFF})
        return
    refusal = querybot.schedules.may_change(schedule_id, user)
    schedule = querybot.store.schedules.get(schedule_id)
    if refusal or schedule is None:
        ack(response_action="errors", errors={WHEN_BLOCK: refusal or UNKNOWN})
        return
    try:
        cron = to_cron(form_of(view).when)
    except WhenError as exc:
        ack(response_action="errors", errors={WHEN_BLOCK: str(exc)})
        return
    ack()
    zone = owner_zone(client, schedule.owner)
    try:
        said = querybot.schedules.change_time(schedule_id, user, cron, zone)
    except Exception:
        log.exception("Changing the time of schedule %s for %s failed", schedule_id, user)
        said = TIME_FAILED
    say_done(client, querybot, user, said, channel=channel, thread_ts=thread_ts)


def checked(form: ScheduleForm) -> tuple[Wanted | None, dict[str, str]]:
    """The schedule `form` asks for, or the problems to show (block id -> message)."""
    errors: dict[str, str] = {}
    cron = ""
    try:
        cron = to_cron(form.when)
    except WhenError as exc:
        errors[WHEN_BLOCK] = str(exc)
    if form.where == CHANNEL and not form.channel:
        errors[CHANNEL_BLOCK] = NO_CHANNEL
    alert, problem = _alert(form)
    if problem:
        errors[ALERT_BLOCK if form.alert and form.alert not in KINDS else THRESHOLD_BLOCK] = problem
    if errors:
        return None, errors
    channel = form.channel if form.where == CHANNEL else ""
    return Wanted(cron=cron, where=form.where, channel=channel, alert=alert), {}


def _alert(form: ScheduleForm) -> tuple[Alert | None, str]:
    """The alert `form` asks for (None: post every run), or what is wrong with it."""
    threshold = None
    if form.threshold:
        try:
            threshold = float(form.threshold)
        except ValueError:
            return None, NOT_A_NUMBER
        if not math.isfinite(threshold):
            return None, NOT_A_NUMBER
    if not form.alert:
        return None, (NO_ALERT if threshold is not None else "")
    if form.alert not in KINDS:
        return None, f"{form.alert!r} is not an alert I know."
    if form.alert in NEEDS_THRESHOLD and threshold is None:
        return None, NEEDS_NUMBER
    if form.alert == CHANGE and threshold is not None and threshold <= 0:
        return None, NEGATIVE
    return Alert(form.alert, threshold or 0.0), ""

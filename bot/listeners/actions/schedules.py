"""Scheduled questions' buttons: "Schedule…" under an answer opens the schedule modal (its
submission: `on_schedule_submitted`), and the buttons of a person's list (`@querybot
schedules`, the Home tab) pause, resume, run now or delete a schedule, or open the modal of its
time ("Edit time"; its submission: `on_time_submitted`), each allowed to its owner and the
admins (`Schedules` decides, and says what it did in a sentence told to the person only)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot.blocks.schedule_modal import schedule_modal, time_modal
from bot.blocks.schedules import DELETE, PAUSE, RESUME, RUN_NOW
from bot.listeners.actions.clicks import clicked_record, tell
from bot.listeners.events.home_tab import publish_home
from bot.listeners.querybot import Querybot
from bot.slack_thread import SlackThread

log = logging.getLogger(__name__)

#: Said when schedules are off (QUERYBOT_SCHEDULES=false) but an old button is pressed.
OFF = "Scheduled questions are turned off here (QUERYBOT_SCHEDULES), so nothing was scheduled."
FAILED = (
    "Something went wrong, so that may not have been done. Look at `@querybot schedules`, and "
    "try again in a minute; if it keeps happening, tell whoever runs querybot (its log says why)."
)
UNKNOWN_ANSWER = (
    "I do not know this answer any more, so it cannot be scheduled. Ask the question again, "
    "approve it, and schedule the new answer."
)


def on_schedule(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    """The "Schedule…" button under an answer: the modal, for an answer the store knows."""
    ack()
    record = clicked_record(querybot.store, body)
    if querybot.schedules is None or record is None:
        tell(client, body, record, OFF if querybot.schedules is None else UNKNOWN_ANSWER)
        return
    refusal = querybot.channels.refusal(record.channel)
    if refusal:
        tell(client, body, record, refusal)
        return
    thread = SlackThread.from_id(record.thread_id)
    modal = schedule_modal(
        record.proposal_id, record.proposal.question, channel=thread.channel, thread_ts=thread.ts
    )
    client.views_open(trigger_id=body["trigger_id"], view=modal)


def on_schedule_change(
    ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot
) -> None:
    """A list's Pause, Resume, Run now or Delete: done if the person may, and said."""
    ack()
    action = body["actions"][0]
    user = body["user"]["id"]
    if querybot.schedules is None:
        said = OFF.replace("nothing was scheduled", "nothing changed")
    else:
        change = {
            PAUSE: querybot.schedules.pause,
            RESUME: querybot.schedules.resume,
            RUN_NOW: querybot.schedules.run_now,
            DELETE: querybot.schedules.delete,
        }[action["action_id"]]
        try:
            said = change(action.get("value", ""), user)
        except Exception:
            log.exception(
                "Schedule %s: %s by %s failed", action.get("value"), action["action_id"], user
            )
            said = FAILED
    channel, thread_ts = clicked_where(body)
    say_done(client, querybot, user, said, channel=channel, thread_ts=thread_ts)


def on_edit_time(ack: Ack, body: dict[str, Any], client: WebClient, querybot: Querybot) -> None:
    """A list's "Edit time": the time modal, for a schedule the person may change."""
    ack()
    user = body["user"]["id"]
    channel, thread_ts = clicked_where(body)
    schedule_id = body["actions"][0].get("value", "")
    if querybot.schedules is None:
        said = OFF.replace("nothing was scheduled", "nothing changed")
    else:
        said = querybot.schedules.may_change(schedule_id, user)
    schedule = querybot.store.schedules.get(schedule_id) if not said else None
    if schedule is None:
        say_done(client, querybot, user, said, channel=channel, thread_ts=thread_ts)
        return
    modal = time_modal(schedule, channel=channel, thread_ts=thread_ts)
    client.views_open(trigger_id=body["trigger_id"], view=modal)


def clicked_where(body: dict[str, Any]) -> tuple[str, str]:
    """The channel and thread of the message clicked ("", "" for the Home tab)."""
    channel = (body.get("channel") or {}).get("id", "")
    return channel, (body.get("container") or {}).get("thread_ts") or ""


def say_done(
    client: WebClient, querybot: Querybot, user: str, said: str, *, channel: str, thread_ts: str
) -> None:
    """Tell `user` what a change of a schedule did: to them only, where they clicked; for a
    click on the Home tab, in their direct messages, with the tab redrawn."""
    if not channel:
        client.chat_postMessage(channel=user, text=said)
        publish_home(client, querybot, user)
        return
    client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts or None, text=said)

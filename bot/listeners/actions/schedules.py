"""Scheduled questions' buttons: "Schedule…" under an answer opens the schedule modal (its
submission: `on_schedule_submitted`), and the buttons of a person's list (`@querybot
schedules`) pause, resume, run now or delete a schedule, each allowed to its owner and the
admins (`Schedules` decides, and says what it did in a sentence told to the person only)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack
from slack_sdk import WebClient

from bot.blocks.schedule_modal import schedule_modal
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
    channel = (body.get("channel") or {}).get("id", "")
    if not channel:  # a click on the Home tab: said in their direct messages, the tab redrawn
        client.chat_postMessage(channel=user, text=said)
        publish_home(client, querybot, user)
        return
    thread_ts = (body.get("container") or {}).get("thread_ts")
    client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts or None, text=said)

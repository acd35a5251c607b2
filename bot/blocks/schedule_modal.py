"""The "Schedule…" button under an answer, and the modal it opens: when to run the answer's
approved SQL again ("When", in words or cron), where to post each run (this thread, a channel,
or the person's direct messages) and an optional alert (post only when a condition holds). And
the smaller modal of a listed schedule's "Edit time" button: its new time, nothing else (the
SQL of a schedule is changed by asking again).

The modal's private_metadata carries only the proposal id and the answer's thread; the SQL comes
from the bot's store when the schedule is made. `form_of` reads a submission's values back,
as plain strings, for the submission listener to check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ButtonElement,
    ConversationFilter,
    ConversationSelectElement,
    InputBlock,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    RadioButtonsElement,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.blocks.base import context, cut, escaped
from bot.schedules.alerts import ABOVE, BELOW, CHANGE, KINDS, ROWS_APPEAR, ROWS_DISAPPEAR
from bot.schedules.records import Schedule
from bot.schedules.requests import CHANNEL, DIRECT, THREAD
from bot.schedules.when import EXAMPLES, describe

SCHEDULE_ACTION = "answer_schedule"
SCHEDULE_VIEW = "schedule_answer"
TIME_VIEW = "schedule_time"
WHEN_BLOCK, WHEN_INPUT = "schedule_when_block", "schedule_when_input"
WHERE_BLOCK, WHERE_INPUT = "schedule_where_block", "schedule_where_input"
CHANNEL_BLOCK, CHANNEL_INPUT = "schedule_channel_block", "schedule_channel_input"
ALERT_BLOCK, ALERT_INPUT = "schedule_alert_block", "schedule_alert_input"
THRESHOLD_BLOCK, THRESHOLD_INPUT = "schedule_threshold_block", "schedule_threshold_input"
#: Where each run posts: the answer's thread, a channel's top level, the person's DMs.
WHERE = {THREAD: "This thread", CHANNEL: "A channel (pick it below)", DIRECT: "My direct messages"}
#: The alert kinds as a person reads them in the select.
ALERT_LABELS = {
    ABOVE: "The value is above the threshold",
    BELOW: "The value is below the threshold",
    CHANGE: "The value moves by more than the threshold (%)",
    ROWS_APPEAR: "Rows appear (none before)",
    ROWS_DISAPPEAR: "The rows disappear",
}
#: Alerts that compare with the threshold.
NEEDS_THRESHOLD = (ABOVE, BELOW, CHANGE)
assert set(ALERT_LABELS) == set(KINDS)


def schedule_button(proposal_id: str) -> ButtonElement:
    """The "Schedule…" button under the answer to `proposal_id`."""
    return ButtonElement(text="Schedule…", action_id=SCHEDULE_ACTION, value=proposal_id)


def schedule_modal(proposal_id: str, question: str, *, channel: str, thread_ts: str) -> dict:
    """The modal scheduling the answer to `proposal_id`, asked as `question` in the thread
    `thread_ts` of `channel`."""
    where = [Option(value=key, label=label) for key, label in WHERE.items()]
    alerts = [Option(value=kind, label=ALERT_LABELS[kind]) for kind in KINDS]
    note = (
        f"Runs the approved SQL of _{escaped(question, 500)}_ again, exactly as approved, and "
        "posts each result. Changing the SQL means asking again."
    )
    view = View(
        type="modal",
        callback_id=SCHEDULE_VIEW,
        title="Schedule this answer",
        submit="Schedule",
        close="Cancel",
        private_metadata=schedule_metadata(proposal_id, channel, thread_ts),
        blocks=[
            context(note),
            InputBlock(
                block_id=WHEN_BLOCK,
                label="When",
                hint="In your Slack time zone. Or five cron fields, e.g. 0 9 * * 1.",
                element=PlainTextInputElement(
                    action_id=WHEN_INPUT, placeholder=cut(EXAMPLES, 150), max_length=100
                ),
            ),
            InputBlock(
                block_id=WHERE_BLOCK,
                label="Where to post",
                element=RadioButtonsElement(
                    action_id=WHERE_INPUT, options=where, initial_option=where[0]
                ),
            ),
            InputBlock(
                block_id=CHANNEL_BLOCK,
                label="Channel",
                hint='Only for "A channel". querybot must be in it.',
                optional=True,
                element=ConversationSelectElement(
                    action_id=CHANNEL_INPUT,
                    placeholder="Pick a channel",
                    filter=ConversationFilter(include=["public", "private"]),
                ),
            ),
            InputBlock(
                block_id=ALERT_BLOCK,
                label="Alert",
                hint="Leave empty to post every run. With an alert, a run posts only when it "
                "fires, and once when it clears.",
                optional=True,
                element=StaticSelectElement(
                    action_id=ALERT_INPUT, placeholder="Post every run", options=alerts
                ),
            ),
            InputBlock(
                block_id=THRESHOLD_BLOCK,
                label="Threshold",
                hint="For above, below and change alerts: the first number of the first row "
                "is compared with it.",
                optional=True,
                element=NumberInputElement(action_id=THRESHOLD_INPUT, is_decimal_allowed=True),
            ),
        ],
    )
    return view.to_dict()


def schedule_metadata(proposal_id: str, channel: str, thread_ts: str) -> str:
    return json.dumps({"proposal_id": proposal_id, "channel": channel, "thread_ts": thread_ts})


def scheduled_answer(private_metadata: str) -> tuple[str, str, str]:
    """(proposal id, channel, thread ts) a schedule modal was opened for (empty strings when
    the metadata is not ours)."""
    return _read_metadata(private_metadata, "proposal_id")


def _read_metadata(private_metadata: str, first: str) -> tuple[str, str, str]:
    """(`first`'s value, channel, thread ts) of a modal's metadata, or empty strings."""
    try:
        parsed = json.loads(private_metadata or "{}")
        values = tuple(parsed.get(k, "") for k in (first, "channel", "thread_ts"))
    except (json.JSONDecodeError, AttributeError):
        return "", "", ""
    if not all(isinstance(v, str) for v in values):
        return "", "", ""
    return values[0], values[1], values[2]


@dataclass(frozen=True)
class ScheduleForm:
    """What a person filled in, as typed (the submission checks it)."""

    when: str
    where: str
    channel: str
    alert: str
    threshold: str


def form_of(view: dict[str, Any]) -> ScheduleForm:
    """The values of a submitted schedule modal (`view` as Slack sends it)."""
    values = view.get("state", {}).get("values", {})

    def field(block: str, action: str) -> dict[str, Any]:
        return values.get(block, {}).get(action, {}) or {}

    def chosen(block: str, action: str) -> str:
        return str((field(block, action).get("selected_option") or {}).get("value") or "")

    return ScheduleForm(
        when=str(field(WHEN_BLOCK, WHEN_INPUT).get("value") or "").strip(),
        where=chosen(WHERE_BLOCK, WHERE_INPUT) or THREAD,
        channel=str(field(CHANNEL_BLOCK, CHANNEL_INPUT).get("selected_conversation") or ""),
        alert=chosen(ALERT_BLOCK, ALERT_INPUT),
        threshold=str(field(THRESHOLD_BLOCK, THRESHOLD_INPUT).get("value") or "").strip(),
    )


def time_modal(schedule: Schedule, *, channel: str, thread_ts: str) -> dict:
    """The modal changing when `schedule` runs, opened from a list in `channel` (and thread
    `thread_ts`; both empty for the Home tab), where the change is then said."""
    note = (
        f"*{escaped(schedule.question, 500)}* runs {describe(schedule.cron, schedule.time_zone)}."
        " Its SQL, where it posts and its alert stay as they are."
    )
    view = View(
        type="modal",
        callback_id=TIME_VIEW,
        title="Change when it runs",
        submit="Save",
        close="Cancel",
        private_metadata=json.dumps(
            {"schedule_id": schedule.schedule_id, "channel": channel, "thread_ts": thread_ts}
        ),
        blocks=[
            context(note),
            InputBlock(
                block_id=WHEN_BLOCK,
                label="When",
                hint="In the owner's Slack time zone. Or five cron fields, e.g. 0 9 * * 1.",
                element=PlainTextInputElement(
                    action_id=WHEN_INPUT,
                    initial_value=schedule.cron,
                    placeholder=cut(EXAMPLES, 150),
                    max_length=100,
                ),
            ),
        ],
    )
    return view.to_dict()


def timed_schedule(private_metadata: str) -> tuple[str, str, str]:
    """(schedule id, channel, thread ts) a time modal was opened for (empty strings when the
    metadata is not ours)."""
    return _read_metadata(private_metadata, "schedule_id")

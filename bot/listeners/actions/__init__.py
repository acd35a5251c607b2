"""Button clicks: on a proposal's card (Approve, Reject, Edit SQL), on a running query's card
(Cancel), on an answer ("How did you get this?", the follow-up questions, the thumbs up/down,
the verified example a thumbs up offers, "Schedule…"), and on a list of schedules."""

from __future__ import annotations

import re

from slack_bolt import App

from bot import blocks
from bot.blocks.feedback import FEEDBACK_ACTION, VERIFY_ACTION
from bot.blocks.schedule_modal import SCHEDULE_ACTION
from bot.blocks.schedules import EDIT_TIME, SCHEDULE_ACTIONS
from bot.listeners.actions.answers import on_explain, on_follow_up
from bot.listeners.actions.decisions import on_approve, on_cancel, on_reject
from bot.listeners.actions.edit import on_edit
from bot.listeners.actions.feedback import on_feedback, on_verify
from bot.listeners.actions.schedules import on_edit_time, on_schedule, on_schedule_change


def register(app: App) -> None:
    app.action(blocks.APPROVE_ACTION)(on_approve)
    app.action(blocks.REJECT_ACTION)(on_reject)
    app.action(blocks.CANCEL_ACTION)(on_cancel)
    app.action(blocks.EDIT_ACTION)(on_edit)
    app.action(blocks.EXPLAIN_ACTION)(on_explain)
    app.action(FEEDBACK_ACTION)(on_feedback)
    app.action(VERIFY_ACTION)(on_verify)
    app.action(SCHEDULE_ACTION)(on_schedule)
    for action in SCHEDULE_ACTIONS:
        app.action(action)(on_schedule_change)
    app.action(EDIT_TIME)(on_edit_time)
    app.action(re.compile(rf"^{re.escape(blocks.FOLLOW_UP_PREFIX)}\d+$"))(on_follow_up)

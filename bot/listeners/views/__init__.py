"""Modal submissions: the Edit SQL modal, the "What was wrong?" modal of a thumbs down, and the
schedule modal of an answer, and the time modal of a listed schedule."""

from __future__ import annotations

from slack_bolt import App

from bot.blocks.feedback import WRONG_VIEW
from bot.blocks.schedule_modal import SCHEDULE_VIEW, TIME_VIEW
from bot.blocks.views import EDIT_VIEW
from bot.listeners.views.edit_submission import on_edit_submitted
from bot.listeners.views.feedback_submission import on_wrong_submitted
from bot.listeners.views.schedule_submission import on_schedule_submitted, on_time_submitted


def register(app: App) -> None:
    app.view(EDIT_VIEW)(on_edit_submitted)
    app.view(WRONG_VIEW)(on_wrong_submitted)
    app.view(SCHEDULE_VIEW)(on_schedule_submitted)
    app.view(TIME_VIEW)(on_time_submitted)

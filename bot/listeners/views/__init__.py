"""Modal submissions: the Edit SQL modal."""

from __future__ import annotations

from slack_bolt import App

from bot.blocks.views import EDIT_VIEW
from bot.listeners.views.edit_submission import on_edit_submitted


def register(app: App) -> None:
    app.view(EDIT_VIEW)(on_edit_submitted)

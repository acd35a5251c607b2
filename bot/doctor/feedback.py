"""The doctor's count of what people said of answers (Slack's thumbs up and down), per
warehouse: read from the bot store, where nothing is created for it."""

from __future__ import annotations

import sqlite3

import psycopg

from agent.memory.postgres import StateDatabaseError
from agent.memory.storage import open_storage
from bot.doctor.report import Section
from bot.settings import Settings
from bot.store.feedback import FeedbackLog
from bot.store.tables import TABLES


def check_feedback(settings: Settings) -> Section:
    """Thumbs up and down per warehouse, and how many thumbs down wait for review; notes only
    (feedback is what people think, not a fault of the deployment)."""
    section = Section("feedback on answers (thumbs up / down in Slack)")
    if not settings.slack_feedback:
        section.note("off (QUERYBOT_SLACK_FEEDBACK=false): answers carry no feedback buttons")
    if not settings.state_url and not settings.state_db.exists():
        section.note("none yet: the bot has not run here")
        return section
    try:
        db = open_storage(settings.state_url or settings.state_db, TABLES)
    except (StateDatabaseError, psycopg.Error, sqlite3.Error) as exc:
        section.note(f"not counted: the bot's store cannot be read ({exc}); see the state section")
        return section
    try:
        counts = FeedbackLog(db).counts()
    finally:
        db.close()
    if not counts:
        section.note("none yet")
    for warehouse, (up, down) in counts.items():
        name = warehouse or "(a thread with files, or a channel no longer mapped)"
        section.note(f"{name}: {up:,} up, {down:,} down (the thumbs down are kept for review)")
    return section

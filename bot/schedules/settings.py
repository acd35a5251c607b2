"""The environment's say on scheduled questions: whether the bot runs them, this replica's
name, who may change anyone's schedule, and how many failed tries pause one. Part of the bot's
one `Settings` (bot.settings)."""

from __future__ import annotations

import socket
from typing import Annotated, Any

from pydantic import field_validator
from pydantic_settings import NoDecode

from connectors.settings import EnvSettings, variable

#: Tries of one run at most (DBOS's attempts of its step, bot/schedules/engine.py): a schedule
#: must pause after at most this many failed tries, or the run would end with no one told.
MAX_TRIES = 10


class ScheduleSettings(EnvSettings):
    """Scheduled questions and alerts (docs/scheduling.md)."""

    #: Run schedules in this process (every replica should: DBOS spreads the runs).
    schedules: bool = variable("QUERYBOT_SCHEDULES", True)
    #: This replica's name, the same across its restarts, so a restarted replica recovers the
    #: runs it left mid-way (DBOS's executor id); defaults to the host's name.
    replica_id: str = variable("QUERYBOT_REPLICA_ID", socket.gethostname() or "querybot")
    #: Slack user ids who may pause, resume, run or delete anyone's schedule (besides owners).
    schedule_admins: Annotated[tuple[str, ...], NoDecode] = variable("QUERYBOT_SCHEDULE_ADMINS", ())
    #: Failed tries in a row after which a schedule pauses and its owner is told.
    schedule_max_failures: int = variable("QUERYBOT_SCHEDULE_MAX_FAILURES", 3, ge=1, le=MAX_TRIES)
    #: Seconds between DBOS's looks for schedules another replica made or changed.
    schedule_poll_s: float = variable("QUERYBOT_SCHEDULE_POLL_S", 5.0, ge=0.1, le=600)

    @field_validator("schedule_admins", mode="before")
    @classmethod
    def _admins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(u.strip() for u in value.split(",") if u.strip())
        return value

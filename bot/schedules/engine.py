"""The scheduling engine: DBOS Transact fires each schedule's runs, durably, on one replica or
several (docs/scheduling.md says why DBOS).

DBOS keeps its own system tables (in a SQLite file beside the bot's store, or in the same
PostgreSQL database under the `dbos` schema) and gives each run a workflow id made of the
schedule and the time it was due, so however many replicas fire a run, it is started once; a
replica that dies mid-run has its workflow recovered when it starts again (its executor id is
kept across restarts). The bot's store still holds the schedules themselves and what each run
did (`bot.schedules.records`): DBOS's schedules are made again from it at each start, so moving
the store moves them, and the runner's own claim decides, again, that one process posts.

Missed runs are not replayed one by one: DBOS's backfill is off, and at start each schedule whose
last due time passed while no replica ran gets one catch-up run, with a note of how many it
stands for. A run's work is one DBOS step, tried again with backoff when it fails.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbos import DBOS, DBOSConfig, Queue, SetWorkflowID
from dbos import error as dbos_errors

from bot.schedules.records import ACTIVE, Schedule
from bot.schedules.settings import MAX_TRIES
from bot.schedules.when import last_due, next_due, time_zone
from connectors.units import counted

log = logging.getLogger(__name__)

#: What the engine calls for each run: (schedule id, when it was due (aware), a note).
Carry = Callable[[str, dt.datetime, str], None]

#: One application version for every build, so a restarted replica recovers the runs its
#: predecessor left, whatever changed in the code between them.
_VERSION = "querybot-schedules-1"
_carry: Carry | None = None
#: Runs carried out at once by one replica: a burst of schedules due in the same minute waits
#: here rather than taking every connection of the bot's store from its questions.
RUNS_AT_ONCE = 4
QUEUE = "querybot_scheduled_runs"


#: Each try of a run waits twice as long as the one before: 5 s, 10 s, 20 s ... (the runner ends
#: the tries once QUERYBOT_SCHEDULE_MAX_FAILURES failed, pausing the schedule).
@DBOS.step(retries_allowed=True, max_attempts=MAX_TRIES, interval_seconds=5.0, backoff_rate=2.0)
def _carry_out(schedule_id: str, due_at: str, note: str) -> None:
    assert _carry is not None, "the engine was not started"
    _carry(schedule_id, dt.datetime.fromisoformat(due_at), note)


@DBOS.workflow(name="querybot_scheduled_run")
def _fired(due_at: dt.datetime, context: dict[str, Any]) -> None:
    _carry_out(str(context["schedule_id"]), due_at.isoformat(), str(context.get("note", "")))


@dataclass(frozen=True)
class EngineSettings:
    #: DBOS's system database: `sqlite:///PATH` or the PostgreSQL URL of the bot's state.
    system_url: str
    #: This replica's name, the same across its restarts (QUERYBOT_REPLICA_ID).
    executor_id: str
    #: How often DBOS looks for schedules made or changed by another replica.
    poll_s: float = 5.0


class Engine:
    """DBOS, started once per process, firing the store's schedules."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self._queue: Queue

    def start(self, carry: Carry, schedules: list[Schedule], now: dt.datetime) -> None:
        """Launch DBOS, make its schedules from the store's, and catch up what was missed."""
        global _carry
        _carry = carry
        config: DBOSConfig = {
            "name": "querybot",
            "system_database_url": self.settings.system_url,
            "executor_id": self.settings.executor_id,
            "application_version": _VERSION,
            "run_admin_server": False,  # type: ignore[typeddict-unknown-key]
            "scheduler_polling_interval_sec": self.settings.poll_s,
            # many schedules due in one minute fire at once, each asking the system database:
            # a run waits for a connection rather than being dropped after DBOS's 30 s
            "db_engine_kwargs": {"pool_timeout": 300},
        }
        DBOS(config=config)
        DBOS.launch()
        self._queue = DBOS.register_queue(QUEUE, worker_concurrency=RUNS_AT_ONCE)
        known = {s["schedule_name"] for s in DBOS.list_schedules()}
        wanted = {s.schedule_id for s in schedules}
        for name in known - wanted:
            DBOS.delete_schedule(name)
        for schedule in schedules:
            if schedule.schedule_id not in known:
                self.add(schedule)
            elif schedule.status != ACTIVE:
                DBOS.pause_schedule(schedule.schedule_id)

    def add(self, schedule: Schedule) -> None:
        try:
            DBOS.create_schedule(
                schedule_name=schedule.schedule_id,
                workflow_fn=_fired,
                schedule=schedule.cron,
                context={"schedule_id": schedule.schedule_id},
                cron_timezone=schedule.time_zone,
                queue_name=QUEUE,
            )
        except dbos_errors.DBOSException as exc:
            if DBOS.get_schedule(schedule.schedule_id) is None:
                raise
            # another replica, starting at the same time, made it first
            log.debug("Schedule %s was made by another replica: %s", schedule.schedule_id, exc)
        if schedule.status != ACTIVE:
            DBOS.pause_schedule(schedule.schedule_id)

    def change(self, schedule: Schedule) -> None:
        """`schedule` with a new time (or state): DBOS's schedule made again."""
        self.remove(schedule.schedule_id)
        self.add(schedule)

    def pause(self, schedule_id: str) -> None:
        DBOS.pause_schedule(schedule_id)

    def resume(self, schedule_id: str) -> None:
        DBOS.resume_schedule(schedule_id)

    def remove(self, schedule_id: str) -> None:
        if DBOS.get_schedule(schedule_id) is not None:
            DBOS.delete_schedule(schedule_id)

    def run_at(self, schedule: Schedule, due: dt.datetime, note: str = "") -> None:
        """Start the run of `schedule` due at `due` now (a catch-up, or "run now"), under the
        workflow id DBOS itself gives that run, so it never runs twice however it was started."""
        local = due.astimezone(dt.UTC).astimezone(_zone(schedule))
        workflow_id = f"sched-{schedule.schedule_id}-{local.isoformat()}"
        with SetWorkflowID(workflow_id):
            context = {"schedule_id": schedule.schedule_id, "note": note}
            self._queue.enqueue(_fired, local, context)

    def catch_up(self, schedule: Schedule, latest_run: str, now: dt.datetime) -> None:
        """One run for the missed ones: when the schedule's last due time before `now` came
        after its latest run (and after it was made), that time is run once, noting how many
        due times it stands for."""
        due = last_due(schedule.cron, schedule.time_zone, now)
        made = dt.datetime.fromtimestamp(schedule.created_at, dt.UTC)
        done = dt.datetime.fromisoformat(latest_run) if latest_run else made
        if schedule.status != ACTIVE or due <= max(done, made):
            return
        missed = _count_between(schedule, max(done, made), due)
        note = (
            f"Caught up after downtime: {counted(missed, 'scheduled run')} came due while "
            "querybot was not running; this one stands for them."
        )
        log.info("Schedule %s: catching up %d missed runs", schedule.schedule_id, missed)
        self.run_at(schedule, due, note)

    def stop(self) -> None:
        DBOS.destroy(destroy_registry=False)


def _zone(schedule: Schedule) -> dt.tzinfo:
    return time_zone(schedule.time_zone)


def _count_between(schedule: Schedule, after: dt.datetime, until: dt.datetime) -> int:
    """How many due times fall in (after, until], counted up to 1,000."""
    count, at = 0, after
    while count < 1000:
        at = next_due(schedule.cron, schedule.time_zone, at)
        if at > until:
            break
        count += 1
    return max(count, 1)

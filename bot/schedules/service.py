"""Scheduled questions as the bot offers them: a schedule made from an approved answer, a
person's list, and pause, resume, run now, a new time, delete, each allowed to the schedule's
owner and the admins named in QUERYBOT_SCHEDULE_ADMINS. Starts and stops the engine with the bot.

A schedule runs the answer's SQL exactly as it was approved, as the identity the answer ran as:
only a person whose own identity is that one may own it (under run_as rules, the asker, or
someone mapped to the same identity). Nothing new runs without a person's approval: changing
the SQL means asking again, and approving the new proposal.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.access.identity import Directory
from bot.routing import Router
from bot.schedules.records import ACTIVE, Alert, Schedule
from bot.schedules.runner import Runner, RunnerSettings
from bot.schedules.when import describe, next_due, time_zone
from bot.store.base import ProposalRecord, Status, Store

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from bot.access.approvals import Approvers
    from bot.schedules.engine import Engine
    from bot.settings import Settings

log = logging.getLogger(__name__)

NOT_YOURS = (
    "Only the schedule's owner ({owner}) or a querybot admin can change it. Ask them, or make "
    "your own from the answer."
)
GONE = "That schedule no longer exists (it was deleted). `@querybot schedules` lists yours."


class ScheduleRefused(Exception):
    """A schedule that cannot be made as asked; the message says why and what to do."""


class Schedules:
    """The bot's schedules: made, listed and changed here, fired by the engine, run by the
    runner."""

    def __init__(
        self,
        store: Store,
        router: Router,
        identities: Directory,
        runner: Runner,
        engine: Engine,
        *,
        admins: tuple[str, ...] = (),
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.store = store
        self.router = router
        self.identities = identities
        self.runner = runner
        self.engine = engine
        self.admins = admins
        self.now = now

    def start(self) -> None:
        """Start the engine with the store's schedules, and catch up runs missed meanwhile."""
        schedules = self.store.schedules.all()
        self.engine.start(self.runner.carry, schedules, self.now())
        for schedule in schedules:
            latest = self.store.schedules.latest_due(schedule.schedule_id)
            self.engine.catch_up(schedule, latest, self.now())
        log.info("Schedules started: %d", len(schedules))

    def stop(self) -> None:
        self.engine.stop()

    def create(
        self,
        record: ProposalRecord,
        *,
        user: str,
        cron: str,
        zone: str,
        channel: str,
        thread_ts: str = "",
        alert: Alert | None = None,
    ) -> Schedule:
        """A schedule of `record`'s approved SQL, owned by `user`. Raises ScheduleRefused."""
        time_zone(zone)  # a WhenError (a ValueError) for a zone that does not exist
        if record.status is not Status.DONE or not record.approved or not record.decided_by:
            raise ScheduleRefused(
                "Only an answer whose SQL was approved and ran can be scheduled. Approve it "
                "first, then schedule it."
            )
        route = self.router.route(record.thread_id)
        if route.agent is None or route.files:
            raise ScheduleRefused(
                "Answers from files shared in a thread cannot be scheduled: the files are not "
                "kept. Load the data into a warehouse querybot reads, then ask there."
            )
        run_as = record.proposal.run_as
        if route.run_as is not None:
            mine = self.identities.run_as(route.run_as, user)
            if mine.refusal or mine.role != run_as:
                raise ScheduleRefused(
                    f"This answer ran as `{run_as}`, and your own access is not that one, so "
                    "you cannot schedule it. Ask your own question, or ask the person who asked "
                    "this one to schedule it."
                )
        schedule = self.store.schedules.add(
            Schedule(
                owner=user,
                approved_by=record.decided_by,
                proposal_id=record.proposal_id,
                thread_id=record.thread_id,
                question=record.proposal.question,
                sql=record.proposal.sql,
                sql_sha256=record.sql_sha256,
                run_as=run_as,
                post_channel=channel,
                post_thread_ts=thread_ts,
                cron=cron,
                time_zone=zone,
                alert=alert,
            )
        )
        self.engine.add(schedule)
        log.info("Schedule %s made by %s: %s (%s)", schedule.schedule_id, user, cron, zone)
        return schedule

    def mine(self, user: str) -> list[Schedule]:
        """`user`'s schedules; an admin's list holds everyone's."""
        return self.store.schedules.all(owner=None if user in self.admins else user)

    def pause(self, schedule_id: str, user: str) -> str:
        def act(schedule: Schedule) -> str:
            self.store.schedules.pause(schedule_id, f"paused by <@{user}>")
            self.engine.pause(schedule_id)
            return "Paused. Resume it from `@querybot schedules`."

        return self._change(schedule_id, user, act)

    def resume(self, schedule_id: str, user: str) -> str:
        def act(schedule: Schedule) -> str:
            why = self.runner.why_paused(schedule)
            if why:
                return f"It cannot run yet: {why}."
            self.store.schedules.resume(schedule_id)
            self.engine.resume(schedule_id)
            return "Resumed: it runs at its next time."

        return self._change(schedule_id, user, act)

    def run_now(self, schedule_id: str, user: str) -> str:
        def act(schedule: Schedule) -> str:
            if schedule.status != ACTIVE:
                return "It is paused: resume it first."
            self.engine.run_at(schedule, self.now(), note=f"Run now by <@{user}>.")
            return "Running it now: the result will be posted where it posts."

        return self._change(schedule_id, user, act)

    def change_time(self, schedule_id: str, user: str, cron: str, zone: str) -> str:
        """Run the schedule at `cron` in `zone` (the owner's Slack time zone) from now on;
        its SQL, destination and alert stay."""

        def act(schedule: Schedule) -> str:
            time_zone(zone)
            self.store.schedules.set_when(schedule_id, cron, zone)
            self.engine.change(replace(schedule, cron=cron, time_zone=zone))
            said = f"Changed: it now runs {describe(cron, zone)}"
            if schedule.status != ACTIVE:
                return f"{said}, once resumed (it is paused)."
            due = next_due(cron, zone, self.now())
            return f"{said}; next on {due:%a %d %b at %H:%M}."

        return self._change(schedule_id, user, act)

    def delete(self, schedule_id: str, user: str) -> str:
        def act(schedule: Schedule) -> str:
            self.engine.remove(schedule_id)
            self.store.schedules.delete(schedule_id)
            return "Deleted: it will not run again."

        return self._change(schedule_id, user, act)

    def may_change(self, schedule_id: str, user: str) -> str:
        """Why `user` may not change the schedule ("" when they may)."""
        schedule = self.store.schedules.get(schedule_id)
        if schedule is None:
            return GONE
        if user != schedule.owner and user not in self.admins:
            return NOT_YOURS.format(owner=f"<@{schedule.owner}>")
        return ""

    def _change(self, schedule_id: str, user: str, act: Callable[[Schedule], str]) -> str:
        refusal = self.may_change(schedule_id, user)
        schedule = self.store.schedules.get(schedule_id)
        if refusal or schedule is None:
            return refusal or GONE
        said = act(schedule)
        log.info("Schedule %s: %s by %s", schedule_id, said.split(":")[0], user)
        return said


def build_schedules(
    settings: Settings,
    client: WebClient,
    router: Router,
    store: Store,
    identities: Directory,
    approvers: Approvers,
) -> Schedules | None:
    """The scheduled questions as the settings say (None when QUERYBOT_SCHEDULES is off); the
    serve functions start their engine, which keeps its tables beside the store (a SQLite file
    in the data directory, or the same PostgreSQL database)."""
    if not settings.schedules:
        return None
    from bot.schedules.engine import Engine, EngineSettings

    system_url = settings.state_url or f"sqlite:///{settings.data_dir.resolve()}/schedules.sqlite"
    engine = Engine(EngineSettings(system_url, settings.replica_id, settings.schedule_poll_s))
    runner = Runner(
        store,
        router,
        client,
        identities,
        approvers,
        RunnerSettings(
            display_rows=settings.display_rows,
            max_failures=settings.schedule_max_failures,
            admins=settings.schedule_admins,
        ),
    )
    return Schedules(store, router, identities, runner, engine, admins=settings.schedule_admins)

"""One scheduled run, carried out exactly once: claimed in the store, its people's access
checked again, its SQL run through the gate again (agent.scheduled), the alert judged, the
result posted with Slack message metadata naming the run.

Exactly once, through restarts and replicas: the run's row (`ScheduleLog.claim_run`) lets one
process start it. A run left `running` by a process that died is taken over once; before posting
again, the new owner looks in the destination for a message carrying the run's metadata: a
crash after Slack took the post but before the store heard of it costs no second post.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata

from agent.scheduled import (
    GATE_REFUSED,
    HASH_MISMATCH,
    OVER_COST,
    SQL_CHANGED,
    RunResult,
    ScheduledSql,
)
from bot.access.approvals import Approvers
from bot.access.identity import Directory
from bot.blocks import Message, escape, mention
from bot.blocks.schedules import paused, scheduled_post
from bot.routing import Router
from bot.schedules import alerts
from bot.schedules.records import (
    ACTIVE,
    FAILED,
    POSTED,
    QUIET,
    RUNNING,
    SKIPPED,
    Run,
    Schedule,
)
from bot.store.base import Store

log = logging.getLogger(__name__)

#: The metadata event type of a run's post.
EVENT_TYPE = "querybot_scheduled_run"
#: How far back the destination is searched for a post a crashed process may have made.
_LOOK_BACK = 100

STOPS = {
    GATE_REFUSED: "the SQL gate now refuses its SQL ({why})",
    SQL_CHANGED: "the SQL gate would now change its SQL, so it is no longer what was approved",
    OVER_COST: "its query would now cost more than the cap ({why})",
    HASH_MISMATCH: "its saved SQL no longer matches the approved hash",
}


class RunFailed(Exception):
    """A run failed this once (the warehouse, or Slack): the engine tries it again later."""


@dataclass(frozen=True)
class RunnerSettings:
    display_rows: int = 20
    #: Failed tries in a row after which a schedule pauses and its owner is told.
    max_failures: int = 3
    #: People who may change anyone's schedule (QUERYBOT_SCHEDULE_ADMINS).
    admins: tuple[str, ...] = ()


class Runner:
    """Carries out the runs the engine fires."""

    def __init__(
        self,
        store: Store,
        router: Router,
        client: WebClient,
        identities: Directory,
        approvers: Approvers,
        settings: RunnerSettings,
    ) -> None:
        self.store = store
        self.router = router
        self.client = client
        self.identities = identities
        self.approvers = approvers
        self.settings = settings
        #: Runs this process is carrying out now (schedule id, due at).
        self._carrying: set[tuple[str, str]] = set()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def carry(self, schedule_id: str, due: dt.datetime, note: str = "") -> None:
        """The run of `schedule_id` due at `due`, if no other process has it."""
        key = due.astimezone(dt.UTC).isoformat()
        runs = self.store.schedules
        me = self.store.instance_id
        if runs.claim_run(schedule_id, key, me, note):
            run = Run(schedule_id, key, RUNNING, me, note=note)
        else:
            left = runs.run(schedule_id, key)
            if left is None or left.status != RUNNING or (schedule_id, key) in self._carrying:
                return  # done, or under way here
            if left.instance_id == me:
                run = left  # this process's own earlier try, which failed part-way
            elif not self.store.is_gone(left.instance_id) or not runs.take_over(left, me):
                return  # under way in another living process, or taken over by another
            else:
                run = left
            schedule = runs.get(schedule_id)
            ts = self._posted_before(schedule, run) if schedule else ""
            if ts:
                log.info("Schedule %s run %s: posted before a crash", schedule_id, key)
                runs.finish_run(run, POSTED, message_ts=ts)
                return
        self._carrying.add((schedule_id, key))
        try:
            with self._lock_of(schedule_id):  # one run of a schedule at a time: each compares
                self._carry_claimed(run)  # with the run before it
        finally:
            self._carrying.discard((schedule_id, key))

    def _lock_of(self, schedule_id: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(schedule_id, threading.Lock())

    def _carry_claimed(self, run: Run) -> None:
        runs = self.store.schedules
        schedule_id = run.schedule_id
        schedule = runs.get(schedule_id)
        if schedule is None or schedule.status != ACTIVE:
            runs.finish_run(run, SKIPPED, note="the schedule was paused or deleted")
            return
        if runs.ran_after(schedule_id, run.due_at):
            # a later run already reported (a catch-up that came after the next run): this one
            # would only repeat an older picture
            runs.finish_run(run, SKIPPED, note="a later run already ran")
            return
        self._carry(schedule, run)

    def _carry(self, schedule: Schedule, run: Run) -> None:
        runs = self.store.schedules
        why = self.why_paused(schedule)
        if why:
            self.pause(schedule, why)
            runs.finish_run(run, SKIPPED, note=why)
            return
        route = self.router.route(schedule.thread_id)
        assert route.agent is not None  # why_paused checked it
        job = ScheduledSql(
            question=schedule.question,
            sql=schedule.sql,
            sql_sha256=schedule.sql_sha256,
            proposal_id=schedule.proposal_id,
            approved_by=schedule.approved_by,
            owner=schedule.owner,
            identity=schedule.run_as,
        )
        ran: RunResult = route.agent.run_scheduled(
            schedule.thread_id, job, job_key=f"{schedule.schedule_id}-{run.due_at}"
        )
        if ran.stop:
            reason = STOPS[ran.stop].format(why=escape(ran.error))
            self.pause(schedule, reason)
            runs.finish_run(run, FAILED, note=reason)
            return
        if ran.answer is None:
            self._failed(schedule, run, ran.error)
            return
        last = runs.last_done(schedule.schedule_id, run.due_at)
        before = last.result if last else {}
        now = alerts.figures(ran.answer)
        headline = ""
        if schedule.alert:
            verdict = alerts.judge(schedule.alert, before, now)
            now["firing"] = verdict.firing
            if not verdict.post:
                runs.finish_run(run, QUIET, result=now)
                runs.succeeded(schedule.schedule_id)
                log.info("Schedule %s run %s quiet (its alert)", schedule.schedule_id, run.due_at)
                return
            headline = verdict.why
        message = scheduled_post(
            schedule,
            ran.answer,
            headline=headline,
            change=alerts.change_since(before, now),
            note=run.note,
            display_rows=self.settings.display_rows,
        )
        try:
            ts = self._post(schedule, run, message)
        except SlackApiError as exc:
            self._failed(schedule, run, f"Slack refused the post ({exc.response.get('error')})")
            return
        runs.finish_run(run, POSTED, message_ts=ts, result=now)
        runs.succeeded(schedule.schedule_id)
        log.info("Schedule %s run %s posted", schedule.schedule_id, run.due_at)

    def _failed(self, schedule: Schedule, run: Run, error: str) -> None:
        """One more failure in a row: tried again later (by the engine), or, after
        `max_failures`, the schedule paused and its owner told."""
        runs = self.store.schedules
        count = runs.failed_once(schedule.schedule_id)
        log.warning("Schedule %s run %s failed (%d): %s", schedule.schedule_id, run.due_at,
                    count, error)  # fmt: skip
        if count >= self.settings.max_failures:
            reason = f"its last {count} tries failed (the last: {escape(error)})"
            self.pause(schedule, reason)
            runs.finish_run(run, FAILED, note=reason)
            return
        runs.release_run(run)
        raise RunFailed(error)

    def why_paused(self, schedule: Schedule) -> str:
        """Why `schedule` may not run now ("" when it may): its owner or approver left or lost
        access, or its warehouse no longer answers there."""
        for who, role in ((schedule.owner, "owner"), (schedule.approved_by, "approver")):
            if self._left(who):
                return f"its {role} {mention(who)} is no longer in the workspace"
        route = self.router.route(schedule.thread_id)
        if route.agent is None or route.files:
            return "its warehouse no longer answers in that channel"
        record = self.store.proposal(schedule.proposal_id)
        if record is not None and self.approvers.why_not_approve(schedule.approved_by, record):
            return f"{mention(schedule.approved_by)} may no longer approve its query"
        if route.run_as is None:
            return ""
        owner = self.identities.run_as(route.run_as, schedule.owner)
        if owner.refusal or owner.role != schedule.run_as:
            return f"the warehouse access of {mention(schedule.owner)} changed"
        tables = record.proposal.tables if record else []
        unreadable = route.agent.unreadable(owner.role, tables) if tables else []
        if unreadable:
            return f"`{escape(owner.role)}` can no longer read {escape(', '.join(unreadable))}"
        return ""

    def pause(self, schedule: Schedule, reason: str) -> None:
        """Pause `schedule` in the store and tell whoever can act: its owner, in their direct
        messages (or in the schedule's channel when the owner left)."""
        self.store.schedules.pause(schedule.schedule_id, reason)
        log.warning("Schedule %s paused: %s", schedule.schedule_id, reason)
        message = paused(schedule, reason, admins=self.settings.admins)
        to = schedule.post_channel if self._left(schedule.owner) else schedule.owner
        try:
            self.client.chat_postMessage(channel=to, text=message.text, blocks=message.blocks)
        except SlackApiError:
            log.exception("Could not tell anyone that schedule %s paused", schedule.schedule_id)

    def _left(self, user: str) -> bool:
        try:
            found = self.client.users_info(user=user).get("user") or {}
        except SlackApiError as exc:
            return exc.response.get("error") == "user_not_found"
        return bool(found.get("deleted"))

    def _post(self, schedule: Schedule, run: Run, message: Message) -> str:
        response = self.client.chat_postMessage(
            channel=schedule.post_channel,
            thread_ts=schedule.post_thread_ts or None,
            text=message.text,
            blocks=message.blocks,
            metadata=Metadata(event_type=EVENT_TYPE, event_payload=_payload(run)),
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    def _posted_before(self, schedule: Schedule, run: Run) -> str:
        """The ts of a post of `run` already in its destination, or ""."""
        try:
            messages = self._recent(schedule)
        except SlackApiError as exc:
            error = exc.response.get("error")
            raise RunFailed(f"could not read the destination ({error})") from None
        payload = _payload(run)
        for message in messages:
            meta = message.get("metadata") or {}
            if meta.get("event_type") == EVENT_TYPE and meta.get("event_payload") == payload:
                return str(message["ts"])
        return ""

    def _recent(self, schedule: Schedule) -> Sequence[dict[str, Any]]:
        channel = schedule.post_channel
        if channel.startswith(("U", "W")):
            # a person's id: the service stores the direct message's own id (D…) instead, so
            # this is a schedule whose destination was never resolved, with nothing to read
            return []
        if schedule.post_thread_ts:
            answer = self.client.conversations_replies(
                channel=channel, ts=schedule.post_thread_ts, include_all_metadata=True,
                limit=_LOOK_BACK,
            )  # fmt: skip
        else:
            answer = self.client.conversations_history(
                channel=channel, include_all_metadata=True, limit=_LOOK_BACK
            )
        return list(answer.get("messages") or [])


def _payload(run: Run) -> dict[str, str]:
    return {"schedule_id": run.schedule_id, "due_at": run.due_at}

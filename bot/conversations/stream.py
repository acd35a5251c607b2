"""The graph's steps as a plan streamed into the thread (Slack's chat streaming), each step a
task that turns from in progress to done as the graph moves, ending with the SQL it drafted.

One streamed message per job: `chat.startStream` at the first step (as a plan:
`task_display_mode` "plan"), `chat.appendStream` as later steps start, `chat.stopStream` when
the job ends, with the proposal's SQL as the output of its last task and its explanation as
text. Slack takes streams only as replies in a thread and, from a bot token, only with the
person they are for (`recipient_team_id`, `recipient_user_id`); so a conversation outside a
thread (a direct message's, kept from before those had threads) streams nothing. The stream only
leads up to what the thread shows today, and stands above it: a question's plan is started
(`open`) before its "Working on it…" message is posted, so that message, which becomes the
proposal card with its Approve/Edit/Reject buttons (or the clarifying question, or the failure),
comes below the plan; and every job stops its stream (`close`) before it posts what it came to,
so the answer of an approved query comes below the plan of its run and the plan's last pieces
are in before it. One small thread per job sends the other pieces, so the graph never waits on
Slack, and steps that start while a call is under way go together in the next one. A workspace
that refuses streams (an older one, a client or plan without them) is logged once at info and
left alone for an hour, like thread statuses (`bot.conversations.status`); any other refusal (a
stream Slack ended, which it does about five minutes after its start; a rate limit) costs the
rest of that job's plan. None is ever shown.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.outcome import Outcome
from bot.blocks.attachments import REFUSED_FOR_S, Refusals
from bot.blocks.base import cut, escaped

log = logging.getLogger(__name__)

#: The graph's steps (agent/graph.py's node names) as tasks of the plan: (task id, title). Steps
#: that do the same thing for a person share a task; a step not named here (approve, the wait
#: for a decision) adds none.
TASKS: dict[str, tuple[str, str]] = {
    "start": ("question", "Read the question"),
    "match": ("catalog", "Read the catalog"),
    "metric": ("metrics", "Look up the dbt metrics"),
    "vary": ("plan", "Plan the query"),
    "plan": ("plan", "Plan the query"),
    "generate": ("draft", "Draft the SQL"),
    "candidates": ("draft", "Draft the SQL"),
    "validate": ("check", "Check the SQL"),
    "paste": ("check", "Check the SQL"),
    "edit": ("check", "Check the SQL"),
    "check": ("check", "Check the SQL"),
    "execute": ("run", "Run the approved query"),
    "relax": ("loosen", "Loosen the query (it found no rows)"),
    "suggest": ("format", "Format the answer"),
    "finish": ("format", "Format the answer"),
}
#: The plan's title over a question's steps, and over an approved query's.
ASKING = "Working on your question"
RUNNING = "Running the approved query"
#: The last task of a question that ends with SQL to approve; its output is the SQL.
PROPOSED = ("proposed", "Proposed SQL: it waits for approval on its card")
#: Characters of SQL shown in that task (Slack refuses a longer piece); the card shows it all.
SQL_SHOWN = 2_900
#: Characters of explanation streamed, escaped as the card's (Slack takes 12,000 in one piece).
TEXT_SHOWN = 3_000

#: Refusals that say the workspace (or the app's install there) takes no streams; any other
#: (a thread Slack does not know, a stream that ran out of time, a rate limit) concerns one job.
_WORKSPACE_ERRORS = {
    "missing_scope",
    "unknown_method",
    "method_deprecated",
    "not_allowed_token_type",
    "access_denied",
    "feature_not_enabled",
    "not_supported",
}
#: Seconds a stream call may take.
STREAM_TIMEOUT_S = 5

Chunk = dict[str, Any]


class Streams:
    """Makes each job's `StepStream`; remembers the workspaces that refused streams lately."""

    def __init__(self, client: WebClient, *, enabled: bool = True) -> None:
        # its own client, without the bot's retries: a stream never waits out a rate limit
        self.client = WebClient(
            token=client.token, base_url=client.base_url, timeout=STREAM_TIMEOUT_S
        )
        self.enabled = enabled
        self._refused = Refusals()

    def thread(
        self, team: str, channel: str, thread_ts: str, user: str, *, title: str = ASKING
    ) -> StepStream:
        """The plan streamed to `user` in the thread rooted at `thread_ts`; one that sends
        nothing when streams are off, the question is in no thread, or its workspace refused
        streams lately."""
        active = self.enabled and bool(thread_ts) and not self._refused.refused(team)
        return StepStream(self, (team, channel, thread_ts, user), title, active=active)

    def refused(self, team: str, channel: str, error: str) -> None:
        """Slack refused a stream call: said once (at info) and, when the workspace itself
        refuses streams, not asked again there for an hour."""
        if error not in _WORKSPACE_ERRORS:
            log.info(
                "Slack refused a streamed plan in %s (%s); showing the cards only", channel, error
            )
        elif self._refused.note(team):
            log.info(
                "Workspace %s refused streamed plans (%s): its questions show the cards only "
                "for the next %d minutes (QUERYBOT_SLACK_STREAM=false turns streams off)",
                team,
                error,
                REFUSED_FOR_S // 60,
            )


class StepStream:
    """One job's streamed plan: `step` names the graph step that started, `end` what the job
    came to; leaving the `with` block stops the stream (once its last piece was sent)."""

    def __init__(
        self,
        streams: Streams,
        where: tuple[str, str, str, str],
        title: str,
        *,
        active: bool,
    ) -> None:
        self._streams = streams
        self._team, self._channel, self._thread_ts, self._user = where
        self._active = active
        self._changed = threading.Condition()
        #: Chunks not sent yet, the first the plan's title.
        self._pending: list[Chunk] = [{"type": "plan_update", "title": title}]
        self._started = False
        #: The stream's message, once Slack started it.
        self._ts = ""
        self._task: tuple[str, str] | None = None
        self._closing = False
        self._ended = False
        self._sender = threading.Thread(target=self._send_loop, name="querybot-stream", daemon=True)

    def step(self, name: str) -> None:
        """The graph started step `name` (an agent `on_step` callback)."""
        task = TASKS.get(name)
        with self._changed:
            if task is None or task == self._task or self._closing:
                return
            self._finish_task("complete")
            self._task = task
            self._pending.append(_task(task, "in_progress"))
            self._started = True
            self._changed.notify()

    def end(self, outcome: Outcome) -> None:
        """What the job came to: the last step done (or failed), and for a proposal its SQL
        and explanation."""
        with self._changed:
            if not self._started or self._closing:
                return
            failed = outcome.kind in ("failed", "cancelled")
            self._finish_task("error" if failed else "complete")
            proposal = outcome.proposal
            if outcome.kind == "proposal" and proposal is not None:
                sql = cut(proposal.sql, SQL_SHOWN)
                self._pending.append({**_task(PROPOSED, "complete"), "output": sql})
                if proposal.explanation:  # the model's words: no mention or link of its own
                    text = escaped(proposal.explanation, TEXT_SHOWN)
                    self._pending.append({"type": "markdown_text", "text": text})
            self._ended = True

    def open(self) -> None:
        """Start the plan now, its first task ("Read the question") under way, on the caller's
        thread: whatever is posted in the thread after this returns comes below the plan. Does
        nothing when the stream sends nothing, or Slack refused the start (then it sends
        nothing more)."""
        if not self._active or self._ts:
            return
        self.step("start")
        with self._changed:
            chunks, self._pending = self._pending, []
        self._ts = self._call("chat.startStream", chunks)
        if not self._ts:
            self._active = False

    def close(self) -> None:
        """Stop the stream now, once its last pieces are sent, so that what the job posts next
        comes below a finished plan; a step not finished by `end` is marked failed. Leaving the
        `with` block closes it too; closing again does nothing."""
        if not self._active:
            return
        with self._changed:
            if self._closing:
                return
            if not self._ended:  # the job broke off: its step did not finish
                self._finish_task("error")
            self._closing = True
            self._changed.notify()
        if self._sender.ident is None:  # closed before the job began: send the end from here
            self._sender.start()
        self._sender.join()

    def _finish_task(self, status: str) -> None:
        """Mark the task under way `status` (under the lock)."""
        if self._task is not None:
            self._pending.append(_task(self._task, status))
            self._task = None

    def __enter__(self) -> StepStream:
        if self._active and not self._closing:
            self._sender.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _send_loop(self) -> None:
        ts = self._ts
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: self._closing or (self._started and bool(self._pending))
                )
                if not self._started:
                    return  # ended before its first step: nothing to stream
                chunks, self._pending = self._pending, []
                closing = self._closing
            if not ts:
                ts = self._ts = self._call("chat.startStream", chunks)
                if not ts:
                    return
                chunks = []
            if closing:
                self._call("chat.stopStream", chunks, ts)
                return
            if chunks and not self._call("chat.appendStream", chunks, ts):
                self._call("chat.stopStream", [], ts)  # leave no stream spinning
                return

    def _call(self, method: str, chunks: list[Chunk], ts: str = "") -> str:
        """Send `chunks` with `method`; the stream's ts, or "" when Slack would not."""
        client = self._streams.client
        try:
            if method == "chat.startStream":
                response = client.chat_startStream(
                    channel=self._channel,
                    thread_ts=self._thread_ts,
                    recipient_team_id=self._team,
                    recipient_user_id=self._user,
                    task_display_mode="plan",
                    chunks=chunks,
                )
            elif method == "chat.appendStream":
                response = client.chat_appendStream(channel=self._channel, ts=ts, chunks=chunks)
            else:
                response = client.chat_stopStream(
                    channel=self._channel, ts=ts, chunks=chunks or None
                )
            return str(response.get("ts") or ts)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            self._streams.refused(self._team, self._channel, error)
        except Exception:  # a streamed plan is a courtesy: never let it break the job
            log.info("Could not stream a plan in %s", self._channel, exc_info=True)
        return ""


def _task(task: tuple[str, str], status: str) -> Chunk:
    """A `task_update` chunk: the task's title and status (Slack replaces both each time)."""
    task_id, title = task
    return {"type": "task_update", "id": task_id, "title": title, "status": status}

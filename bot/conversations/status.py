"""Slack's own status under a thread while the bot works on it ("querybot is drafting SQL…"),
named after the graph step under way, kept up past Slack's two-minute expiry, cleared at the end.

`assistant.threads.setStatus` (scope `chat:write` since March 2026) shows the status and rotates
its loading messages until the app posts in the thread, the status is set to "", or two minutes
pass. So a status that stands longer is sent again every `refresh_s`, and every job clears it
when it ends, whatever its outcome. One small thread per job sends them, so the graph never
waits on Slack and steps quicker than a call are skipped over. A status is a courtesy: a
workspace that refuses it (an older one, or an app installed without the scope) is logged once
at info and left alone for an hour (`Refusals`), and its questions show progress in their
message only, as before.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks.attachments import REFUSED_FOR_S, Refusals

log = logging.getLogger(__name__)

#: A status and the loading messages Slack rotates under it (Slack: at most 10, each and the
#: status at most 50 characters; Slack puts the app's name before the status).
Shown = tuple[str, tuple[str, ...]]

QUESTION: Shown = ("is reading the question…", ("Reading the question…",))
READING: Shown = ("is reading the catalog…", ("Reading the catalog…",))
METRICS: Shown = ("is looking up the metrics…", ("Looking up the dbt metrics…",))
PLANNING: Shown = ("is planning the query…", ("Planning the query…",))
DRAFTING: Shown = ("is drafting SQL…", ("Drafting SQL…", "Asking the model for SQL…"))
CHECKING: Shown = ("is checking the SQL…", ("Checking the SQL…", "Checking the tables it reads…"))
RUNNING: Shown = ("is running the query…", ("Running the query…",))
LOOSENING: Shown = ("is loosening the query…", ("No rows: loosening the query…",))
FORMATTING: Shown = ("is formatting the answer…", ("Formatting the answer…",))
CLEAR: Shown = ("", ())

#: The graph's steps (agent/graph.py's node names) as a person reads them. A step not named
#: here (approve, the wait for a decision, whose card is its own status) leaves the status as
#: it is.
STEPS: dict[str, Shown] = {
    "start": QUESTION,
    "match": READING,
    "metric": METRICS,
    "vary": PLANNING,
    "plan": PLANNING,
    "generate": DRAFTING,
    "candidates": DRAFTING,
    "validate": CHECKING,
    "paste": CHECKING,
    "edit": CHECKING,
    "check": CHECKING,
    "execute": RUNNING,
    "relax": LOOSENING,
    "suggest": FORMATTING,
    "finish": FORMATTING,
}

#: Refusals that say the workspace (or the app's install there) takes no statuses; any other
#: (a thread Slack does not know, a rate limit, Slack having a bad moment) concerns one thread.
_WORKSPACE_ERRORS = {
    "missing_scope",
    "unknown_method",
    "method_deprecated",
    "not_allowed_token_type",
    "access_denied",
    "feature_not_enabled",
}

#: Seconds between sends of a status that stands: inside Slack's two minutes.
REFRESH_S = 90.0
#: Seconds a status call may take.
STATUS_TIMEOUT_S = 5


class Statuses:
    """Makes each job's `ThreadStatus`; remembers the workspaces that refused statuses lately."""

    def __init__(
        self, client: WebClient, *, enabled: bool = True, refresh_s: float = REFRESH_S
    ) -> None:
        # its own client, without the bot's retries: a status never waits out a rate limit, and
        # a job's end waits on its last status at most `STATUS_TIMEOUT_S`
        self.client = WebClient(
            token=client.token, base_url=client.base_url, timeout=STATUS_TIMEOUT_S
        )
        self.enabled = enabled
        self.refresh_s = refresh_s
        self._refused = Refusals()

    def thread(self, team: str, channel: str, thread_ts: str) -> ThreadStatus:
        """The status of the thread rooted at `thread_ts`; one that shows nothing when statuses
        are off, the thread has no root, or its workspace refused them lately."""
        active = self.enabled and bool(thread_ts) and not self._refused.refused(team)
        return ThreadStatus(self, team, channel, thread_ts, active=active)

    def refused(self, team: str, channel: str, error: str) -> None:
        """Slack refused a status: said once (at info) and, when the workspace itself refuses
        statuses, not asked again there for an hour."""
        if error not in _WORKSPACE_ERRORS:
            log.info("Slack refused a thread status in %s (%s); showing none", channel, error)
        elif self._refused.note(team):
            log.info(
                "Workspace %s refused thread statuses (%s): its questions show their progress "
                "in their message only for the next %d minutes (the app needs the chat:write "
                "scope; QUERYBOT_SLACK_STATUS=false turns statuses off)",
                team,
                error,
                REFUSED_FOR_S // 60,
            )


class ThreadStatus:
    """One job's status in one thread: `step` names what the job does now; leaving the `with`
    block clears the status (once the last one was sent)."""

    def __init__(
        self, statuses: Statuses, team: str, channel: str, thread_ts: str, *, active: bool
    ) -> None:
        self._statuses = statuses
        self._team = team
        self._channel = channel
        self._thread_ts = thread_ts
        self._active = active
        self._changed = threading.Condition()
        self._wanted: Shown | None = None
        #: What the thread shows, as far as the bot knows (its sender thread's to change).
        self._sent: Shown | None = None
        self._closing = False
        self._sender = threading.Thread(target=self._send_loop, name="querybot-status", daemon=True)

    def step(self, name: str) -> None:
        """The graph started step `name` (an agent `on_step` callback)."""
        shown = STEPS.get(name)
        if shown is not None:
            self.show(shown)

    def show(self, shown: Shown) -> None:
        with self._changed:
            if not self._closing:
                self._wanted = shown
                self._changed.notify()

    def __enter__(self) -> ThreadStatus:
        if self._active:
            self._sender.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if not self._active:
            return
        with self._changed:
            self._closing = True
            if self._wanted is not None:
                self._wanted = CLEAR
            self._changed.notify()
        self._sender.join()

    def _news(self) -> bool:
        """Whether there is something to send now, or the job ended (under the lock)."""
        return self._wanted != self._sent or self._closing

    def _send_loop(self) -> None:
        while True:
            with self._changed:
                news = self._changed.wait_for(self._news, self._statuses.refresh_s)
                wanted, closing = self._wanted, self._closing
            if wanted == CLEAR and self._sent is None:
                return  # ended before its first status went out: nothing to clear
            if wanted is not None and (wanted != self._sent or (not news and wanted != CLEAR)):
                # a new status, or the same one standing `refresh_s`: sent again before it lapses
                if not self._send(wanted):
                    return
                self._sent = wanted
            if closing and wanted == self._sent:
                return

    def _send(self, shown: Shown) -> bool:
        """Set the thread's status; False when Slack would not (nothing more is sent)."""
        status, loading = shown
        try:
            self._statuses.client.assistant_threads_setStatus(
                channel_id=self._channel,
                thread_ts=self._thread_ts,
                status=status,
                loading_messages=list(loading) or None,
            )
            return True
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            self._statuses.refused(self._team, self._channel, error)
        except Exception:  # a status is a courtesy: never let it break the job
            log.info("Could not set a thread status in %s", self._channel, exc_info=True)
        return False

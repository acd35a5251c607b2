"""What the load benchmarks share: the real bot process on the Slack Web API stand-in, with the
time of every Web API call the bot makes, and Slack's side of a question (a signed mention, an
Approve click) with each request's ack time measured.

The bot runs as `querybot run --http` (the tests' `BotProcess`) and the stand-in is the tests' own
(`SlackStandin`), so the figures cover the whole path: signature check, Bolt, listeners,
the worker pool, the agent's graph on the demo warehouse, and the Slack calls back.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from bot.blocks import APPROVE_ACTION
from tests.support import slack_payloads as payloads
from tests.support.botproc import SECRET, BotProcess
from tests.support.slack_payloads import action_request, event_request, signed_headers
from tests.support.standin import Call, Posted, SlackStandin

#: Slack's limit for acknowledging a request; later, Slack retries it or shows an error.
ACK_LIMIT_S = 3.0


class TimedStandin(SlackStandin):
    """The Web API stand-in, also noting when (time.monotonic) it answered each call."""

    def __init__(self, latency_s: float = 0) -> None:
        super().__init__()
        self.stamps: list[float] = []
        #: Each call is answered this much later (Slack's own API takes tens to hundreds of ms).
        self.latency_s = latency_s

    def _answer(
        self, method: str, params: dict[str, Any], token: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        if self.latency_s:
            time.sleep(self.latency_s)  # on the request's own server thread, outside the lock
        return super()._answer(method, params, token)

    def _record(self, call: Call) -> None:  # called under the stand-in's lock
        self.stamps.append(time.monotonic())
        super()._record(call)

    def first_call(self, check: Callable[[Call], bool]) -> float | None:
        """When the first call for which `check` holds was answered."""
        with self._lock:
            return next((t for c, t in zip(self.calls, self.stamps, strict=True) if check(c)), None)

    def threads_done(
        self, channel: str, roots: Iterable[str], check: Callable[[Posted], bool]
    ) -> dict[str, Posted]:
        """root ts -> the first message of that thread for which `check` holds (threads with
        none left out). Reads the messages in place: cheaper than `thread()` for many threads."""
        wanted = set(roots)
        found: dict[str, Posted] = {}
        with self._lock:
            for (ch, _), message in self.messages.items():
                root = message.thread_ts
                if ch == channel and root in wanted and check(message):
                    old = found.get(root)
                    if old is None or float(message.ts) < float(old.ts):
                        found[root] = message
        return found

    def wait_threads(
        self,
        channel: str,
        roots: Iterable[str],
        check: Callable[[Posted], bool],
        *,
        timeout: float,
    ) -> dict[str, Posted]:
        """`threads_done` once every thread has its message, or at `timeout` (what there is)."""
        roots = list(roots)
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = self.threads_done(channel, roots, check)
                left = deadline - time.monotonic()
                if len(found) == len(roots) or left <= 0:
                    return found
                self._lock.wait(min(left, 0.5))


def is_proposal(message: Posted) -> bool:
    return APPROVE_ACTION in message.action_values()


def is_result(message: Posted) -> bool:
    return "Sources:" in message.all_text()


def shown_at(slack: TimedStandin, message: Posted, check: Callable[[Posted], bool]) -> float:
    """When the stand-in answered the call that first made `message` look as `check` wants
    (the chat.postMessage that posted it, or the chat.update that turned it into that)."""

    def made_it(call: Call) -> bool:
        if call.method not in {"chat.postMessage", "chat.update"} or not call.ok:
            return False
        if (call.params.get("ts") or call.answer.get("ts")) != message.ts:
            return False
        shown = Posted(
            channel=message.channel,
            ts=message.ts,
            thread_ts=message.thread_ts,
            text=str(call.params.get("text") or ""),
            blocks=call.params.get("blocks") or [],
        )
        return check(shown)

    at = slack.first_call(made_it)
    assert at is not None, f"no call posted {message.ts}"
    return at


@dataclass(frozen=True)
class Sent:
    """One request delivered to the bot as Slack would, and how the bot acknowledged it."""

    at: float
    status: int
    ack_s: float

    @property
    def acked(self) -> bool:
        return self.status == 200 and self.ack_s <= ACK_LIMIT_S


def _deliver(bot: BotProcess, text: str, content_type: str) -> Sent:
    headers = signed_headers(SECRET, text)
    started = time.monotonic()
    status, _ = bot.post(text, content_type, headers)
    return Sent(started, status, time.monotonic() - started)


def ask(
    bot: BotProcess, channel: str, question: str, *, user: str = payloads.ALICE
) -> tuple[str, Sent]:
    """Mention the bot with `question` at the top of `channel`; returns (thread root ts, sent).
    The stand-in learns the mention, as Slack knows the app saw it (a status may name it)."""
    body = payloads.mention(channel, question, user=user)
    bot.slack.saw_event(body["event"])
    return body["event"]["ts"], _deliver(bot, *event_request(body))


def approve(bot: BotProcess, proposal: Posted, *, user: str = payloads.BOB) -> Sent:
    """Press Approve on `proposal`."""
    return _deliver(bot, *action_request(payloads.click(proposal, APPROVE_ACTION, user=user)))


def all_at_once(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run every job on its own thread, released together; their results in order."""
    start = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def run(i: int) -> None:
        start.wait()
        results[i] = jobs[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> tuple[float, float]:
    """(peak, current) resident memory of process `pid` in MiB (VmHWM, VmRSS)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmHWM", "VmRSS"}:
            fields[name] = int(value.split()[0]) / 1024
    return fields["VmHWM"], fields["VmRSS"]


@contextmanager
def scratch_state(server_url: str) -> Iterator[str]:
    """A new, empty database on the PostgreSQL server that `server_url` (postgresql://...) logs
    in to as a user that may create databases: yields the database's URL, for
    QUERYBOT_STATE_URL, then drops it (closing whatever connection is left to it)."""
    name = f"querybot_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlsplit(server_url)._replace(path=f"/{name}").geturl()
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

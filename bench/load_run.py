"""One bot process of the load benchmark, on its own Web API stand-in and data directory, ready
when it answers a signed `url_verification`; it collects the functional problems it meets."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.load_slack import (
    ACK_LIMIT_S,
    SECRET,
    BotProcess,
    Sent,
    TimedStandin,
    payloads,
    scratch_state,
)


class Run:
    """One bot process on its own stand-in and data directory (and, with `state_server`, its
    own PostgreSQL state database); collects functional problems."""

    def __init__(
        self,
        work: Path,
        demo: Path | None,
        script: list[dict[str, Any]],
        env: dict[str, str] | None = None,
        *,
        slack_latency_s: float = 0,
        state_server: str | None = None,
    ) -> None:
        work.mkdir(parents=True)
        if demo is not None:
            shutil.copy(demo, work / demo.name)
        path = work / "script.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in script), encoding="utf-8")
        self._state = ExitStack()
        env = dict(env or {})
        if state_server:
            env["QUERYBOT_STATE_URL"] = self._state.enter_context(scratch_state(state_server))
        self.state = "postgresql" if state_server else "sqlite"
        self.slack = TimedStandin(slack_latency_s)
        self.bot = VerifiedBot(slack=self.slack, data_dir=work, script=path, env=env)
        self.channel = payloads.new_channel()
        self.problems: list[str] = []

    def start(self) -> float:
        """Start the stand-in and the bot; seconds until the bot answered url_verification."""
        self.slack.start()
        started = time.monotonic()
        self.bot.start(timeout=120)
        return time.monotonic() - started

    def stop(self) -> None:
        try:
            self.bot.stop()
        finally:
            self.slack.stop()
            self._state.close()
        self.problems += [
            f"Slack would refuse {c.method}: {c.answer.get('error')}" for c in self.slack.refused
        ]

    def check_acks(self, what: str, sent: Sequence[Sent]) -> None:
        late = [s for s in sent if not s.acked]
        if late:
            worst = max(late, key=lambda s: s.ack_s)
            self.problems.append(
                f"{len(late)} of {len(sent)} {what} not acked with 200 within {ACK_LIMIT_S:g} s "
                f"(e.g. status {worst.status} after {worst.ack_s:.2f} s)"
            )

    def wait(self, roots: list[str], check: Any, what: str, timeout: float) -> dict[str, Any]:
        found = self.slack.wait_threads(self.channel, roots, check, timeout=timeout)
        if len(found) < len(roots):
            self.problems.append(
                f"{len(roots) - len(found)} of {len(roots)} questions got no {what}"
            )
        return found


class VerifiedBot(BotProcess):
    """Ready when a signed `url_verification` is answered with its challenge (as Slack checks a
    Request URL), not merely when the port accepts connections."""

    def _ready(self, connections_before: int) -> bool:
        from tests.support.slack_payloads import signed_headers

        body = json.dumps({"token": "x", "challenge": "ready?", "type": "url_verification"})
        try:
            status, text = self.post(body, "application/json", signed_headers(SECRET, body))
        except OSError:
            return False
        return status == 200 and "ready?" in text

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

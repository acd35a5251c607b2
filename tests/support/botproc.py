"""The real bot as a subprocess (`querybot run`), pointed at the stand-ins.

`BotProcess` starts `querybot run --http --port N` (or Socket Mode) with the environment a
deployment would set, waits until it serves, and delivers Slack requests the way Slack does:
signed HTTP posts, or envelopes over the Socket Mode stand-in. Its log goes to a file the tests
can wait on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import duckdb

from connectors.demo.build import marker_path
from tests.support import pgdb
from tests.support.demo_day import TODAY
from tests.support.slack_payloads import action_request, event_request, signed_headers
from tests.support.socket_standin import SocketModeStandin
from tests.support.standin import SlackStandin

SECRET = "standin-signing-secret"
QUERYBOT = Path(sys.executable).with_name("querybot")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sql_reply(sql: str, explanation: str = "Answers the question.") -> dict[str, str]:
    """One scripted model reply proposing `sql`."""
    return {"kind": "sql", "explanation": explanation, "sql": sql}


def write_script(path: Path, replies: list[dict[str, str] | str]) -> Path:
    """A `scripted:` model file: one reply a line, objects as JSON, strings as raw text."""
    path.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
    return path


def data_dir_with(tmp: Path, demo: Path) -> Path:
    """A fresh data directory holding a copy of the prebuilt demo warehouse, with the file
    saying which last day it holds (without it the bot would build the demo again)."""
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copy(demo, tmp / demo.name)
    shutil.copy(marker_path(demo), marker_path(tmp / demo.name))
    return tmp


class BotProcess:
    """One `querybot run` process: HTTP mode, or Socket Mode when `socket_mode` is given."""

    def __init__(
        self,
        *,
        slack: SlackStandin,
        data_dir: Path,
        script: Path,
        socket_mode: SocketModeStandin | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.slack = slack
        self.socket_mode = socket_mode
        self.data_dir = data_dir
        self.script = script
        self.port = free_port()
        self.log_path = data_dir / "bot.log"
        self.extra_env = env or {}
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    def _env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "QUERYBOT_"))}
        env = {
            **keep,
            "PYTHONUNBUFFERED": "1",
            "SLACK_BOT_TOKEN": "xoxb-standin",
            "SLACK_API_URL": self.slack.url,
            "QUERYBOT_MODEL": f"scripted:{self.script}",
            "QUERYBOT_DATA_DIR": str(self.data_dir),
            "QUERYBOT_WAREHOUSE": "demo",
            # the day the demo was built for (tests/conftest.py): its data ends 2026-10-31
            "QUERYBOT_TODAY": TODAY.isoformat(),
            # the cards-only thread most end-to-end tests read; tests/e2e/test_streaming.py
            # turns the streamed plan on
            "QUERYBOT_SLACK_STREAM": "false",
            # no scheduling engine (DBOS) in bots that schedule nothing; tests/e2e/schedules
            # turns it on
            "QUERYBOT_SCHEDULES": "false",
            **self.extra_env,
        }
        if self.socket_mode:  # Socket Mode requests are not signed: no secret needed
            env["SLACK_APP_TOKEN"] = "xapp-standin"
        else:
            env["SLACK_SIGNING_SECRET"] = SECRET
        return env

    def start(self, timeout: float = 60) -> BotProcess:
        args = [str(QUERYBOT), "run"]
        if not self.socket_mode:
            args += ["--http", "--port", str(self.port)]
        connections = self.socket_mode.connections if self.socket_mode else 0
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                args, env=self._env(), cwd=self.data_dir, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while not self._ready(connections):
            if self._proc.poll() is not None:
                raise AssertionError(f"querybot exited ({self._proc.returncode}):\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"querybot did not get ready in {timeout:g} s:\n{self.log()}")
            time.sleep(0.1)
        return self

    def _ready(self, connections_before: int) -> bool:
        if self.socket_mode:
            return self.socket_mode.connections > connections_before
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    @property
    def running(self) -> bool:
        """Started, and not exited (nor stopped or killed by a test)."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> int:
        """SIGTERM, as `docker stop` sends; returns the exit code."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGTERM)
        try:
            return self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            raise AssertionError(f"querybot ignored SIGTERM:\n{self.log()}") from None

    def kill(self) -> None:
        """SIGKILL (`kill -9`, a crash, a lost machine): nothing runs after this."""
        assert self._proc is not None
        self._proc.kill()
        self._proc.wait()

    def __enter__(self) -> BotProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self._proc and self._proc.poll() is None:
            self.stop()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_log(self, pattern: str, *, timeout: float = 20) -> re.Match[str]:
        """Wait until the bot's log matches `pattern` (polls the log file)."""
        deadline = time.monotonic() + timeout
        while not (found := re.search(pattern, self.log())):
            if time.monotonic() > deadline:
                raise AssertionError(f"no log line matching {pattern!r}:\n{self.log()[-4000:]}")
            time.sleep(0.1)
        return found

    # -- delivering Slack's requests --------------------------------------------------------

    def post(self, body: str, content_type: str, headers: dict[str, str]) -> tuple[int, str]:
        """POST to /slack/events; returns (status, body)."""
        request = urllib.request.Request(
            self.url,
            data=body.encode(),
            headers={"Content-Type": content_type, **headers},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def send_event(self, body: dict[str, Any], *, retry: int = 0) -> None:
        """Deliver an Events API body (as retry number `retry` when > 0) and check the ack.
        The stand-in learns the event's message: the app has seen it (a status may name it)."""
        self.slack.saw_event(body.get("event") or {})
        if self.socket_mode:
            envelope = self.socket_mode.send("events_api", body, retry_attempt=retry)
            self.socket_mode.wait_ack(envelope)
            return
        text, content_type = event_request(body)
        headers = signed_headers(SECRET, text)
        if retry:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        status, answer = self.post(text, content_type, headers)
        assert status == 200, (status, answer)

    def send_click(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Deliver an interactive payload (block_actions, view_submission), check the ack and
        return what the ack answered ({} for an empty ack)."""
        if self.socket_mode:
            envelope = self.socket_mode.send("interactive", payload)
            return self.socket_mode.wait_ack(envelope).get("payload") or {}
        text, content_type = action_request(payload)
        status, answer = self.post(text, content_type, signed_headers(SECRET, text))
        assert status == 200, (status, answer)
        return json.loads(answer) if answer.strip() else {}


def audit_events(bot: BotProcess, **where: str) -> list[dict[str, Any]]:
    """Rows of the agent's append-only audit log (`proposed`, `approved`, `executed`, ...)
    matching `where` (column = value): the record of what really ran. The log is in the bot's
    data directory, or in the PostgreSQL database of its QUERYBOT_STATE_URL."""
    state_url = bot.extra_env.get("QUERYBOT_STATE_URL")
    if state_url:
        clause = " AND ".join(f"{column} = %s" for column in where) or "TRUE"
        query = f"SELECT * FROM audit WHERE {clause} ORDER BY id"
        return pgdb.rows(state_url, query, *where.values())
    path = bot.data_dir / "audit.sqlite"
    clause = " AND ".join(f"{column} = ?" for column in where) or "1 = 1"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        con.row_factory = sqlite3.Row
        rows = con.execute(f"SELECT * FROM audit WHERE {clause} ORDER BY id", tuple(where.values()))
        return [dict(row) for row in rows]


def expected_rows(demo_file: Path, sql: str) -> list[tuple[Any, ...]]:
    """What `sql` returns, computed by the test itself with DuckDB on the demo file.

    The file is attached to a fresh in-memory database: the session's shared connector holds it
    open with its own settings, and DuckDB refuses a second connect() with different ones."""
    with duckdb.connect() as con:
        con.execute("ATTACH ? AS demo (READ_ONLY)", [str(demo_file)])
        con.execute("USE demo")
        return con.execute(sql).fetchall()

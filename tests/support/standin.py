"""A local stand-in for Slack's Web API, strict where Slack is strict.

It serves `http://127.0.0.1:PORT/api/<method>` from a background thread, records every call,
keeps the messages the bot posts (so a test can read a thread as a person would see it), and
answers like Slack: `ok`, `ts`, `channel`, and Slack's error codes. What each method does lives
beside this module: messages (with their metadata) and views in `standin_messages` (checked by
`slack_block_rules`, `slack_chart_rules` and `slack_mrkdwn`), reading a channel's history and a
thread in `standin_history`, AI app statuses, titles and prompts, with the scopes they need, in
`standin_assistant` (`statuses` keeps each status set), chat streaming in `standin_stream`
(`streams` keeps each stream's pieces), files in `standin_files` (`uploads` keeps each shared
file's bytes, `downloads` every download), the workspace directory in `standin_directory`
(`usergroups`, `emails`, `time_zones` and `channels`, which a test fills), and what is kept in
`standin_records`. This module is the server, the test controls and the reading of what
happened, and the one the tests import (the records and checks are importable from here too).
A refused call answers `invalid_blocks` (or `msg_too_long`, `no_text`...) and is listed in
`refused`, so a test can assert that the bot never sent anything Slack would refuse; mrkdwn Slack
would garble is listed in `mrkdwn_problems`.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from tests.support.slack_block_rules import check_blocks, check_view
from tests.support.slack_mrkdwn import mrkdwn_problems
from tests.support.standin_assistant import AssistantMethods, StatusSet, manifest_scopes
from tests.support.standin_directory import DirectoryMethods
from tests.support.standin_files import FileMethods
from tests.support.standin_history import HistoryMethods
from tests.support.standin_messages import MessageMethods
from tests.support.standin_records import (
    BOT_ID,
    BOT_USER_ID,
    TEAM_ID,
    Call,
    Posted,
    Refused,
    SharedBody,
    Upload,
)
from tests.support.standin_stream import Stream, StreamMethods

#: Imported from here by the tests, whatever module holds them.
__all__ = [
    "BOT_ID",
    "BOT_USER_ID",
    "TEAM_ID",
    "Call",
    "Posted",
    "Refused",
    "SlackStandin",
    "StatusSet",
    "Stream",
    "Upload",
    "check_blocks",
    "check_view",
    "mrkdwn_problems",
]

T = TypeVar("T")


class SlackStandin(
    MessageMethods,
    HistoryMethods,
    AssistantMethods,
    StreamMethods,
    FileMethods,
    DirectoryMethods,
):
    """The Web API stand-in. Use as a context manager, or `start()` / `stop()`."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self.calls: list[Call] = []
        self.messages: dict[tuple[str, str], Posted] = {}
        self.ephemerals: list[dict[str, Any]] = []
        #: Views opened (`views.open`: trigger_id, view) and published (`views.publish`).
        self.opened_views: list[dict[str, Any]] = []
        self.published_views: list[dict[str, Any]] = []
        self.uploads: list[Upload] = []
        #: Usergroup id -> member user ids, for `usergroups.users.list`.
        self.usergroups: dict[str, list[str]] = {}
        #: User id -> email address, for `users.info` (a user not listed is unknown to Slack).
        self.emails: dict[str, str] = {}
        #: Users who left the workspace (`deactivate`): `users.info` says `deleted`.
        self.deactivated: set[str] = set()
        #: User id -> IANA time zone, for `users.info` (`set_time_zone`; else `DEFAULT_TZ`).
        self.time_zones: dict[str, str] = {}
        #: Channel id -> the `channel` object `conversations.info` returns (else a plain channel).
        self.channels: dict[str, dict[str, Any]] = {}
        #: Channel id -> the people in it, for `users.conversations`.
        self.members: dict[str, set[str]] = {}
        self._pending_uploads: dict[str, dict[str, Any]] = {}
        #: Every status set (`assistant.threads.setStatus`), and what each thread shows now.
        self.statuses: list[StatusSet] = []
        self._shown: dict[tuple[str, str], str] = {}
        #: `assistant.threads.setSuggestedPrompts` calls' arguments.
        self.suggested_prompts: list[dict[str, Any]] = []
        #: Every chat stream started, and the error a workspace without streams answers.
        self.streams: list[Stream] = []
        self._stream_refusal = ""
        #: People's messages delivered to the app: (channel, ts) -> its thread_ts, if a reply.
        self._seen: dict[tuple[str, str], str | None] = {}
        #: The bot scopes granted (the manifest's); checked for the methods `METHOD_SCOPES` names.
        self.scopes = manifest_scopes()
        self._revoked: set[str] = set()
        #: Files people shared (`add_file`): id -> the file object, and what a download serves.
        self.shared_files: dict[str, dict[str, Any]] = {}
        self._file_bodies: dict[str, SharedBody] = {}
        #: Every GET of a file's `url_private_download`: (file id, token sent, status).
        self.downloads: list[tuple[str, str, int]] = []
        self._ids = itertools.count(1)
        self.mrkdwn_problems: list[str] = []
        #: The Socket Mode URL `apps.connections.open` hands out.
        self.socket_mode_url = ""
        self._rate_limits: dict[str, list[int]] = {}
        self._server_errors: dict[str, list[int]] = {}
        self._refused_types: set[str] = set()
        #: Tokens Slack does not accept (revoked, mistyped): token -> the error it answers.
        self._refused_tokens: dict[str, str] = {}
        self._ts = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL for `SLACK_API_URL` / `WebClient(base_url=...)`."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/api/"

    def start(self) -> SlackStandin:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SlackStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test controls ----------------------------------------------------------------------

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        """Answer the next `times` calls of `method` with HTTP 429 and `Retry-After`."""
        with self._lock:
            self._rate_limits[method] = [retry_after] * times

    def server_error(self, method: str, *, status: int = 500, times: int = 1) -> None:
        """Answer the next `times` calls of `method` with HTTP `status` (Slack having a bad
        moment); the call does nothing."""
        with self._lock:
            self._server_errors[method] = [status] * times

    def refuse_token(self, token: str, error: str = "invalid_auth") -> None:
        """Answer every call made with `token` with `error`, as Slack does a revoked token."""
        with self._lock:
            self._refused_tokens[token] = error

    def refuse_block_type(self, block_type: str) -> None:
        """Act like a workspace that does not know `block_type` (answers `invalid_blocks`)."""
        with self._lock:
            self._refused_types.add(block_type)

    def allow_block_type(self, block_type: str) -> None:
        with self._lock:
            self._refused_types.discard(block_type)

    # -- reading what happened ------------------------------------------------------------------

    def assert_clean(self) -> None:
        """Fail if the bot sent anything Slack would refuse, or mrkdwn it did not escape."""
        refused = [f"{c.method}: {c.answer.get('error')} ({c.detail})" for c in self.refused]
        assert not refused, f"the bot sent what Slack would refuse: {refused}"
        assert not self.mrkdwn_problems, f"unescaped mrkdwn: {self.mrkdwn_problems}"

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    @property
    def refused(self) -> list[Call]:
        """Calls refused for what the bot sent (not the refusals a test asked for)."""
        with self._lock:
            return [c for c in self.calls if not c.ok and not c.injected]

    def thread(self, channel: str, thread_ts: str) -> list[Posted]:
        """The bot's messages in a thread as they stand now, oldest first."""
        with self._lock:
            found = [
                m
                for (ch, _), m in self.messages.items()
                if ch == channel and m.thread_ts == thread_ts
            ]
            # Snapshots: a test keeps what it saw (as a person's screen does) after updates.
            return sorted(copy.deepcopy(found), key=lambda m: float(m.ts))

    def uploads_in(self, channel: str, thread_ts: str | None) -> list[Upload]:
        with self._lock:
            return [u for u in self.uploads if u.channel == channel and u.thread_ts == thread_ts]

    def ephemerals_for(self, channel: str, user: str) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.ephemerals if e["channel"] == channel and e["user"] == user]

    def wait_for(self, check: Callable[[], T | None], *, timeout: float = 30, what: str = "") -> T:
        """Wait until `check()` returns something truthy (re-checked after every call)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = check()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    recent = [
                        f"{c.method}:{c.answer.get('error') or 'ok'}" for c in self.calls[-15:]
                    ]
                    raise AssertionError(
                        f"timed out after {timeout:g} s waiting for {what or check}; "
                        f"last calls: {recent}"
                    )
                self._lock.wait(min(left, 0.5))

    def wait_thread(
        self,
        channel: str,
        thread_ts: str,
        check: Callable[[list[Posted]], T | None],
        *,
        timeout: float = 30,
        what: str = "",
    ) -> T:
        """Wait until `check(messages of the thread)` is truthy and return its value."""
        return self.wait_for(
            lambda: check(self.thread(channel, thread_ts)), timeout=timeout, what=what
        )

    # -- the API ----------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

            def _serve(self) -> None:
                url = urlsplit(self.path)
                method = url.path.rsplit("/", 1)[-1]
                length = int(self.headers.get("Content-Length") or 0)
                if url.path.startswith("/files-pri/"):
                    auth = self.headers.get("Authorization", "")
                    standin._serve_file(self, url.path, auth.removeprefix("Bearer "))
                    return
                if url.path.startswith("/upload/"):
                    status = standin._receive_upload(method, self.rfile.read(length))
                    self.send_response(status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"OK")
                    return
                raw = self.rfile.read(length).decode("utf-8") if length else ""
                params = _params(raw, self.headers.get("Content-Type", ""), url.query)
                auth = self.headers.get("Authorization", "")
                token = auth.removeprefix("Bearer ") if auth else str(params.pop("token", ""))
                status, answer, headers = standin._answer(method, params, token)
                body = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def _answer(
        self, method: str, params: dict[str, Any], token: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            pending = self._rate_limits.get(method)
            if pending:
                retry_after = pending.pop(0)
                answer = {"ok": False, "error": "ratelimited"}
                call = Call(method, params, token, answer, 429, injected=True)
                self._record(call)
                return 429, call.answer, {"Retry-After": str(retry_after)}
            failing = self._server_errors.get(method)
            if failing:
                status = failing.pop(0)
                call = Call(method, params, token, {"ok": False, "error": "fatal_error"}, status)
                call.injected = True
                self._record(call)
                return status, call.answer, {}
            try:
                answer = self._dispatch(method, params, token)
                call = Call(method, params, token, answer)
            except Refused as refusal:
                answer = {"ok": False, "error": refusal.error}
                call = Call(
                    method, params, token, answer, detail=str(refusal), injected=refusal.injected
                )
            self._record(call)
            # as Slack says on every answer, the token's scopes (read by the bot's own checks)
            return 200, answer, {"x-oauth-scopes": ",".join(sorted(self.scopes))}

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        self._lock.notify_all()

    def _dispatch(self, method: str, params: dict[str, Any], token: str) -> dict[str, Any]:
        if token in self._refused_tokens:
            raise Refused(self._refused_tokens[token], "a token the test refused", injected=True)
        if method == "apps.connections.open":
            if not token.startswith("xapp-"):
                raise Refused(
                    "not_allowed_token_type", "apps.connections.open needs an xapp- token"
                )
            if not self.socket_mode_url:
                raise Refused("internal_error", "no Socket Mode stand-in is running")
            return {"ok": True, "url": self.socket_mode_url}
        if not token:
            raise Refused("not_authed", "no token")
        if not token.startswith("xoxb-"):
            raise Refused("invalid_auth", f"{method} needs a bot token")
        handler = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._permalink,
            "users.conversations": self._users_conversations,
            "views.open": self._views_open,
            "views.publish": self._views_publish,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "usergroups.users.list": self._usergroup_users,
            "users.info": self._users_info,
            "conversations.info": self._conversation_info,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "files.info": self._files_info,
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setTitle": self._set_title,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
        }.get(method)
        if handler is None:
            raise Refused("unknown_method", f"the stand-in does not serve {method}")
        self._check_scope(method)
        return handler(params)


def _params(raw: str, content_type: str, query: str) -> dict[str, Any]:
    """The call's arguments, whether sent as JSON, as a form, or in the query string."""
    params: dict[str, Any] = {k: v[0] for k, v in parse_qs(query).items()}
    if raw and "json" in content_type:
        params.update(json.loads(raw))
    elif raw:
        params.update({k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()})
        for key in ("blocks", "attachments", "metadata"):
            if isinstance(params.get(key), str):
                # else check_blocks (or check_metadata) refuses it
                with contextlib.suppress(json.JSONDecodeError):
                    params[key] = json.loads(params[key])
    return params

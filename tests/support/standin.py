"""A local stand-in for Slack's Web API, strict where Slack is strict.

It serves `http://127.0.0.1:PORT/api/<method>` from a background thread, records every call,
keeps the messages the bot posts (so a test can read a thread as a person would see it), and
answers like Slack: `ok`, `ts`, `channel`, and Slack's error codes. Blocks are checked the way
Slack checks them: each one must parse with slack_sdk's models and survive `to_dict()` (which
enforces slack_sdk's field limits) unchanged, and the message-level limits slack_sdk does not model
are checked here (50 blocks, one table of at most 100 rows by 20 cells, 40,000 characters of text);
`data_visualization` blocks, which slack_sdk does not model, are checked by `check_chart`.
Views (`views.open`, `views.publish`) are checked the same way with the view limits (100 blocks,
`private_metadata` 3,000 characters, a plain_text_input's `max_length` and initial value at most
3,000). Files go through the three calls of `files_upload_v2`: `files.getUploadURLExternal` hands
out a local upload URL, the bytes are POSTed there, `files.completeUploadExternal` shares them;
`uploads` keeps each shared file's bytes. Files people share (`add_file`) get a
`url_private_download` that serves their bytes only to a bot token (anything else gets Slack's
HTML sign-in page), recorded in `downloads`; `files.info` describes them.
`usergroups.users.list`, `users.info` and `conversations.info` answer from `usergroups`, `emails`
and `channels`, which a test fills.
A refused call answers `invalid_blocks` (or `msg_too_long`, `no_text`...) and is listed in
`refused`, so a test can assert that the bot never sent anything Slack would refuse.

mrkdwn is checked too: a `<` or `>` that is not part of a Slack control sequence (`<@U123>`,
`<#C1>`, `<!here>`, `<https://…|…>`), or an `&` that does not start `&amp;`, `&lt;`, `&gt;`, is
listed in `mrkdwn_problems` (Slack would not refuse it, but it would garble the message).
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote, unquote, urlsplit

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

T = TypeVar("T")

TEAM_ID = "T0TEST"
BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"

MAX_BLOCKS = 50
MAX_TEXT = 40_000
TABLE_ROWS = 100
TABLE_CELLS = 20
VIEW_BLOCKS = 100
PRIVATE_METADATA = 3000
#: data_visualization: blocks a message (as slack-morphism reads Slack's page), title and axis
#: labels, segment/series/category labels, series or segments a chart, points a series.
CHARTS = 2
CHART_TITLE = 50
CHART_LABEL = 20
CHART_SERIES = 6
CHART_POINTS = 20
INPUT_TEXT = 3000
#: files.getUploadURLExternal refuses files over 1 GB; the stand-in keeps it small.
MAX_UPLOAD = 50 * 1024 * 1024

_CONTROL = re.compile(
    r"<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>]*)?|![a-z]+(?:\^[^<>]*)?(?:\|[^<>]*)?"
    r"|(?:https?://|mailto:)[^|<>\s]+(?:\|[^<>]*)?)>"
)
_ENTITY = re.compile(r"&(?:amp|lt|gt);")


@dataclass
class Call:
    """One Web API call as the stand-in received and answered it."""

    method: str
    params: dict[str, Any]
    token: str
    #: The JSON answer (`ok`, `error`, ...).
    answer: dict[str, Any]
    status: int = 200
    #: Why a call was refused, in words, for assertion messages.
    detail: str = ""
    #: Refused on a test's request (`rate_limit`, `refuse_block_type`), not for what was sent.
    injected: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.answer.get("ok"))


@dataclass
class Upload:
    """A file shared with `files.completeUploadExternal`."""

    file_id: str
    filename: str
    title: str
    channel: str
    thread_ts: str | None
    content: bytes


@dataclass(frozen=True)
class SharedBody:
    """What a shared file's download URL serves."""

    file_id: str
    content: bytes
    mimetype: str
    send_length: bool


@dataclass
class Posted:
    """A message as it stands now in the stand-in's workspace."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]]
    #: Every earlier version (text, blocks) before the latest chat.update.
    history: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    def all_text(self) -> str:
        """The text and every text inside the blocks, joined (for simple content checks)."""
        return "\n".join([self.text, *_texts(self.blocks)])

    def action_values(self) -> dict[str, str]:
        """action_id -> value of every button in the message."""
        return {
            el["action_id"]: el.get("value", "")
            for block in self.blocks
            if block["type"] == "actions"
            for el in block["elements"]
        }

    def table(self) -> list[list[str]] | None:
        """The table block's cells as text, header row first; None without a table."""
        for block in self.blocks:
            if block["type"] == "table":
                return [[cell.get("text", "") for cell in row] for row in block["rows"]]
        return None


class Refused(Exception):
    """A call Slack would refuse: `error` is Slack's code, the message says why."""

    def __init__(self, error: str, detail: str, *, injected: bool = False) -> None:
        super().__init__(detail)
        self.error = error
        self.injected = injected


class SlackStandin:
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
        #: Channel id -> the `channel` object `conversations.info` returns (else a plain channel).
        self.channels: dict[str, dict[str, Any]] = {}
        self._pending_uploads: dict[str, dict[str, Any]] = {}
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
            return 200, answer, {}

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
            "views.open": self._views_open,
            "views.publish": self._views_publish,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "usergroups.users.list": self._usergroup_users,
            "users.info": self._users_info,
            "conversations.info": self._conversation_info,
            "files.info": self._files_info,
        }.get(method)
        if handler is None:
            raise Refused("unknown_method", f"the stand-in does not serve {method}")
        return handler(params)

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://standin.slack.com/",
            "team": "Stand-in",
            "user": "querybot",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _new_ts(self) -> str:
        return f"{1_800_000_000 + next(self._ts)}.000100"

    def _content(self, params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        text = str(params.get("text") or "")
        blocks = params.get("blocks") or []
        if not text and not blocks:
            raise Refused("no_text", "neither text nor blocks")
        if len(text) > MAX_TEXT:
            raise Refused("msg_too_long", f"text of {len(text)} characters")
        check_blocks(blocks, self._refused_types)
        self.mrkdwn_problems += mrkdwn_problems(text, blocks)
        return text, blocks

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel:
            raise Refused("channel_not_found", "no channel")
        text, blocks = self._content(params)
        ts = self._new_ts()
        thread_ts = params.get("thread_ts") or None
        self.messages[(channel, ts)] = Posted(channel, ts, thread_ts, text, blocks)
        message = {"type": "message", "text": text, "ts": ts, "bot_id": BOT_ID, "blocks": blocks}
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
        message = self.messages.get((channel, ts))
        if message is None:
            raise Refused("message_not_found", f"no message {channel}/{ts}")
        text, blocks = self._content(params)
        message.history.append((message.text, message.blocks))
        message.text, message.blocks = text, blocks
        return {"ok": True, "channel": channel, "ts": ts, "text": text}

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, user = str(params.get("channel") or ""), str(params.get("user") or "")
        if not channel or not user:
            raise Refused("invalid_arguments", "chat.postEphemeral needs channel and user")
        self._content(params)
        self.ephemerals.append(dict(params))
        return {"ok": True, "message_ts": self._new_ts()}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("trigger_id"):
            raise Refused("invalid_arguments", "views.open needs a trigger_id")
        view = check_view(params.get("view"), "modal")
        self.mrkdwn_problems += mrkdwn_problems("", view["blocks"])
        self.opened_views.append({"trigger_id": params["trigger_id"], "view": view})
        return {"ok": True, "view": {"id": f"V{next(self._ids):08d}", **view}}

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("user_id"):
            raise Refused("invalid_arguments", "views.publish needs a user_id")
        view = check_view(params.get("view"), "home")
        self.mrkdwn_problems += mrkdwn_problems("", view["blocks"])
        self.published_views.append({"user_id": params["user_id"], "view": view})
        return {"ok": True, "view": {"id": f"V{next(self._ids):08d}", **view}}

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = str(params.get("filename") or "")
        length = int(params.get("length") or 0)
        if not filename or length <= 0:
            raise Refused("invalid_arguments", "filename and a positive length are required")
        if length > MAX_UPLOAD:
            raise Refused("file_too_large", f"{length} bytes")
        file_id = f"F{next(self._ids):08d}"
        self._pending_uploads[file_id] = {"filename": filename, "length": length, "data": None}
        upload_url = self.url.removesuffix("/api/") + f"/upload/{file_id}"
        return {"ok": True, "upload_url": upload_url, "file_id": file_id}

    def _receive_upload(self, file_id: str, data: bytes) -> int:
        with self._lock:
            pending = self._pending_uploads.get(file_id)
            if pending is None or len(data) != pending["length"]:
                return 400
            pending["data"] = data
            return 200

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        if isinstance(files, str):
            files = json.loads(files)
        if not files:
            raise Refused("invalid_arguments", "no files")
        channel = str(params.get("channel_id") or "")
        thread_ts = params.get("thread_ts") or None
        if thread_ts and not channel:
            raise Refused("invalid_arguments", "thread_ts needs channel_id")
        shared = []
        for item in files:
            pending = self._pending_uploads.pop(item.get("id", ""), None)
            if pending is None or pending["data"] is None:
                raise Refused("file_not_found", f"{item.get('id')} was not uploaded")
            title = item.get("title") or pending["filename"]
            self.uploads.append(
                Upload(item["id"], pending["filename"], title, channel, thread_ts, pending["data"])
            )
            shared.append({"id": item["id"], "name": pending["filename"], "title": title})
        return {"ok": True, "files": shared}

    def _usergroup_users(self, params: dict[str, Any]) -> dict[str, Any]:
        group = str(params.get("usergroup") or "")
        if group not in self.usergroups:
            raise Refused("no_such_subteam", f"no usergroup {group!r}")
        return {"ok": True, "users": list(self.usergroups[group])}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user") or "")
        if user not in self.emails:
            raise Refused("user_not_found", f"no user {user!r}")
        profile = {"email": self.emails[user]} if self.emails[user] else {}
        return {"ok": True, "user": {"id": user, "team_id": TEAM_ID, "profile": profile}}

    def add_file(
        self,
        name: str,
        content: bytes,
        *,
        mimetype: str = "text/csv",
        user: str = "U0ALICE01",
        reported_size: int | None = None,
        send_length: bool = True,
    ) -> dict[str, Any]:
        """Share a file as a person would; returns Slack's file object (as a `file_share`
        message carries it). Its `url_private_download` serves `content` to a request with a
        bot token and Slack's HTML sign-in page to any other. `reported_size` puts another
        size in the object, and `send_length=False` leaves out Content-Length (a streamed
        download), to check a size cap that trusts neither."""
        with self._lock:
            file_id = f"F{next(self._ids):08d}"
            base = self.url.removesuffix("/api/")
            path = f"/files-pri/{TEAM_ID}-{file_id}/download/{quote(name)}"
            obj = {
                "id": file_id,
                "created": int(time.time()),
                "timestamp": int(time.time()),
                "name": name,
                "title": name,
                "mimetype": mimetype,
                "filetype": name.rsplit(".", 1)[-1].lower() if "." in name else "",
                "user": user,
                "size": len(content) if reported_size is None else reported_size,
                "mode": "hosted",
                "is_external": False,
                "url_private": f"{base}/files-pri/{TEAM_ID}-{file_id}/{quote(name)}",
                "url_private_download": base + path,
            }
            self.shared_files[file_id] = obj
            self._file_bodies[path] = SharedBody(file_id, content, mimetype, send_length)
            return dict(obj)

    def _serve_file(self, handler: BaseHTTPRequestHandler, path: str, token: str) -> None:
        with self._lock:
            body = self._file_bodies.get(unquote_path(path))
            status = 404 if body is None else 200
            self.downloads.append((body.file_id if body else "", token, status))
            self._lock.notify_all()
        if body is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if not token.startswith("xoxb-"):
            page = b"<!DOCTYPE html><html><body>Sign in to Slack</body></html>"
            content, content_type, send_length = page, "text/html; charset=utf-8", True
        else:
            content, content_type = body.content, body.mimetype
            send_length = body.send_length
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if send_length:
            handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        with contextlib.suppress(OSError):  # the bot may stop reading at its size cap
            handler.wfile.write(content)

    def _files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params.get("file") or "")
        if file_id not in self.shared_files:
            # about the workspace (a deleted file), not a malformed call: not in `refused`
            raise Refused("file_not_found", f"no file {file_id!r}", injected=True)
        return {"ok": True, "file": dict(self.shared_files[file_id])}

    def _conversation_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel:
            raise Refused("channel_not_found", "no channel")
        info = {
            "id": channel,
            "is_channel": True,
            "is_ext_shared": False,
            "is_shared": False,
            "is_org_shared": False,
            **self.channels.get(channel, {}),
        }
        return {"ok": True, "channel": info}


def unquote_path(path: str) -> str:
    """A download path with its file name quoted the one way `add_file` quotes it."""
    head, _, name = path.rpartition("/")
    return f"{head}/{quote(unquote(name))}"


def check_view(raw: Any, kind: str) -> dict[str, Any]:
    """Raise `Refused` as Slack would for a view of type `kind`; return the view as a dict."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise Refused("invalid_arguments", "view is not JSON") from exc
    if not isinstance(raw, dict) or raw.get("type") != kind:
        raise Refused("invalid_arguments", f"not a {kind} view")
    blocks = raw.get("blocks") or []
    if not blocks or len(blocks) > VIEW_BLOCKS:
        raise Refused("invalid_arguments", f"{len(blocks)} blocks (1 to {VIEW_BLOCKS})")
    if len(raw.get("private_metadata") or "") > PRIVATE_METADATA:
        raise Refused("invalid_arguments", "private_metadata over 3,000 characters")
    try:
        if View(**raw).to_dict() != raw:
            raise Refused("invalid_arguments", "fields slack_sdk does not know")
    except SlackObjectFormationError as exc:
        raise Refused("invalid_arguments", str(exc)) from exc
    for i, block in enumerate(blocks):
        element = block.get("element") or {}
        if element.get("type") == "plain_text_input":
            max_length = element.get("max_length", INPUT_TEXT)
            if not 1 <= max_length <= INPUT_TEXT:
                raise Refused("invalid_arguments", f"block {i}: max_length {max_length}")
            if len(element.get("initial_value") or "") > max_length:
                raise Refused("invalid_arguments", f"block {i}: initial_value over max_length")
    check_blocks(blocks, max_blocks=VIEW_BLOCKS)
    return raw


def check_blocks(
    blocks: Any,
    refused_types: set[str] | frozenset[str] = frozenset(),
    *,
    max_blocks: int = MAX_BLOCKS,
) -> None:
    """Raise `Refused` as Slack would for `blocks` (a message's `blocks` argument)."""
    if not isinstance(blocks, list):
        raise Refused("invalid_blocks_format", "blocks is not a JSON array")
    if len(blocks) > max_blocks:
        raise Refused("invalid_blocks", f"{len(blocks)} blocks (at most {max_blocks})")
    tables = 0
    charts = 0
    for i, raw in enumerate(blocks):
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind in refused_types:
            raise Refused("invalid_blocks", f"block {i}: unsupported {kind}", injected=True)
        if kind == "data_visualization":  # newer than slack_sdk's models: checked by hand
            charts += 1
            try:
                check_chart(raw)
            except ValueError as exc:
                raise Refused("invalid_blocks", f"block {i}: {exc}") from exc
            continue
        try:
            parsed = Block.parse(raw)
            if parsed is None:
                raise Refused("invalid_blocks", f"block {i}: unknown type {kind!r}")
            if parsed.to_dict() != raw:
                raise Refused("invalid_blocks", f"block {i}: fields slack_sdk does not know")
        except SlackObjectFormationError as exc:
            raise Refused("invalid_blocks", f"block {i}: {exc}") from exc
        if kind == "table":
            tables += 1
            rows = raw["rows"]
            if len(rows) > TABLE_ROWS:
                raise Refused("invalid_blocks", f"table of {len(rows)} rows")
            if any(len(row) > TABLE_CELLS for row in rows):
                raise Refused("invalid_blocks", f"a table row over {TABLE_CELLS} cells")
            if len(raw.get("column_settings") or []) > TABLE_CELLS:
                raise Refused("invalid_blocks", "over 20 column settings")
    if tables > 1:
        raise Refused("invalid_blocks", "only one table block per message")
    if charts > CHARTS:
        raise Refused("invalid_blocks", f"{charts} data_visualization blocks (at most {CHARTS})")


def check_chart(block: dict[str, Any]) -> None:
    """Raise ValueError where a `data_visualization` block breaks Slack's rules: its reference
    page (https://docs.slack.dev/reference/block-kit/blocks/data-visualization-block) for the
    block, the pie and the series counts; the slack-messaging crate's reading of that page for
    a series' points and the axis (our copy of the page stops there)."""
    _fields(block, {"type", "title", "chart"}, {"block_id"}, "block")
    _text(block["title"], CHART_TITLE, "title")
    if "block_id" in block:
        _text(block["block_id"], 255, "block_id")
    chart = block["chart"]
    kind = chart.get("type") if isinstance(chart, dict) else None
    if kind == "pie":
        _fields(chart, {"type", "segments"}, set(), "pie")
        segments = _items(chart["segments"], CHART_SERIES, "segments")
        for segment in segments:
            _fields(segment, {"label", "value"}, set(), "segment")
            _text(segment["label"], CHART_LABEL, "segment label")
            if _number(segment["value"]) <= 0:
                raise ValueError(f"segment value {segment['value']!r} is not above 0")
        return
    if kind not in {"bar", "area", "line"}:
        raise ValueError(f"chart type {kind!r} (pie, bar, area or line)")
    _fields(chart, {"type", "series", "axis_config"}, set(), kind)
    axis = chart["axis_config"]
    _fields(axis, {"categories"}, {"x_label", "y_label"}, "axis_config")
    categories = _items(axis["categories"], CHART_POINTS, "categories")
    for category in categories:
        _text(category, CHART_LABEL, "category")
    if len(set(categories)) < len(categories):
        raise ValueError("repeated categories")
    for key in ("x_label", "y_label"):
        if key in axis:
            _text(axis[key], CHART_TITLE, key)
    series = _items(chart["series"], CHART_SERIES, "series")
    names = []
    for one in series:
        _fields(one, {"name", "data"}, set(), "series")
        names.append(_text(one["name"], CHART_LABEL, "series name"))
        points = _items(one["data"], CHART_POINTS, "data")
        for point in points:
            _fields(point, {"label", "value"}, set(), "data point")
            _number(point["value"])
        if [p["label"] for p in points] != categories:
            raise ValueError(f"series {one['name']!r}: labels are not the axis categories")
    if len(set(names)) < len(names):
        raise ValueError("repeated series names")


def _fields(value: Any, required: set[str], optional: set[str], what: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    if missing := required - value.keys():
        raise ValueError(f"{what} lacks {sorted(missing)}")
    if unknown := value.keys() - required - optional:
        raise ValueError(f"{what} has unknown fields {sorted(unknown)}")


def _text(value: Any, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} is not a non-empty string")
    if len(value) > limit:
        raise ValueError(f"{what} of {len(value)} characters (at most {limit})")
    return value


def _items(value: Any, limit: int, what: str) -> list[Any]:
    if not isinstance(value, list) or not 1 <= len(value) <= limit:
        raise ValueError(f"{what} must be a list of 1 to {limit}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"value {value!r} is not a finite number")
    return value


def mrkdwn_problems(text: str, blocks: list[dict[str, Any]]) -> list[str]:
    """Unescaped `<`, `>`, `&` in the message's text and its blocks' mrkdwn texts."""
    pieces = [("text", text)]
    for i, block in enumerate(blocks):
        pieces += [(f"block {i} {where}", piece) for where, piece in _mrkdwn_texts(block)]
    problems = []
    for where, piece in pieces:
        bare = _ENTITY.sub("", _CONTROL.sub("", piece))
        for ch in "<>&":
            if ch in bare:
                at = bare.index(ch)
                near = bare[max(0, at - 30) : at + 30]
                problems.append(f"{where}: stray {ch!r} near {near!r}")
    return problems


def _params(raw: str, content_type: str, query: str) -> dict[str, Any]:
    """The call's arguments, whether sent as JSON, as a form, or in the query string."""
    params: dict[str, Any] = {k: v[0] for k, v in parse_qs(query).items()}
    if raw and "json" in content_type:
        params.update(json.loads(raw))
    elif raw:
        params.update({k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()})
        for key in ("blocks", "attachments"):
            if isinstance(params.get(key), str):
                with contextlib.suppress(json.JSONDecodeError):  # else check_blocks refuses it
                    params[key] = json.loads(params[key])
    return params


def _mrkdwn_texts(block: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every mrkdwn text object inside a block, with where it sits."""
    if isinstance(block, dict):
        if block.get("type") == "mrkdwn" and isinstance(block.get("text"), str):
            yield where or "text", block["text"]
        for key, value in block.items():
            yield from _mrkdwn_texts(value, f"{where}.{key}" if where else key)
    elif isinstance(block, list):
        for i, value in enumerate(block):
            yield from _mrkdwn_texts(value, f"{where}[{i}]")


def _texts(value: Any) -> Iterator[str]:
    """Every `text` string inside blocks, whatever the object type."""
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)

"""The stand-in's chat streaming: `chat.startStream`, `chat.appendStream`, `chat.stopStream`,
refusing what Slack refuses, keeping each stream's pieces in order and its message as it stands.

Slack takes a stream only as a reply under a thread root the app can see (`invalid_thread_ts`),
from a bot token only with both recipients (`missing_recipient_team_id`,
`missing_recipient_user_id`), with the `chat:write` scope; an append or stop names a stream it
started (`message_not_found`) that is still streaming (`message_not_in_streaming_state`). A piece
of markdown over 12,000 characters is `msg_too_long`; chunks must parse with slack_sdk's chunk
models unchanged, tasks have one of the four statuses, blocks (in a stop or a `blocks` chunk) are
checked as a message's (`slack_block_rules`). A workspace without streams (`refuse_streams`)
answers each call with the error a test names; `expire_streams` ends the streams going, as Slack
does about five minutes after their start. The stream's message is a reply in the thread
(`messages`), its text the markdown streamed so far, its tasks in `Stream.tasks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.messages.chunk import Chunk

from tests.support.slack_block_rules import check_blocks
from tests.support.standin_records import Posted, Refused

MAX_MARKDOWN = 12_000
STREAM_SCOPES = {"chat:write"}
TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


@dataclass
class Stream:
    """One streamed message: every accepted call's pieces, in order, and where it stands."""

    channel: str
    ts: str
    thread_ts: str
    recipient_user_id: str
    task_display_mode: str
    #: (method, its chunks, with any `markdown_text` argument as a markdown chunk) per call.
    pieces: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    stopped: bool = False
    #: Ended by Slack (`expire_streams`: a stream lives about five minutes), not by the app.
    expired: bool = False
    plan_title: str = ""
    #: Task id -> {"title", "status", "output", ...} as the message shows it now.
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def statuses(self, task_id: str) -> list[str]:
        """Every status task `task_id` was given, in order."""
        return [
            c["status"]
            for _, chunks in self.pieces
            for c in chunks
            if c["type"] == "task_update" and c["id"] == task_id
        ]

    def task_ids(self) -> list[str]:
        """The tasks in the order they first appeared."""
        return list(self.tasks)


class StreamMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up `streams`, `_stream_refusal` and the
    state shared with the other methods; each runs under the stand-in's lock."""

    def refuse_streams(self, error: str = "unknown_method") -> None:
        """Act like a workspace without chat streaming: each stream call answers `error`."""
        with self._lock:
            self._stream_refusal = error

    def expire_streams(self) -> None:
        """End every stream still going, as Slack does about five minutes after its start: later
        calls on it are refused (counted as the test's doing)."""
        with self._lock:
            for stream in self.streams:
                if not stream.stopped:
                    stream.stopped = stream.expired = True

    def allow_streams(self) -> None:
        with self._lock:
            self._stream_refusal = ""

    def streams_in(self, channel: str, thread_ts: str) -> list[Stream]:
        """The thread's streams, oldest first (copies: what a test saw stays as it was)."""
        with self._lock:
            found = [s for s in self.streams if (s.channel, s.thread_ts) == (channel, thread_ts)]
            return [
                Stream(**{**s.__dict__, "pieces": list(s.pieces), "tasks": dict(s.tasks)})
                for s in found
            ]

    def is_streamed(self, posted: Posted) -> bool:
        """Whether `posted` is a stream's message (not a posted one)."""
        with self._lock:
            return any((s.channel, s.ts) == (posted.channel, posted.ts) for s in self.streams)

    def _stream_allowed(self, method: str) -> None:
        if self._stream_refusal:
            raise Refused(self._stream_refusal, f"{method}: a workspace without it", injected=True)
        if not STREAM_SCOPES & self.scopes:
            injected = bool(STREAM_SCOPES & self._revoked)
            raise Refused("missing_scope", f"{method} needs chat:write", injected=injected)

    def _streaming(self, params: dict[str, Any], method: str) -> Stream:
        channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
        found = next((s for s in self.streams if (s.channel, s.ts) == (channel, ts)), None)
        if found is None:
            raise Refused("message_not_found", f"{method}: no stream {channel}/{ts}")
        if found.stopped:
            raise Refused(
                "message_not_in_streaming_state",
                f"{method}: {ts} was stopped",
                injected=found.expired,
            )
        return found

    def _start_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        self._stream_allowed("chat.startStream")
        channel = str(params.get("channel") or "")
        if not channel:
            raise Refused("channel_not_found", "no channel")
        for who in ("recipient_team_id", "recipient_user_id"):
            if not params.get(who):
                raise Refused(f"missing_{who}", f"a bot token's stream names its {who}")
        mode = str(params.get("task_display_mode") or "timeline")
        if mode not in ("timeline", "plan"):
            raise Refused("invalid_arguments", f"task_display_mode {mode!r}")
        _, thread_ts = self._thread_root(
            {"channel_id": channel, "thread_ts": params.get("thread_ts")}
        )
        chunks = self._chunks(params)
        ts = self._new_ts()
        stream = Stream(channel, ts, thread_ts, str(params["recipient_user_id"]), mode)
        self.streams.append(stream)
        self.messages[(channel, ts)] = Posted(channel, ts, thread_ts, "", [])
        self._posted_in(channel, thread_ts)
        self._apply(stream, "chat.startStream", chunks)
        return {"ok": True, "channel": channel, "ts": ts}

    def _append_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        self._stream_allowed("chat.appendStream")
        stream = self._streaming(params, "chat.appendStream")
        chunks = self._chunks(params)
        if not chunks:
            raise Refused("invalid_arguments", "chat.appendStream with nothing to append")
        self._apply(stream, "chat.appendStream", chunks)
        return {"ok": True, "channel": stream.channel, "ts": stream.ts}

    def _stop_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        self._stream_allowed("chat.stopStream")
        stream = self._streaming(params, "chat.stopStream")
        chunks = self._chunks(params)
        blocks = params.get("blocks")
        if blocks is not None:
            check_blocks(blocks, self._refused_types)
            self.messages[(stream.channel, stream.ts)].blocks = list(blocks)
        self._apply(stream, "chat.stopStream", chunks)
        stream.stopped = True
        return {"ok": True, "channel": stream.channel, "ts": stream.ts}

    def _chunks(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """The call's chunks (its `markdown_text` first, as Slack appends it), checked."""
        raw = params.get("chunks") or []
        if not isinstance(raw, list):
            raise Refused("invalid_arguments", "chunks is not a JSON array")
        chunks = list(raw)
        text = params.get("markdown_text")
        if text is not None:
            chunks.insert(0, {"type": "markdown_text", "text": text})
        for i, chunk in enumerate(chunks):
            parsed = Chunk.parse(chunk) if isinstance(chunk, dict) else None
            if parsed is None or parsed.to_dict() != chunk:
                raise Refused("invalid_chunks", f"chunk {i}: not a chunk slack_sdk knows: {chunk}")
            kind = chunk["type"]
            if kind == "markdown_text" and not 0 < len(chunk["text"]) <= MAX_MARKDOWN:
                raise Refused("msg_too_long", f"chunk {i}: {len(chunk['text'])} characters")
            if kind == "task_update" and chunk["status"] not in TASK_STATUSES:
                raise Refused("invalid_chunks", f"chunk {i}: task status {chunk['status']!r}")
            if kind == "task_update" and not 0 < len(chunk["title"]) <= 256:
                raise Refused("invalid_chunks", f"chunk {i}: a task title of {len(chunk['title'])}")
            if kind == "blocks":
                check_blocks(chunk["blocks"], self._refused_types)
        return chunks

    def _apply(self, stream: Stream, method: str, chunks: list[dict[str, Any]]) -> None:
        """What the pieces change in the stream's message."""
        stream.pieces.append((method, chunks))
        message = self.messages[(stream.channel, stream.ts)]
        for chunk in chunks:
            if chunk["type"] == "markdown_text":
                message.text += chunk["text"]
            elif chunk["type"] == "plan_update":
                stream.plan_title = chunk["title"]
            elif chunk["type"] == "task_update":
                task = stream.tasks.setdefault(chunk["id"], {})
                task.update({k: v for k, v in chunk.items() if k not in ("type", "id")})
            elif chunk["type"] == "blocks":
                message.blocks = [*message.blocks, *chunk["blocks"]]
        self._lock.notify_all()

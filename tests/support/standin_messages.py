"""The stand-in's message and view methods: `chat.postMessage`, `chat.update`,
`chat.postEphemeral`, `chat.getPermalink`, `views.open`, `views.publish`. Each checks what it is
sent as Slack would (text length, blocks, views) and notes unescaped mrkdwn. A message posted to
a user id goes to the app's direct messages with them (the `D…` channel Slack answers with), and
a permalink is given only for a message the app can see.

`chat.postMessage` and `chat.update` take message `metadata` (`{"event_type", "event_payload"}`,
slack_sdk's `Metadata`; a form-encoded call sends it as a JSON string), kept on the `Posted`
record for `conversations.history` to return. Slack answers `invalid_metadata_format` for
metadata that is not such an object: no `event_type`, a payload that is not an object, JSON
that does not parse. Its docs ask for an alphanumeric, human-readable `event_type` (every
example is snake_case, `task_created`), which the stand-in enforces as `[A-Za-z0-9_]+` so the
bot keeps to it; and Slack refuses metadata over its size limit with `metadata_too_large`, a
limit it does not publish, which the stand-in sets at `MAX_METADATA` bytes of JSON."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.slack_block_rules import check_blocks, check_view
from tests.support.slack_mrkdwn import mrkdwn_problems
from tests.support.standin_records import BOT_ID, Posted, Refused

MAX_TEXT = 40_000
#: The stand-in's bound on metadata's JSON, in bytes (Slack's limit is not published).
MAX_METADATA = 8_192
#: What Slack's docs ask of an event type: alphanumeric (and `_`, as in every example).
EVENT_TYPE = re.compile(r"^[A-Za-z0-9_]+$")


class MessageMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up the state these methods use; each runs
    under the stand-in's lock."""

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
        if channel.startswith(("U", "W")):
            channel = dm_channel(channel)  # the app's direct messages with that person
        text, blocks = self._content(params)
        metadata = check_metadata(params.get("metadata"))
        ts = self._new_ts()
        thread_ts = params.get("thread_ts") or None
        posted = Posted(channel, ts, thread_ts, text, blocks, metadata=metadata)
        self.messages[(channel, ts)] = posted
        self._posted_in(channel, thread_ts)
        message = {"type": "message", "text": text, "ts": ts, "bot_id": BOT_ID, "blocks": blocks}
        if metadata:
            message["metadata"] = metadata
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
        message = self.messages.get((channel, ts))
        if message is None:
            raise Refused("message_not_found", f"no message {channel}/{ts}")
        text, blocks = self._content(params)
        metadata = check_metadata(params.get("metadata"))
        message.history.append((message.text, message.blocks))
        message.text, message.blocks = text, blocks
        if metadata is not None:  # an update without metadata keeps what the message had
            message.metadata = metadata
        return {"ok": True, "channel": channel, "ts": ts, "text": text}

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, user = str(params.get("channel") or ""), str(params.get("user") or "")
        if not channel or not user:
            raise Refused("invalid_arguments", "chat.postEphemeral needs channel and user")
        self._content(params)
        self.ephemerals.append(dict(params))
        return {"ok": True, "message_ts": self._new_ts()}

    def _permalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(params.get("channel") or ""), str(params.get("message_ts") or "")
        if not channel or not ts:
            raise Refused("invalid_arguments", "chat.getPermalink needs channel and message_ts")
        if (channel, ts) in self.messages:
            thread_ts = self.messages[(channel, ts)].thread_ts
        elif (channel, ts) in self._seen:
            thread_ts = self._seen[(channel, ts)]
        else:
            raise Refused("message_not_found", f"no message {channel}/{ts}")
        link = f"https://standin.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        if thread_ts and thread_ts != ts:
            link += f"?thread_ts={thread_ts}&cid={channel}"
        return {"ok": True, "channel": channel, "permalink": link}

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


def check_metadata(value: Any) -> dict[str, Any] | None:
    """The message metadata as Slack would keep it, or `Refused` as Slack would answer."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise Refused("invalid_metadata_format", f"metadata is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise Refused("invalid_metadata_format", "metadata is not an object")
    event_type, payload = value.get("event_type"), value.get("event_payload")
    if not isinstance(event_type, str) or not event_type:
        raise Refused("invalid_metadata_format", "metadata without an event_type")
    if not EVENT_TYPE.match(event_type):
        raise Refused("invalid_metadata_format", f"event_type {event_type!r} is not alphanumeric")
    if not isinstance(payload, dict):
        raise Refused("invalid_metadata_format", "event_payload is not an object")
    size = len(json.dumps(value, separators=(",", ":")).encode())
    if size > MAX_METADATA:
        raise Refused("metadata_too_large", f"metadata of {size} bytes")
    return {"event_type": event_type, "event_payload": payload}


def dm_channel(user: str) -> str:
    """The id of the app's direct messages with `user`, as the stand-in names it."""
    return "D" + user[1:]

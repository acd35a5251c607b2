"""The stand-in's reading of a conversation: `conversations.history` and `conversations.replies`.

Why: a bot that posts with message metadata (a scheduled run's result) must be able to find its
own message again after a crash between Slack accepting the post and the bot recording it, by
reading the channel's history, so the stand-in answers these reads as Slack does.

They return the bot's messages (`messages`) of the channel: history its top level (messages
without a `thread_ts`, and thread roots, with `reply_count` and `latest_reply`) newest first;
replies a thread's root and its replies oldest first (a root that is a person's message, known
to the stand-in only by its ts from `saw`, comes back with no text). Both take `oldest`,
`latest` and `inclusive` (exclusive bounds unless `inclusive`), `limit` (1 to `MAX_LIMIT`, 100
by default: Slack's `invalid_limit` otherwise) and `cursor` (from `response_metadata`'s
`next_cursor`, with `has_more`; one Slack did not give answers `invalid_cursor`). A message
carries its `metadata` only when the call asks for `include_all_metadata`, as in Slack.

The read scope depends on the conversation's type, as in Slack: `channels:history` for a public
channel, `groups:history` for a private one (`G…`, or `is_private` in `channels`), `im:history`
for a direct message (`D…`), `mpim:history` for a group DM (`is_mpim`); without it the call
answers `missing_scope` (the bot's fault unless a test revoked the scope).
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from decimal import Decimal
from typing import Any

from tests.support.standin_records import BOT_ID, BOT_USER_ID, Posted, Refused

#: The read scope each conversation type needs.
HISTORY_SCOPES = {
    "public_channel": "channels:history",
    "private_channel": "groups:history",
    "im": "im:history",
    "mpim": "mpim:history",
}
#: Slack's largest `limit` for these methods, and what it uses without one.
MAX_LIMIT = 999
DEFAULT_LIMIT = 100
_TRUE = {"1", "true", "True"}
_TS = re.compile(r"^\d+(\.\d+)?$")


class HistoryMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up the state these methods use; each runs
    under the stand-in's lock."""

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._readable(params)
        top = [m for m in self._bot_messages(channel) if not m.thread_ts or m.thread_ts == m.ts]
        found = _between(top, params)
        found.sort(key=lambda m: Decimal(m.ts), reverse=True)
        return self._page(found, params, channel)

    def _replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._readable(params)
        ts = str(params.get("ts") or "")
        if not ts:
            raise Refused("invalid_arguments", "conversations.replies needs ts")
        if not _TS.match(ts):
            raise Refused("thread_not_found", f"ts {ts!r} is not a message ts")
        messages = self._bot_messages(channel)
        posted = next((m for m in messages if m.ts == ts), None)
        if posted is not None and posted.thread_ts and posted.thread_ts != ts:
            found = [posted]  # a reply's ts: that message alone
        elif posted is not None or (channel, ts) in self._seen or _replied(messages, ts):
            root = posted or Posted(channel, ts, ts, "", [])
            found = [root, *(m for m in messages if m.thread_ts == ts and m.ts != ts)]
        else:
            raise Refused("thread_not_found", f"no message {channel}/{ts}")
        found = _between(found, params)
        found.sort(key=lambda m: Decimal(m.ts))
        return self._page(found, params, channel)

    def _readable(self, params: dict[str, Any]) -> str:
        """The channel asked for, once the token may read it."""
        channel = str(params.get("channel") or "")
        if not channel or channel.startswith(("U", "W")):
            # a user id is no conversation (chat.postMessage alone takes one, for the DM)
            raise Refused("channel_not_found", f"no conversation {channel!r}")
        scope = HISTORY_SCOPES[self._conversation_type(channel)]
        if scope not in self.scopes:
            needs = f"reading {channel} needs {scope}"
            raise Refused("missing_scope", needs, injected=scope in self._revoked)
        return channel

    def _conversation_type(self, channel: str) -> str:
        info = self.channels.get(channel, {})
        if info.get("is_im") or channel.startswith("D"):
            return "im"
        if info.get("is_mpim"):
            return "mpim"
        if info.get("is_private") or channel.startswith("G"):
            return "private_channel"
        return "public_channel"

    def _bot_messages(self, channel: str) -> list[Posted]:
        return [m for (ch, _), m in self.messages.items() if ch == channel]

    def _page(self, found: list[Posted], params: dict[str, Any], channel: str) -> dict[str, Any]:
        """One page of `found` (in the order answered) from the cursor on."""
        limit = _limit(params.get("limit"))
        start = _cursor_start(str(params.get("cursor") or ""), found)
        page = found[start : start + limit]
        has_more = start + limit < len(found)
        metadata = _flag(params.get("include_all_metadata"))
        everything = self._bot_messages(channel)
        messages = [
            _message(m, everything, known=(channel, m.ts) in self.messages, metadata=metadata)
            for m in page
        ]
        answer: dict[str, Any] = {"ok": True, "messages": messages, "has_more": has_more}
        next_cursor = _cursor(found[start + limit].ts) if has_more else ""
        answer["response_metadata"] = {"next_cursor": next_cursor}
        return answer


def _message(
    posted: Posted, everything: list[Posted], *, known: bool, metadata: bool
) -> dict[str, Any]:
    """A message as these methods answer it (a snapshot: later updates do not change it); a
    root the stand-in does not know (`known` false: a person's) has its ts only."""
    message: dict[str, Any] = {"type": "message", "ts": posted.ts, "text": posted.text}
    if known:
        message.update(user=BOT_USER_ID, bot_id=BOT_ID, blocks=copy.deepcopy(posted.blocks))
    if posted.thread_ts:
        message["thread_ts"] = posted.thread_ts
    replies = sorted(
        (m.ts for m in everything if m.thread_ts == posted.ts and m.ts != posted.ts),
        key=Decimal,
    )
    if replies:
        message.update(thread_ts=posted.ts, reply_count=len(replies), latest_reply=replies[-1])
    if metadata and posted.metadata:
        message["metadata"] = copy.deepcopy(posted.metadata)
    return message


def _flag(value: Any) -> bool:
    """A boolean argument as Slack reads it (slack_sdk sends `1`/`0`)."""
    return value is True or str(value) in _TRUE


def _replied(messages: list[Posted], ts: str) -> bool:
    return any(m.thread_ts == ts for m in messages)


def _between(messages: list[Posted], params: dict[str, Any]) -> list[Posted]:
    """The messages inside `oldest` and `latest` (bounds included only if `inclusive`)."""
    oldest = _decimal(str(params.get("oldest") or "0"), "oldest")
    latest_text = str(params.get("latest") or "")
    latest = _decimal(latest_text, "latest") if latest_text else None
    inclusive = _flag(params.get("inclusive"))
    kept = []
    for m in messages:
        ts = Decimal(m.ts)
        after = ts >= oldest if inclusive else ts > oldest
        before = latest is None or (ts <= latest if inclusive else ts < latest)
        if after and before:
            kept.append(m)
    return kept


def _decimal(value: str, name: str) -> Decimal:
    """A timestamp bound; Slack answers `invalid_ts_oldest` / `invalid_ts_latest` otherwise."""
    if not _TS.match(value):
        raise Refused(f"invalid_ts_{name}", f"{name} {value!r} is not a timestamp")
    return Decimal(value)


def _limit(value: Any) -> int:
    if value is None or value == "":
        return DEFAULT_LIMIT
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise Refused("invalid_limit", f"limit {value!r} is not a number") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise Refused("invalid_limit", f"limit {limit} is not 1 to {MAX_LIMIT}")
    return limit


def _cursor(ts: str) -> str:
    """Slack's cursors are opaque; the stand-in's say where the next page starts, as Slack's
    `bmV4dF90czo…` (`next_ts:…`) ones do."""
    return base64.b64encode(f"next_ts:{ts}".encode()).decode()


def _cursor_start(cursor: str, found: list[Posted]) -> int:
    if not cursor:
        return 0
    try:
        decoded = base64.b64decode(cursor, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise Refused("invalid_cursor", f"cursor {cursor!r} is not one Slack gave") from None
    ts = decoded.removeprefix("next_ts:")
    for index, message in enumerate(found):
        if message.ts == ts:
            return index
    raise Refused("invalid_cursor", f"cursor {cursor!r} names no message of this listing")

"""Everything the Slack stand-in received, as text to scan, each piece with whom it was for.

The tests of who may see what (docs/access.md) check that nothing one identity may read reaches
another. Reading messages through their `text` keys would miss a value in a button's value, a
chart's data, a table cell, a modal or a file, so this reads **every call** the bot made to the
stand-in: every string and number anywhere in its arguments (blocks, attachments, views, chart
data, file titles; the token left out), and the bytes of every file it uploaded (its CSV). Each
piece says who it was addressed to:

- a message (`chat.postMessage`, every `chat.update` of it), a file and a thread's status: the
  thread it is in (for a top-level message, its own ts);
- an ephemeral message: the user it was for;
- a Home tab (`views.publish`): the user it was published for;
- anything else (`views.open`, `users.info`, `auth.test`, …): nobody in particular, so it may
  hold nobody's values.

`leaks` then looks for each audience's markers (patterns only that audience's rows, values and
tables hold) in what went to every other audience, and everyone's in what went to nobody in
particular.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.standin import Call, SlackStandin
from tests.support.standin_messages import dm_channel


@dataclass(frozen=True)
class Piece:
    """One call (or one uploaded file) and its text."""

    method: str
    channel: str = ""
    #: The thread a message or file is in ("" for none).
    thread_ts: str = ""
    #: The user an ephemeral message or a Home tab was for ("" for none).
    user: str = ""
    text: str = ""


@dataclass(frozen=True)
class Audience:
    """Who one side of a test is: the threads they asked in (channel, thread ts) and the people
    (asker, approver) who get ephemeral messages, Home tabs and direct messages (a private
    answer's files)."""

    users: frozenset[str]
    threads: frozenset[tuple[str, str]] = field(default_factory=frozenset)

    def holds(self, piece: Piece) -> bool:
        if piece.user:
            return piece.user in self.users
        if piece.channel in self.users or piece.channel in {dm_channel(u) for u in self.users}:
            return True  # a message to a person's id goes to their direct messages
        return bool(piece.channel) and (piece.channel, piece.thread_ts) in self.threads


def strings(value: Any) -> Iterator[str]:
    """Every string and number anywhere inside `value` (dicts' keys too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    else:
        yield str(value)


def mark(standin: SlackStandin) -> tuple[int, int]:
    """Where the stand-in's record stands now (calls, uploads): `received` from here on."""
    return len(standin.calls), len(standin.uploads)


def received(standin: SlackStandin, since: tuple[int, int] = (0, 0)) -> list[Piece]:
    """Every call the stand-in received and every file uploaded to it, from `since` (`mark`)."""
    calls, uploads = standin.calls[since[0] :], standin.uploads[since[1] :]
    pieces = [_piece(standin, c) for c in calls]
    pieces += [
        Piece(
            "upload",
            u.channel,
            u.thread_ts or "",
            text="\n".join([u.filename, u.title, u.content.decode("utf-8", errors="replace")]),
        )
        for u in uploads
    ]
    return pieces


def _piece(standin: SlackStandin, call: Call) -> Piece:
    method, params = call.method, call.params
    text = "\n".join(strings({k: v for k, v in params.items() if k != "token"}))
    channel = str(params.get("channel") or params.get("channel_id") or "")
    if method == "chat.postEphemeral":
        return Piece(method, channel, user=str(params.get("user") or ""), text=text)
    if method == "views.publish":
        return Piece(method, user=str(params.get("user_id") or ""), text=text)
    if method == "chat.update":
        ts = str(params.get("ts") or "")
        message = standin.messages.get((channel, ts))
        thread = (message.thread_ts if message else None) or ts
        return Piece(method, channel, thread, text=text)
    if method == "chat.postMessage":
        thread = params.get("thread_ts") or call.answer.get("ts") or ""
        return Piece(method, channel, str(thread), text=text)
    if method in ("files.completeUploadExternal", "assistant.threads.setStatus"):
        return Piece(method, channel, str(params.get("thread_ts") or ""), text=text)
    return Piece(method, text=text)


def leaks(
    pieces: Sequence[Piece],
    audiences: Mapping[str, Audience],
    markers: Mapping[str, Sequence[str]],
) -> list[tuple[str, str, str, str]]:
    """(who got it, whose marker, the pattern, the start of the text) for each marker found in
    a piece that went to someone else: `markers` maps each audience's name to patterns only it
    may see (searched case-insensitively), and "" to patterns nobody may see. A piece for no
    audience may hold no marker at all."""
    found = []
    for piece in pieces:
        to = next((name for name, who in audiences.items() if who.holds(piece)), "")
        for owner, patterns in markers.items():
            if owner and owner == to:
                continue
            for pattern in patterns:
                hit = re.search(pattern, piece.text, flags=re.IGNORECASE)
                if hit:
                    near = piece.text[max(0, hit.start() - 150) :][:300]
                    where = f"{piece.method} {piece.channel}/{piece.thread_ts}/{piece.user}"
                    found.append((to or where, owner or "nobody", pattern, near))
    return found


def in_threads(pieces: Sequence[Piece], channel: str) -> list[Piece]:
    """The pieces posted in `channel` for everyone there (messages and files, not ephemeral)."""
    return [p for p in pieces if p.channel == channel and not p.user]

"""Shared pieces of every Block Kit builder: limits, mrkdwn escaping, cutting text to fit, and
`finish`, which validates blocks into the dicts Slack receives."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

MAX_BLOCKS = 50
SECTION_TEXT = 3000
#: Each context element; Slack's text objects take 3,000 characters.
CONTEXT_TEXT = 2000
TABLE_ROWS = 100
TABLE_COLUMNS = 20
#: Sections a long SQL statement may take (about 30,000 characters).
SQL_SECTIONS = 10
#: The files holding a statement too long for its message, in full.
PROPOSED_SQL_FILE = "proposed.sql"
RAN_SQL_FILE = "query.sql"
#: The notification text of a message (Slack truncates past 40,000 characters).
FALLBACK_TEXT = 300

FENCE = "```"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")


@dataclass(frozen=True)
class Message:
    """What to send: the notification text and the blocks (validated dicts)."""

    text: str
    blocks: list[dict[str, Any]]


def escape(text: str) -> str:
    """Escape the three characters mrkdwn gives meaning to (`&`, `<`, `>`)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def cut(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters, ending with "…" when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escaped(text: str, limit: int) -> str:
    """`text` escaped, then cut to `limit` characters without splitting an entity."""
    return fit(escape(text), limit)


def fit(mrkdwn: str, limit: int) -> str:
    """mrkdwn cut to at most `limit` characters, ending with "…" when cut, without splitting an
    entity (`&amp;`) or a control sequence (`<@U123>`)."""
    if len(mrkdwn) <= limit:
        return mrkdwn
    out = mrkdwn[: limit - 1]
    amp = out.rfind("&", max(0, len(out) - 5))
    if amp != -1 and ";" not in out[amp:]:
        out = out[:amp]
    if (opened := out.rfind("<")) > out.rfind(">"):
        out = out[:opened]
    return out + "…"


def mention(user: str) -> str:
    """`<@U123>` for a Slack user id; anything else (a terminal user name) as escaped text."""
    return f"<@{user}>" if _USER_ID.fullmatch(user) else escape(user)


def code_pieces(text: str, budget: int) -> list[str]:
    """`text` escaped for a code block and cut into pieces of at most `budget` characters,
    at line ends where one falls in the second half of a piece.

    A literal fence inside the text would close the block early, so a zero-width space splits it.
    """
    text = text.replace(FENCE, "``\u200b`")
    pieces: list[str] = []
    buf: list[str] = []
    size = 0
    line_end = -1  # position in buf just after the last newline
    for ch in text:
        piece = _ESCAPES.get(ch, ch)
        while buf and size + len(piece) > budget:
            # A cut at a line end may leave too much for the next piece: cut again, whole.
            keep = line_end if line_end > len(buf) // 2 else len(buf)
            pieces.append("".join(buf[:keep]))
            buf = buf[keep:]
            size = sum(len(p) for p in buf)
            line_end = -1
        buf.append(piece)
        size += len(piece)
        if ch == "\n":
            line_end = len(buf)
    if buf:
        pieces.append("".join(buf))
    return [p.strip("\n") or "\u200b" for p in pieces] or ["\u200b"]


def code_sections(text: str, limit: int) -> tuple[list[Block], bool]:
    """Code-block sections holding `text`, at most `limit` of them; True when text was left out.

    Line breaks are kept (SQL comes pretty printed, one clause a line) and long text is cut at
    line ends where it can be.
    """
    pieces = code_pieces(text, SECTION_TEXT - 2 * len(FENCE) - 2)
    shown = pieces[:limit]
    blocks: list[Block] = [section(f"{FENCE}\n{p}\n{FENCE}") for p in shown]
    return blocks, len(pieces) > limit


def sql_cut(sql: str) -> bool:
    """Whether a message shows only the start of `sql` (more than `SQL_SECTIONS` sections):
    the whole statement then goes in the thread as a file (`bot.blocks.attachments.sql_file`)."""
    return code_sections(sql, SQL_SECTIONS)[1]


def names(names: Sequence[str], limit: int = 1000) -> str:
    """Table names in code spans, as many as fit in `limit` characters, then "and N more"."""
    shown: list[str] = []
    size = 0
    for name in names:
        item = f"`{escaped(name, 200)}`"
        if size + len(item) > limit:
            return ", ".join(shown) + f" and {len(names) - len(shown)} more"
        shown.append(item)
        size += len(item) + 2
    return ", ".join(shown) or "no tables"


def section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text))


def context(*texts: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=t) for t in texts])


def finish(text: str, blocks: Sequence[Block], *, mrkdwn: bool = False) -> Message:
    """Validate `blocks` (slack_sdk's checks plus Slack's message-level limits) into dicts.

    `text` is the notification text (what Slack shows in a notification, and where blocks cannot
    be shown). Slack reads it as mrkdwn, so plain text is escaped here; a caller that wrote it
    as mrkdwn, to name someone with a mention, says `mrkdwn=True` (escaped again, `<@U123>`
    would show as `&lt;@U123&gt;` instead of the person's name).
    """
    dicts = [block.to_dict() for block in blocks]
    if len(dicts) > MAX_BLOCKS:
        raise ValueError(f"{len(dicts)} blocks; a message takes at most {MAX_BLOCKS}")
    tables = [d for d in dicts if d["type"] == "table"]
    if len(tables) > 1:
        raise ValueError("a message takes at most one table block")
    for table in tables:
        rows = table["rows"]
        if len(rows) > TABLE_ROWS or any(len(r) > TABLE_COLUMNS for r in rows):
            raise ValueError(f"a table takes at most {TABLE_ROWS} rows of {TABLE_COLUMNS} cells")
    return Message(text=fit(text if mrkdwn else escape(text), FALLBACK_TEXT), blocks=dicts)

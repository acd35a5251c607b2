"""Block Kit messages for each thing the bot says, built with slack_sdk's models.

Every builder is pure and returns a `Message` whose blocks are already validated: slack_sdk's
`to_dict()` checks its field limits, and `_finish` checks the ones it does not model (50 blocks a
message, one table of at most 100 rows and 20 columns). Text from the model, the warehouse or a
user is escaped for mrkdwn and cut to fit, so nothing such a text holds can break a message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    RawTextObject,
    SectionBlock,
    TableBlock,
)

from agent.outcome import Answer, Proposal

APPROVE_ACTION = "approve_proposal"
REJECT_ACTION = "reject_proposal"

MAX_BLOCKS = 50
SECTION_TEXT = 3000
#: Each context element; Slack's text objects take 3,000 characters.
CONTEXT_TEXT = 2000
TABLE_ROWS = 100
TABLE_COLUMNS = 20
#: Characters kept of one table cell.
CELL_TEXT = 200
#: Sections a long SQL statement may take (about 30,000 characters).
SQL_SECTIONS = 10
#: Sections a monospaced result table may take when the table block does not fit.
TEXT_TABLE_SECTIONS = 4
#: The notification text of a message (Slack truncates past 40,000 characters).
FALLBACK_TEXT = 300

_FENCE = "```"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")

EXAMPLE = "which region had the most revenue last month?"


@dataclass(frozen=True)
class Message:
    """What to send: the notification text and the blocks (validated dicts)."""

    text: str
    blocks: list[dict[str, Any]]


# ---------------------------------------------------------------------------------------------
# Text helpers


def escape(text: str) -> str:
    """Escape the three characters mrkdwn gives meaning to (`&`, `<`, `>`)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def cut(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters, ending with "…" when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escaped(text: str, limit: int) -> str:
    """`text` escaped, then cut to `limit` characters without splitting an entity."""
    out = escape(text)
    if len(out) <= limit:
        return out
    out = out[: limit - 1]
    amp = out.rfind("&", max(0, len(out) - 5))
    if amp != -1 and ";" not in out[amp:]:
        out = out[:amp]
    return out + "…"


def mention(user: str) -> str:
    """`<@U123>` for a Slack user id; anything else (a terminal user name) as escaped text."""
    return f"<@{user}>" if _USER_ID.fullmatch(user) else escape(user)


def code_pieces(text: str, budget: int) -> list[str]:
    """`text` escaped for a code block and cut into pieces of at most `budget` characters,
    at line ends where one falls in the second half of a piece.

    A literal fence inside the text would close the block early, so a zero-width space splits it.
    """
    text = text.replace(_FENCE, "``\u200b`")
    pieces: list[str] = []
    buf: list[str] = []
    size = 0
    line_end = -1  # position in buf just after the last newline
    for ch in text:
        piece = _ESCAPES.get(ch, ch)
        if size + len(piece) > budget:
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


def _code_sections(text: str, limit: int) -> tuple[list[Block], bool]:
    """Code-block sections holding `text`, at most `limit` of them; True when text was left out."""
    pieces = code_pieces(text, SECTION_TEXT - 2 * len(_FENCE) - 2)
    shown = pieces[:limit]
    blocks: list[Block] = [_section(f"{_FENCE}\n{p}\n{_FENCE}") for p in shown]
    return blocks, len(pieces) > limit


def _names(names: Sequence[str], limit: int = 1000) -> str:
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


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text))


def _context(*texts: str) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=t) for t in texts])


def _finish(text: str, blocks: Sequence[Block]) -> Message:
    """Validate `blocks` (slack_sdk's checks plus Slack's message-level limits) into dicts."""
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
    return Message(text=escaped(text, FALLBACK_TEXT), blocks=dicts)


# ---------------------------------------------------------------------------------------------
# Messages


def working() -> Message:
    """The placeholder posted at once; the proposal (or an answer) replaces it."""
    return _finish("Working on it…", [_section(":hourglass_flowing_sand: Working on it…")])


def help_message() -> Message:
    """The reply to a mention with no question."""
    text = (
        f"Ask me a question about the data, for example: `@querybot {EXAMPLE}`\n"
        "I reply here with the SQL I would run. Nothing runs until someone presses *Approve*. "
        "Reply in the thread to follow up; no need to mention me again."
    )
    return _finish("Ask me a question about the data.", [_section(text)])


def _proposal_body(prop: Proposal, requested_by: str, note: str) -> list[Block]:
    blocks: list[Block] = []
    if note:
        blocks.append(_context(escaped(note, CONTEXT_TEXT)))
    explanation = prop.explanation.strip() or "Proposed query"
    blocks.append(_section(f"*{escaped(explanation, SECTION_TEXT - 2)}*"))
    sql_blocks, sql_cut = _code_sections(prop.sql, SQL_SECTIONS)
    blocks += sql_blocks
    if sql_cut:
        blocks.append(
            _context(
                f":warning: The SQL is {len(prop.sql):,} characters long; only the start is "
                "shown. Approve only if you trust it, or ask for a simpler query."
            )
        )
    facts = [f"Reads {_names(prop.tables)}"]
    if prop.estimated_bytes is not None:
        facts.append(f"will scan about {_size(prop.estimated_bytes)}")
    if prop.estimated_cost_usd is not None:
        facts.append(f"estimated cost ${prop.estimated_cost_usd:,.2f}")
    facts.append(f"asked by {mention(requested_by)}")
    blocks.append(_context(" · ".join(facts)))
    warnings = [f":warning: {escaped(w, CONTEXT_TEXT - 10)}" for w in prop.warnings[:10]]
    if warnings:
        blocks.append(_context(*warnings))
    return blocks


def proposal(prop: Proposal, *, requested_by: str, note: str = "") -> Message:
    """The SQL awaiting approval, with Approve / Reject buttons carrying only the proposal id."""
    buttons = ActionsBlock(
        elements=[
            ButtonElement(
                text="Approve",
                action_id=APPROVE_ACTION,
                value=prop.proposal_id,
                style="primary",
            ),
            ButtonElement(
                text="Reject",
                action_id=REJECT_ACTION,
                value=prop.proposal_id,
                style="danger",
            ),
        ]
    )
    blocks = [*_proposal_body(prop, requested_by, note), buttons]
    return _finish(f"Proposed query: {prop.explanation}", blocks)


def decided(prop: Proposal, *, requested_by: str, verdict: str) -> Message:
    """The proposal's message after a decision: the buttons replaced by `verdict` (mrkdwn)."""
    blocks = [*_proposal_body(prop, requested_by, ""), _context(verdict)]
    return _finish(f"Proposed query: {prop.explanation}", blocks)


def approved_by(user: str) -> str:
    return f":white_check_mark: Approved by {mention(user)}"


def rejected_by(user: str) -> str:
    return f":x: Rejected by {mention(user)}; nothing was run."


SUPERSEDED = ":arrow_heading_down: Replaced by a newer question in this thread; nothing was run."


def clarify(message: str) -> Message:
    """The agent asks something back (or says the data cannot answer)."""
    blocks = [
        _section(f":question: {escaped(message, SECTION_TEXT - 12)}"),
        _context("Reply in this thread to continue; no need to mention me."),
    ]
    return _finish(message, blocks)


def failure(message: str) -> Message:
    """Something stopped the question; `message` says what and what to do."""
    blocks = [_section(f":warning: {escaped(message, SECTION_TEXT - 12)}")]
    return _finish(message, blocks)


# ---------------------------------------------------------------------------------------------
# Results


def cell_text(value: Any) -> str:
    """One result value as shown: thousands separators, two decimals, NULL for None."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:,.2f}" if value == 0 or abs(value) >= 0.01 else f"{value:.3g}"
    text = str(value)
    return text if text else "(empty)"


def _numeric(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    )


def _table_block(columns: list[str], rows: list[list[Any]]) -> TableBlock:
    header = [RawTextObject(text=cut(c, CELL_TEXT) or " ") for c in columns]
    body = [[RawTextObject(text=cut(cell_text(v), CELL_TEXT)) for v in row] for row in rows]
    settings = [
        {"align": "right"} if _numeric([row[i] for row in rows]) else {"align": "left"}
        for i in range(len(columns))
    ]
    return TableBlock(rows=[header, *body], column_settings=settings)


def _text_table(columns: list[str], rows: list[list[Any]]) -> tuple[list[Block], int]:
    """A monospaced table in code sections; returns the blocks and how many rows fit."""
    width = 30
    cells = [[cut(cell_text(v), width) for v in row] for row in rows]
    heads = [cut(c, width) for c in columns]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    lines = [line(heads), line(["-" * w for w in widths]), *(line(r) for r in cells)]
    budget = SECTION_TEXT - 2 * len(_FENCE) - 2
    sections: list[list[str]] = [[]]
    size = 0
    fitted = 0
    for number, text in enumerate(lines):
        text = escaped(text, budget)
        if size + len(text) + 1 > budget:
            if len(sections) == TEXT_TABLE_SECTIONS:
                break
            sections.append([])
            size = 0
        sections[-1].append(text)
        size += len(text) + 1
        fitted = max(0, number - 1)
    blocks: list[Block] = [
        _section(f"{_FENCE}\n" + "\n".join(s) + f"\n{_FENCE}") for s in sections if s
    ]
    return blocks, fitted


def result(answer: Answer, *, display_rows: int, use_table: bool = True) -> Message:
    """The answer to an approved query: summary, first rows, SQL and sources.

    `use_table` picks Slack's table block when the rows fit it; otherwise (or when a workspace
    refuses table blocks) the rows go in a monospaced code block.
    """
    rows = answer.rows[: max(0, display_rows)]
    columns = answer.columns
    fits_table = 0 < len(columns) <= TABLE_COLUMNS and len(rows) + 1 <= TABLE_ROWS
    if not columns:
        table_blocks: list[Block] = []
        shown = 0
    elif use_table and fits_table:
        table_blocks, shown = [_table_block(columns, rows)], len(rows)
    else:
        table_blocks, shown = _text_table(columns, rows)

    more = "+" if answer.capped else ""
    summary = f"*{answer.total_rows:,}{more} rows*"
    if shown < answer.total_rows:
        summary += f" (first {shown:,} shown)"
    if answer.capped:
        summary += " — the query hit the row cap, so more rows may exist"
    explanation = answer.explanation.strip()
    if explanation:
        summary += f"\n{escaped(explanation, SECTION_TEXT - len(summary) - 1)}"

    sql_blocks, sql_cut = _code_sections(answer.sql, SQL_SECTIONS)
    sources = [
        f"Sources: {_names(answer.tables)}",
        f"{answer.total_rows:,}{more} rows",
        f"{answer.elapsed_s:.2f} s",
        escape(answer.connector),
    ]
    if answer.bytes_processed is not None:
        sources.append(f"{_size(answer.bytes_processed)} processed")
    sources.append(f"approved by {mention(answer.approved_by)}")
    blocks: list[Block] = [_section(summary), *table_blocks, *sql_blocks]
    if sql_cut:
        blocks.append(_context(f"SQL shortened for display ({len(answer.sql):,} characters)."))
    blocks.append(_context(" · ".join(sources)))
    return _finish(f"{answer.total_rows:,}{more} rows: {explanation}", blocks)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} bytes"
    size = count / 1024
    for unit in ("KB", "MB", "GB"):
        if size < 1024:
            return f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TB"

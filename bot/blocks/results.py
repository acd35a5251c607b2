"""The answer to an approved query: summary, first rows (Slack's table block, or monospaced text
where a workspace refuses it), the SQL and its sources."""

from __future__ import annotations

import math
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, RawTextObject, TableBlock

from agent.accounting import QuestionUsage
from agent.outcome import Answer
from agent.relax import is_empty
from bot.blocks.base import (
    FENCE,
    RAN_SQL_FILE,
    SECTION_TEXT,
    SQL_SECTIONS,
    TABLE_COLUMNS,
    TABLE_ROWS,
    Message,
    code_sections,
    context,
    cut,
    escape,
    escaped,
    finish,
    mention,
    names,
    section,
    size,
)
from bot.blocks.explain import explain_button
from bot.blocks.followups import follow_up_buttons

#: Characters kept of one table cell.
CELL_TEXT = 200
#: Sections a monospaced result table may take when the table block does not fit.
TEXT_TABLE_SECTIONS = 4
EMPTY = "The query returned no rows: nothing matched its filters."
ALL_NULL = "Every value in the result is empty (NULL): nothing matched its filters."


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
    budget = SECTION_TEXT - 2 * len(FENCE) - 2
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
        section(f"{FENCE}\n" + "\n".join(s) + f"\n{FENCE}") for s in sections if s
    ]
    return blocks, fitted


def usage_text(usage: QuestionUsage | None) -> str:
    """The usage for the sources line ("2 model calls, 3.1k tokens"; "~" marks estimates)."""
    if not usage or not usage["calls"]:
        return ""
    calls = usage["calls"]
    tokens = usage["input_tokens"] + usage["output_tokens"]
    shown = f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
    approx = "~" if usage.get("approximate") else ""
    return f"{calls} model call{'s' if calls != 1 else ''}, {approx}{shown} tokens"


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
    if is_empty(answer.columns, answer.rows, answer.total_rows):
        summary += f"\n:mag: {EMPTY if answer.total_rows == 0 else ALL_NULL}"
    explanation = answer.explanation.strip()
    if explanation:
        summary += f"\n{escaped(explanation, SECTION_TEXT - len(summary) - 1)}"

    sql_blocks, sql_cut = code_sections(answer.sql, SQL_SECTIONS)
    sources = [
        f"Sources: {names(answer.tables)}",
        f"{answer.total_rows:,}{more} rows",
        f"{answer.elapsed_s:.2f} s",
        escape(answer.connector),
    ]
    if answer.bytes_processed is not None:
        sources.append(f"{size(answer.bytes_processed)} processed")
    if answer.job_url:  # built by the connector from the job id, never by the model
        sources.append(f"<{escape(answer.job_url)}|job>")
    sources.append(f"approved by {mention(answer.approved_by)}")
    if spent := usage_text(answer.usage):
        sources.append(spent)
    blocks: list[Block] = [section(summary), *table_blocks, *sql_blocks]
    if sql_cut:
        blocks.append(
            context(
                f"SQL shortened for display ({len(answer.sql):,} characters); the whole "
                f"statement is in the file `{RAN_SQL_FILE}` in this thread."
            )
        )
    if answer.proposal_id:
        buttons = follow_up_buttons(answer.proposal_id, answer.follow_ups)
        blocks.append(ActionsBlock(elements=[*buttons, explain_button(answer.proposal_id)]))
    blocks.append(context(" · ".join(sources)))  # the footer stays last
    return finish(f"{answer.total_rows:,}{more} rows: {explanation}", blocks)

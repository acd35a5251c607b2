"""The answer to an approved query: summary, first rows (Slack's table block, or monospaced text
where a workspace refuses it; a single value, or one short row, as sentences), the SQL (or, when
the approved card just above shows it, a note saying so) and its sources."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, Block, RawTextObject, TableBlock

from agent.model.accounting import QuestionUsage
from agent.outcome import Answer
from agent.strategies.relax import is_empty
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
    sql_cut,
)
from bot.blocks.explain import explain_button
from bot.blocks.feedback import feedback_buttons
from bot.blocks.followups import follow_up_buttons
from bot.blocks.private_files import IN_DIRECT_MESSAGES
from bot.blocks.schedule_modal import schedule_button
from bot.cells import result_cells
from bot.words import label, only_row
from connectors.units import byte_size, counted

#: Characters kept of one table cell.
CELL_TEXT = 200
#: Sections a monospaced result table may take when the table block does not fit.
TEXT_TABLE_SECTIONS = 4
EMPTY = "The query returned no rows: nothing matched its filters."
ALL_NULL = "Every value in the result is empty (NULL): nothing matched its filters."


def _numeric(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    )


def _table_block(columns: list[str], rows: list[list[Any]]) -> TableBlock:
    heads = [RawTextObject(text=cut(label(c), CELL_TEXT) or " ") for c in columns]
    cells = result_cells(columns, rows)
    body = [[RawTextObject(text=cut(v, CELL_TEXT)) for v in row] for row in cells]
    settings = [
        {"align": "right"} if _numeric([row[i] for row in rows]) else {"align": "left"}
        for i in range(len(columns))
    ]
    return TableBlock(rows=[heads, *body], column_settings=settings)


def _text_table(columns: list[str], rows: list[list[Any]]) -> tuple[list[Block], int]:
    """A monospaced table in code sections; returns the blocks and how many rows fit."""
    width = 30
    cells = [[cut(v, width) for v in row] for row in result_cells(columns, rows)]
    heads = [cut(label(c), width) for c in columns]
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
    tokens = usage["input_tokens"] + usage["output_tokens"]
    shown = f"{tokens / 1000:.1f}k tokens" if tokens >= 1000 else counted(tokens, "token")
    approx = "~" if usage.get("approximate") else ""
    return f"{counted(usage['calls'], 'model call')}, {approx}{shown}"


#: Characters the values of a one-row answer take in all (the explanation follows them).
SENTENCE_TEXT = 1600


def _sentences(columns: list[str], row: list[Any]) -> tuple[str, str]:
    """A one-row answer as mrkdwn lines ("Count: *5,000*", the value in bold when it is one
    line) and as plain text for the notification ("Count: 5,000")."""
    shown_row = result_cells(columns, [row])[0]
    pairs = [(label(c), v) for c, v in zip(columns, shown_row, strict=True)]
    budget = SENTENCE_TEXT // len(pairs)
    lines = []
    for name, value in pairs:
        shown = escaped(value, budget)
        lines.append(
            f"{escaped(name, CELL_TEXT)}: " + (f"*{shown}*" if "\n" not in shown else shown)
        )
    return "\n".join(lines), "; ".join(f"{name}: {value}" for name, value in pairs)


def _sql_blocks(sql: str, approved_above: bool) -> list[Block]:
    """The SQL that ran: a note pointing at the card above when it is the SQL that card shows
    (the answer then does not repeat it), else the SQL itself. SQL too long for a message is
    whole in `RAN_SQL_FILE` either way (`bot.conversations.answers` uploads it)."""
    whole = f"the whole statement is in the file `{RAN_SQL_FILE}` in this thread."
    too_long = sql_cut(sql)
    if approved_above:
        text = ":arrow_up: The SQL is the query approved above, run exactly as shown there"
        return [context(f"{text}; {whole}" if too_long else f"{text}.")]
    blocks, _ = code_sections(sql, SQL_SECTIONS)
    if too_long:
        blocks.append(context(f"SQL shortened for display ({len(sql):,} characters); {whole}"))
    return blocks


def result(
    answer: Answer,
    *,
    display_rows: int,
    use_table: bool = True,
    approved_above: bool = False,
    private: bool = False,
    feedback: bool = False,
    schedule: bool = False,
) -> Message:
    """The answer to an approved query: summary, first rows, SQL and sources.

    A one-row answer of a few columns reads as sentences ("Count: *5,000*") instead of a table.
    `use_table` picks Slack's table block when the rows fit it; otherwise (or when a workspace
    refuses table blocks) the rows go in a monospaced code block. `approved_above`: the thread
    shows this very SQL on the approved card just above, so the answer refers to it instead of
    repeating it. `private`: only the asker and the approver see it (its files go to their
    direct messages, and it offers no follow-up question: a follow-up is asked in the thread,
    for everyone).
    `feedback`: Slack's thumbs up/down under it (`bot.blocks.feedback`); `schedule`: a
    "Schedule…" button (`bot.blocks.schedule_modal`).
    """
    rows = answer.rows[: max(0, display_rows)]
    only = only_row(answer, len(rows))
    table_blocks, shown = _rows_blocks(answer.columns, rows, only is not None, use_table)
    rows_text = counted(answer.total_rows, "row", more=answer.capped)
    if only is not None:
        summary, headline = _sentences(answer.columns, only)
    else:
        summary = f"*{rows_text}*"
        headline = rows_text
    if shown < answer.total_rows:
        summary += f" (first {shown:,} shown)"
    if answer.capped:
        summary += " — the query hit the row cap, so more rows may exist"
    if private and shown < answer.total_rows:
        summary += f"\n:lock: {IN_DIRECT_MESSAGES}"
    if is_empty(answer.columns, answer.rows, answer.total_rows):
        summary += f"\n:mag: {EMPTY if answer.total_rows == 0 else ALL_NULL}"
        if answer.coverage:
            summary += f" {escaped(answer.coverage, SECTION_TEXT // 2)}"
    explanation = answer.explanation.strip()
    if explanation:
        summary += f"\n{escaped(explanation, SECTION_TEXT - len(summary) - 1)}"
    blocks: list[Block] = [
        section(summary),
        *table_blocks,
        *_sql_blocks(answer.sql, approved_above),
    ]
    if answer.proposal_id:
        buttons = follow_up_buttons(answer.proposal_id, [] if private else answer.follow_ups)
        buttons.append(explain_button(answer.proposal_id))
        if schedule:
            buttons.append(schedule_button(answer.proposal_id))
        blocks.append(ActionsBlock(elements=buttons))
        if feedback:
            blocks.append(feedback_buttons(answer.proposal_id))
    blocks.append(context(_sources(answer, rows_text)))  # the footer stays last
    return finish(" — ".join(p for p in (headline, explanation) if p), blocks)


def _rows_blocks(
    columns: list[str], rows: list[list[Any]], as_sentences: bool, use_table: bool
) -> tuple[list[Block], int]:
    """The blocks that show `rows` (none when the summary says the one row in sentences, or
    there are no columns), and how many rows they show."""
    if as_sentences:
        return [], 1
    if not columns:
        return [], 0
    if use_table and len(columns) <= TABLE_COLUMNS and len(rows) + 1 <= TABLE_ROWS:
        return [_table_block(columns, rows)], len(rows)
    return _text_table(columns, rows)


def _sources(answer: Answer, rows_text: str) -> str:
    """The footer: tables, rows, time, warehouse, bytes and job where known, who approved, and
    what the model calls cost."""
    sources = [f"Sources: {names(answer.tables)}", rows_text, f"{answer.elapsed_s:.2f} s"]
    if answer.label:
        sources.insert(0, escape(answer.label))
    sources.append(escape(answer.connector))
    if answer.bytes_processed is not None:
        sources.append(f"{byte_size(answer.bytes_processed)} processed")
    if answer.job_url:  # built by the connector from the job id, never by the model
        sources.append(f"<{escape(answer.job_url)}|job>")
    sources.append(f"approved by {mention(answer.approved_by)}")
    if spent := usage_text(answer.usage):
        sources.append(spent)
    return " · ".join(sources)

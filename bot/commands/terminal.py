"""Plain-text rendering of outcomes for `querybot ask`, worded as in Slack's messages: a single
value as "Label: value", counts that agree in number, the SQL just approved referred to rather
than printed twice."""

from __future__ import annotations

from typing import Any

from agent.outcome import Answer, Outcome, Proposal
from bot.words import header, label, only_row
from connectors.units import counted

#: Where the SQL would go when the person approved it just above.
APPROVED_ABOVE = "SQL: the query approved above, run exactly as shown there."


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def table_text(columns: list[str], rows: list[list[Any]], max_width: int = 40) -> str:
    """A monospaced table: header, rule, rows; cells cut at `max_width` characters."""
    cells = [[_cell(v)[:max_width] for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def proposal_text(proposal: Proposal) -> str:
    parts = [proposal.explanation, "", proposal.sql, "", "Reads: " + ", ".join(proposal.tables)]
    if proposal.label:
        parts.append(f"Kind: {proposal.label}")
    parts += [f"Definition: {d}" for d in proposal.definitions]
    parts += [f"Warning: {w}" for w in proposal.warnings]
    return "\n".join(parts)


def answer_text(answer: Answer, shown: int, *, approved_above: bool = False) -> str:
    """The result (a one-row answer of a few columns as "Label: value" lines, else a table of
    its first `shown` rows), its sources, and its SQL; `approved_above`: the SQL is the one the
    person just approved above, so it is referred to rather than printed again."""
    rows = answer.rows[:shown]
    counted_rows = counted(answer.total_rows, "row", more=answer.capped)
    only = only_row(answer, len(rows))
    if only is not None:
        pairs = zip(answer.columns, only, strict=True)
        lines = [*(f"{label(column)}: {_cell(value)}" for column, value in pairs), ""]
    else:
        first = f" (first {len(rows):,} shown)" if answer.total_rows > len(rows) else ""
        lines = [table_text([header(c) for c in answer.columns], rows), "", counted_rows + first]
    sources = (
        f"Sources: {', '.join(answer.tables)} · {answer.connector} · "
        f"{counted_rows} · {answer.elapsed_s:.2f} s · approved by {answer.approved_by}"
    )
    if answer.label:
        sources += f" · {answer.label}"
    sql = APPROVED_ABOVE if approved_above else answer.sql
    return "\n".join([*lines, sources, "", sql])


def outcome_text(outcome: Outcome, shown: int = 20, *, approved_sql: str | None = None) -> str:
    """What the terminal prints for `outcome`; `approved_sql` is the SQL the person approved
    just above (an answer that ran it refers to it instead of printing it again)."""
    if outcome.kind == "proposal" and outcome.proposal:
        if outcome.answer:  # an empty result, then its loosened version to approve
            above = outcome.answer.sql == approved_sql
            empty = answer_text(outcome.answer, shown, approved_above=above)
            return f"{empty}\n\n{outcome.message}\n\n{proposal_text(outcome.proposal)}"
        return proposal_text(outcome.proposal)
    if outcome.kind == "answer" and outcome.answer:
        above = outcome.answer.sql == approved_sql
        follow_ups = [f"Follow up: {q}" for q in outcome.answer.follow_ups]
        return "\n".join(
            [
                answer_text(outcome.answer, shown, approved_above=above),
                *(["", *follow_ups] if follow_ups else []),
            ]
        )
    return outcome.message

"""Plain-text rendering of outcomes for `querybot ask`, worded as in Slack's messages: a single
value as "Label: value", counts that agree in number, the SQL just approved referred to rather
than printed twice."""

from __future__ import annotations

from typing import Any

from agent.outcome import Answer, Outcome, Proposal
from bot.cells import result_cells
from bot.words import label, only_row
from connectors.units import counted

#: Where the SQL would go when the person approved it just above.
APPROVED_ABOVE = "SQL: the query approved above, run exactly as shown there."


def table_text(columns: list[str], rows: list[list[Any]], max_width: int = 40) -> str:
    """A monospaced table of a result: headers in words, a rule, the rows as `result_cells`
    shows them; cells cut at `max_width` characters. `columns` are the result's own names."""
    cells = [[v[:max_width] for v in row] for row in result_cells(columns, rows)]
    heads = [label(c)[:max_width] for c in columns]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    return "\n".join([line(heads), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def _tables(tables: list[str]) -> str:
    return ", ".join(tables) or "no tables"


def proposal_text(proposal: Proposal) -> str:
    parts = [proposal.explanation, *(f"Base: {b}" for b in proposal.bases), "", proposal.sql]
    parts += ["", f"Reads: {_tables(proposal.tables)}"]
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
    covers = [answer.coverage] if answer.coverage else []  # an empty period: the data's dates
    if only is not None:
        pairs = zip(answer.columns, result_cells(answer.columns, [only])[0], strict=True)
        lines = [*(f"{label(column)}: {value}" for column, value in pairs), *covers, ""]
    else:
        first = f" (first {len(rows):,} shown)" if answer.total_rows > len(rows) else ""
        lines = [table_text(answer.columns, rows), "", counted_rows + first, *covers]
    sources = (
        f"Sources: {_tables(answer.tables)} · {answer.connector} · "
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

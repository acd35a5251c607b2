"""Plain-text rendering of outcomes for `querybot ask`."""

from __future__ import annotations

from typing import Any

from agent.outcome import Answer, Outcome, Proposal


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
    parts += [f"Warning: {w}" for w in proposal.warnings]
    return "\n".join(parts)


def answer_text(answer: Answer, shown: int) -> str:
    rows = answer.rows[:shown]
    more = "+" if answer.capped else ""
    header = f"{answer.total_rows:,}{more} rows" + (
        f" (first {len(rows)} shown)" if answer.total_rows > len(rows) else ""
    )
    sources = (
        f"Sources: {', '.join(answer.tables)} · {answer.connector} · "
        f"{answer.total_rows:,}{more} rows · {answer.elapsed_s:.2f} s · "
        f"approved by {answer.approved_by}"
    )
    return "\n".join([table_text(answer.columns, rows), "", header, sources, "", answer.sql])


def outcome_text(outcome: Outcome, shown: int = 20) -> str:
    if outcome.kind == "proposal" and outcome.proposal:
        if outcome.answer:  # an empty result, then its loosened version to approve
            empty = answer_text(outcome.answer, shown)
            return f"{empty}\n\n{outcome.message}\n\n{proposal_text(outcome.proposal)}"
        return proposal_text(outcome.proposal)
    if outcome.kind == "answer" and outcome.answer:
        follow_ups = [f"Follow up: {q}" for q in outcome.answer.follow_ups]
        return "\n".join(
            [answer_text(outcome.answer, shown), *(["", *follow_ups] if follow_ups else [])]
        )
    return outcome.message

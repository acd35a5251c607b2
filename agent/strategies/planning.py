"""The plan-first strategy's plan: what the model says it will compute, before any SQL, and the
grounding of its text filters against the values that really occur (agent.catalog.grounding).

A filter value that does not occur is replaced by the closest real one (the SQL step is told
which); one with nothing close makes the bot ask which value the person means, before any SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlglot import exp

from agent.catalog.grounding import check_values
from agent.catalog.snapshot import CatalogSnapshot, is_text, table_key
from agent.model import prompts
from connectors.base import Connector, TableInfo

#: Operators whose text value must occur in the column as written.
EXACT = {"=", "==", "!=", "<>", "is", "equals"}


class PlanFilter(BaseModel):
    column: str = Field(description="The filtered column as table.column.")
    operator: str = Field(default="=", description="=, !=, <, >, between, in, like...")
    value: str = Field(description="The value as the question means it (text as written).")


class PlanReply(BaseModel):
    """The model's reading of the question before it writes SQL."""

    kind: Literal["plan", "clarify"] = Field(
        description="'plan', or 'clarify' when the question is ambiguous or cannot be answered."
    )
    explanation: str = Field(
        default="", description="One sentence: what will be computed, or your question."
    )
    fields: list[str] = Field(default_factory=list, description="Columns or measures shown.")
    filters: list[PlanFilter] = Field(default_factory=list)
    grouping: list[str] = Field(default_factory=list, description="Columns grouped by.")
    ordering: str = Field(default="", description="How rows are ordered, if at all.")


def _table(
    snapshot: CatalogSnapshot, column: str, shown: tuple[str, ...]
) -> tuple[TableInfo, str] | None:
    """The table and column name `column` (table.column, or a bare column of a shown table)
    means, when it is a text column."""
    table_part, _, name = column.strip().rpartition(".")
    candidates: list[TableInfo] = []
    if table_part:
        key = table_key(table_part)
        candidates = [t for k, t in snapshot.by_key.items() if k == key or k.endswith("." + key)]
    else:
        candidates = [
            snapshot.by_key[table_key(t)] for t in shown if table_key(t) in snapshot.by_key
        ]
    for table in candidates:
        info = next((c for c in table.columns if c.name.lower() == name.lower()), None)
        if info is not None and is_text(info):
            return table, info.name
    return None


@dataclass(frozen=True)
class Grounded:
    """A plan with its text filters checked: `plan` (JSON-plain, values corrected), and the
    clarifying question when a value has nothing close in the data."""

    plan: dict[str, Any]
    clarify: str = ""


def ground_plan(
    reply: PlanReply,
    snapshot: CatalogSnapshot,
    shown: tuple[str, ...],
    connector: Connector | None,
) -> Grounded:
    """Check each text filter of `reply` against the column's real values (profiles first,
    `connector` live when given) and correct or question the ones that do not occur."""
    filters, corrections = [], []
    for f in reply.filters:
        entry = {"column": f.column, "operator": f.operator, "value": f.value}
        found = _table(snapshot, f.column, shown) if f.operator.lower() in EXACT else None
        if found is not None:
            table, column = found
            probe = exp.select("1").from_(exp.to_table(table.name, dialect=snapshot.dialect))
            probe = probe.where(exp.column(column, quoted=True).eq(exp.Literal.string(f.value)))
            misses = check_values(probe.sql(snapshot.dialect), snapshot, connector)
            if misses:
                miss = misses[0]
                where = f"{table.short_name}.{column}"
                if not miss.suggestions:
                    profile = snapshot.column_profile(table.name, column)
                    some = ", ".join(f"'{v}'" for v in (profile.values[:5] if profile else ()))
                    question = f"I could not find '{f.value}' in {where}, nor anything close."
                    if some:
                        question += f" It holds values such as {some}."
                    return Grounded(plan={}, clarify=question + " Which one do you mean?")
                entry = {**entry, "value": miss.suggestions[0], "asked": f.value}
                corrections.append(
                    prompts.PLAN_CORRECTION.format(
                        column=where, asked=f.value, used=miss.suggestions[0]
                    )
                )
        filters.append(entry)
    plan = {
        "explanation": reply.explanation.strip(),
        "fields": list(reply.fields),
        "filters": filters,
        "grouping": list(reply.grouping),
        "ordering": reply.ordering.strip(),
        "corrections": corrections,
    }
    return Grounded(plan=plan)


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """The plan as short lines, for the SQL step's prompt and for "How I read your question"."""
    lines = []
    if plan.get("fields"):
        lines.append("Shows: " + ", ".join(plan["fields"]))
    for f in plan.get("filters", []):
        was = f" (you wrote '{f['asked']}', which does not occur)" if f.get("asked") else ""
        lines.append(f"Filter: {f['column']} {f['operator']} '{f['value']}'{was}")
    if plan.get("grouping"):
        lines.append("Grouped by: " + ", ".join(plan["grouping"]))
    if plan.get("ordering"):
        lines.append("Ordered by: " + plan["ordering"])
    return lines


def plan_text(plan: dict[str, Any]) -> str:
    """The plan for the SQL step, with the corrected values spelt out."""
    lines = [f"- {line}" for line in plan_lines(plan)]
    return prompts.PLAN_FOR_SQL.format(plan="\n".join([*lines, *plan.get("corrections", [])]))

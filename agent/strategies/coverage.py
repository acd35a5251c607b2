"""Which dates the data covers, said where a question's period found nothing.

An empty result filtered on a date column (the question's period) is most often a period past
the data's end or before its start: the answer says which dates the column holds (its first
and last value, `agent.catalog.date_range`, read through the connector as `AgentDeps.date_ranges`
allows), so the person sees why, and a loosened query that drops the period says it answers
another period (agent.nodes.relax).
"""

from __future__ import annotations

from agent.catalog.date_range import DateRange
from agent.context import AgentDeps
from agent.strategies.relax import Period, periods
from connectors.base import ConnectorError


def period_range(period: Period, deps: AgentDeps, identity: str) -> DateRange | None:
    """What the data holds in `period`'s column, or None when unknown."""
    if period.table is None:
        return None
    for found in deps.date_ranges([period.table], identity):
        if found.column.lower() == period.column.lower():
            return found
    return None


def covers(found: DateRange) -> str:
    """The sentence naming what `found` covers."""
    return f"The data covers {found.first} to {found.last} ({found.name})."


def coverage_note(sql: str, tables: list[str], deps: AgentDeps, identity: str) -> str:
    """For an empty result of `sql` (reading `tables`): which dates the data covers in the
    column of its narrowest date filter; "" when it has none or they are unknown."""
    try:
        snapshot = deps.visible(identity)
    except ConnectorError:
        return ""
    for period in periods(sql, snapshot, tables):
        found = period_range(period, deps, identity)
        if found is not None:
            return covers(found)
    return ""

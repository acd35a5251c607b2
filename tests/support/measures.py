"""The columns the gate adds to show what a result is ordered by (agent/gate/measures.py), for
tests that compare the rows of a statement as written with the rows of the gate's SQL: those
columns come last, one per fix, and are dropped before comparing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agent.gate import Verdict

#: How the gate's fix for an added column begins.
ADDED = ("added the ranking measure ", "added the sort key ")


def added(verdict: Verdict) -> int:
    """How many columns the gate added to the statement's result."""
    return sum(fix.startswith(ADDED) for fix in verdict.fixes)


def as_written(rows: Iterable[Sequence[Any]], verdict: Verdict) -> list[tuple[Any, ...]]:
    """The rows of the verdict's SQL without the columns the gate added."""
    extra = added(verdict)
    return [tuple(row[: len(row) - extra]) for row in rows]

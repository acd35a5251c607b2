"""Golden cases: accepted statements normalise to the expected SQL; rejected ones say why."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema, check_sql
from tests.support import canary
from tests.support.fixture_files import Case, load_cases
from tests.support.sql_text import tokens

NORMALISE = load_cases("normalise.sql")
REJECT = load_cases("reject.sql")


def schema_for(case: Case) -> GateSchema:
    if case.meta.get("schema") == "unknown":
        return GateSchema.from_tables([], case.dialect)
    if "allowed" in case.meta:
        allowed = [a.strip() for a in case.meta["allowed"].split(",")]
        return GateSchema.from_tables(canary.tables(case.dialect), case.dialect, allowed=allowed)
    return canary.schema(case.dialect)


def row_limit(case: Case) -> int | None:
    value = case.meta.get("row_limit", "1000")
    return None if value == "none" else int(value)


@pytest.mark.parametrize("case", NORMALISE, ids=str)
def test_accepted_statements_normalise(case: Case) -> None:
    schema = schema_for(case)
    verdict = check_sql(case.sql, schema, row_limit=row_limit(case))
    assert verdict.ok, verdict.reasons
    assert tokens(verdict.sql, case.dialect) == tokens(case.expected, case.dialect)
    if "tables" in case.meta:
        assert verdict.tables == tuple(t.strip() for t in case.meta["tables"].split(",") if t)
    if "fixes" in case.meta:
        assert case.meta["fixes"] in verdict.fixes
    again = check_sql(verdict.sql, schema, row_limit=row_limit(case))
    assert (again.ok, again.sql, again.fixes) == (True, verdict.sql, ()), "not a fixpoint"


@pytest.mark.parametrize("case", REJECT, ids=str)
def test_rejected_statements_say_why(case: Case) -> None:
    verdict = check_sql(case.sql, schema_for(case), row_limit=row_limit(case))
    assert not verdict.ok
    assert case.code in [r.code for r in verdict.reasons], verdict.reasons
    if "suggestion" in case.meta:
        assert case.meta["suggestion"] in [r.suggestion for r in verdict.reasons]
    if "message" in case.meta:
        assert any(case.meta["message"] in str(r) for r in verdict.reasons), verdict.reasons
    assert all("\x1b[" not in str(r) for r in verdict.reasons), "ANSI codes in a message"

"""The gate and the Snowflake connector agree on function calls: whatever the gate accepts in the
`snowflake` dialect, the connector's own check of every call's name accepts as the gate wrote
it, so an approved query is never refused by the connector for a call (issue 21)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot.dialects.snowflake import Snowflake

from agent.gate.check import check_sql
from agent.gate.schema import GateSchema
from connectors.base import PermissionDenied
from connectors.snowflake.sql import check_calls

SCHEMA = GateSchema("snowflake")


@pytest.mark.parametrize(
    "sql",
    [
        # other engines' functions, which sqlglot models and Snowflake has not: unqualified,
        # such a name could resolve to a user-defined function
        "SELECT FARM_FINGERPRINT(a) FROM t",
        "SELECT IS_NAN(a) FROM t",
        "SELECT CITY_HASH64(a) FROM t",
        "SELECT JSON_SET(a, b) FROM t",
    ],
)
def test_a_call_the_connector_refuses_is_refused_by_the_gate(sql: str) -> None:
    verdict = check_sql(sql, SCHEMA)
    assert not verdict.ok
    assert [r.code for r in verdict.reasons] == ["denied_function"]
    assert "pure built-in functions the bot may use" in verdict.reasons[0].message


def test_pure_built_ins_still_pass() -> None:
    # XOR and BIT_AND with two arguments are written as Snowflake's BOOLXOR and BITAND
    assert "BOOLXOR(a, b)" in check_sql("SELECT XOR(a, b) FROM t", SCHEMA).sql
    assert "BITAND(a, b)" in check_sql("SELECT BIT_AND(a, b) FROM t", SCHEMA).sql
    verdict = check_sql(
        "SELECT IFF(a > 1, 'big', 'small') AS size, DATEADD(DAY, 1, d) AS next_day, "
        "COALESCE(b, 0) AS b, CASE WHEN a = 1 THEN 'one' END AS one FROM t",
        SCHEMA,
    )
    assert verdict.ok, verdict.reasons


@pytest.mark.slow
def test_everything_the_gate_accepts_the_connector_accepts() -> None:
    """Every function name sqlglot's Snowflake parser knows, with one and two arguments."""
    accepted = 0
    for name in sorted(Snowflake.Parser.FUNCTIONS):
        for args in ("a", "a, b"):
            verdict = check_sql(f"SELECT {name}({args}) AS x FROM t", SCHEMA)
            if not verdict.ok:
                continue
            accepted += 1
            try:
                check_calls(sqlglot.parse_one(verdict.sql, read="snowflake"), verdict.sql)
            except PermissionDenied as refused:
                pytest.fail(f"{name}({args}): the gate wrote {verdict.sql!r}; {refused.message}")
    assert accepted > 300  # the check above ran over real acceptances, not none

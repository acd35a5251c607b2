"""The gate's Looker rules: golden cases over the recorded `thelook` model, and the prompt."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema, check_sql
from agent.gate.looker import RULES
from agent.model import prompts
from connectors.base import ColumnInfo, TableInfo
from connectors.looker.metadata import DIMENSION
from tests.fixtures.looker import recorded
from tests.support.fixture_files import Case, load_cases, load_harmful
from tests.support.sql_text import tokens

CASES = load_cases("../looker/gate.sql")
ACCEPTED = [c for c in CASES if c.code is None]
REJECTED = [c for c in CASES if c.code is not None]


@pytest.fixture(scope="module")
def schema() -> GateSchema:
    return GateSchema.from_tables(recorded.tables(), "looker")


@pytest.mark.parametrize("case", ACCEPTED, ids=str)
def test_accepted_looker_statements_normalise(case: Case, schema: GateSchema) -> None:
    verdict = check_sql(case.sql, schema)
    assert verdict.ok, verdict.reasons
    assert tokens(verdict.sql, "looker") == tokens(case.expected, "looker")
    assert not verdict.sql.rstrip().endswith(";")
    if "tables" in case.meta:
        assert verdict.tables == (case.meta["tables"],)
    if "fixes" in case.meta:
        assert case.meta["fixes"] in verdict.fixes
    again = check_sql(verdict.sql, schema)
    assert (again.ok, again.sql, again.fixes) == (True, verdict.sql, ()), "not a fixpoint"


@pytest.mark.parametrize("case", REJECTED, ids=str)
def test_rejected_looker_statements_name_the_rule(case: Case, schema: GateSchema) -> None:
    verdict = check_sql(case.sql, schema)
    assert not verdict.ok
    assert case.code in [r.code for r in verdict.reasons], verdict.reasons
    if "message" in case.meta:
        assert any(case.meta["message"] in str(r) for r in verdict.reasons), verdict.reasons
    for reason in verdict.reasons:
        if reason.code in RULES:
            assert str(reason).startswith("Looker SQL rule broken: " + RULES[reason.code])


def test_every_rule_has_a_rejected_case() -> None:
    assert set(RULES) <= {c.code for c in REJECTED}


def test_select_star_reads_an_explore_without_measures() -> None:
    """`*` is refused only because it would read measures: an Explore with none may use it."""
    explore = TableInfo(
        "thelook.events",
        (ColumnInfo("events.id", "INT64", DIMENSION), ColumnInfo("events.kind", "STRING")),
    )
    schema = GateSchema.from_tables([explore, *recorded.tables()], "looker")
    verdict = check_sql("SELECT * FROM `thelook`.`events`", schema)
    assert verdict.ok, verdict.reasons
    assert verdict.sql == "SELECT\n  *\nFROM `thelook`.`events`\nLIMIT 1000"
    assert not check_sql("SELECT * FROM `thelook`.`users`", schema).ok


def test_the_harmful_catalogue_is_refused_for_looker(schema: GateSchema) -> None:
    """Every statement of the gate's harmful catalogue (all dialects) is refused for Looker."""
    passed = [h.sql for h in load_harmful() if check_sql(h.sql, schema).ok]
    assert passed == []


def test_the_same_statement_passes_in_another_dialect() -> None:
    """The rules are Looker's only: the same tables in DuckDB may be joined."""
    tables = recorded.tables()
    sql = 'SELECT u."users.state" FROM thelook.users AS u JOIN thelook.order_items AS o ON TRUE'
    assert check_sql(sql, GateSchema.from_tables(tables, "duckdb")).ok
    looker = check_sql(sql.replace('"', "`"), GateSchema.from_tables(tables, "looker"))
    assert {r.code for r in looker.reasons} == {"looker_backticks", "looker_join"}


def test_the_prompt_explains_the_rules_to_the_model() -> None:
    text = prompts.DIALECT_NAMES["looker"]
    for words in ("backticks", "AGGREGATE(", "GROUP BY", "JOIN", "subquery", "window", "semicolon"):
        assert words in text

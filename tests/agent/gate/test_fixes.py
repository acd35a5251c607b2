"""The cheap deterministic fixes and the row cap, as pure functions."""

from __future__ import annotations

import pytest
import sqlglot

from agent.gate import check_sql
from agent.gate.fixes import clean, strip_fences, strip_trailing_semicolons
from agent.gate.limit import cap_rows, returns_one_row
from tests.support import canary


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("Here you go:\n```\nSELECT 1;\n```\nIt counts rows.", "SELECT 1;"),
        ("```sql\nSELECT 1", "SELECT 1"),
        ("```sql\nSELECT 1\n```\n```sql\nDROP TABLE t\n```", "SELECT 1;\nDROP TABLE t"),
        # a fence on one line: its language word is not SQL, and the statement is kept whole
        ("```sql select 1```", "select 1"),
        ("```SELECT a\nFROM t```", "SELECT a\nFROM t"),
        ("```select 1```", "select 1"),
        ("```duckdb\nSELECT 1\n```", "SELECT 1"),
    ],
)
def test_strip_fences(text: str, expected: str) -> None:
    assert strip_fences(text) == (expected, "stripped markdown fence")


def test_strip_trailing_semicolons_only_at_the_end() -> None:
    assert strip_trailing_semicolons("SELECT 1 ; ;\n") == ("SELECT 1", "removed trailing semicolon")
    assert strip_trailing_semicolons("SELECT 1; SELECT 2") == ("SELECT 1; SELECT 2", None)
    assert clean("  SELECT 1  ") == ("SELECT 1", ())


def test_fences_around_two_statements_are_not_guessed() -> None:
    verdict = check_sql("```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```", canary.schema("duckdb"))
    assert [r.code for r in verdict.reasons] == ["multiple_statements"]


@pytest.mark.parametrize(
    ("sql", "one_row"),
    [
        ("SELECT COUNT(*) FROM t", True),
        ("SELECT COUNT(*), 'label', MAX(a) / 2 FROM t WHERE b > 1", True),
        ("SELECT COUNT(*) FROM t GROUP BY a", False),
        ("SELECT a, COUNT(*) FROM t", False),
        ("SELECT SUM(a) OVER () FROM t", False),
        ("SELECT COUNT(*), UNNEST([1, 2])", False),
        ("SELECT COUNT(*), my_function(1) FROM t", False),
        ("SELECT * FROM t", False),
        ("SELECT COUNT(*) FROM t UNION ALL SELECT COUNT(*) FROM u", False),
    ],
)
def test_returns_one_row(sql: str, one_row: bool) -> None:
    assert returns_one_row(sqlglot.parse_one(sql, read="duckdb")) is one_row


@pytest.mark.parametrize(
    ("sql", "capped", "expected"),
    [
        ("SELECT a FROM t", True, "SELECT a FROM t LIMIT 100"),
        ("SELECT a FROM t LIMIT 7", False, "SELECT a FROM t LIMIT 7"),
        ("SELECT a FROM t LIMIT 100", False, "SELECT a FROM t LIMIT 100"),
        ("SELECT a FROM t LIMIT 101", True, "SELECT a FROM t LIMIT 100"),
        (
            "SELECT a FROM t UNION SELECT b FROM u",
            True,
            "SELECT a FROM t UNION SELECT b FROM u LIMIT 100",
        ),
        ("SELECT MAX(a) FROM t", False, "SELECT MAX(a) FROM t"),
    ],
)
def test_cap_rows(sql: str, capped: bool, expected: str) -> None:
    query = sqlglot.parse_one(sql, read="duckdb")
    assert cap_rows(query, 100) is capped
    assert query.sql("duckdb") == expected


def test_gate_reports_the_cap() -> None:
    schema = canary.schema("duckdb")
    assert check_sql("SELECT id FROM orders", schema).row_cap_applied
    assert not check_sql("SELECT id FROM orders LIMIT 3", schema).row_cap_applied
    assert check_sql("SELECT id FROM orders", schema, row_limit=5).sql.endswith("LIMIT 5")

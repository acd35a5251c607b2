"""Characters engines read differently from the gate (issue 15 item 2): refused outside string
literals and in quoted names, in every dialect; kept inside strings, where they are data."""

from __future__ import annotations

import dataclasses
import os
import re
import unicodedata

import duckdb
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot.tokens import TokenType

from agent.gate import GateSchema, check_sql
from agent.gate.check import _recheck
from agent.gate.fixes import clean
from tests.agent.gate.test_golden_cases import row_limit, schema_for
from tests.support import canary
from tests.support.fixture_files import Case, load_cases
from tests.support.needs import in_ci
from tests.support.sql_text import tokens

_CODE_POINT = re.compile(r"<U\+([0-9A-F]{4,6})>")


def decoded(case: Case) -> Case:
    """The case with each `<U+XXXX>` replaced by the character it names."""

    def put(text: str | None) -> str | None:
        return None if text is None else _CODE_POINT.sub(lambda m: chr(int(m[1], 16)), text)

    return dataclasses.replace(case, sql=put(case.sql), expected=put(case.expected))


CASES = [decoded(c) for c in load_cases("invisible.sql")]
ACCEPTED = [c for c in CASES if c.code is None]
REJECTED = [c for c in CASES if c.code is not None]


def test_fixtures_cover_every_dialect() -> None:
    assert {c.dialect for c in REJECTED} >= {
        "duckdb",
        "postgres",
        "mysql",
        "sqlite",
        "bigquery",
        "looker",
    }
    assert all(any(not c.isascii() or not c.isprintable() for c in x.sql) for x in CASES)


@pytest.mark.parametrize("case", REJECTED, ids=str)
def test_invisible_characters_are_refused(case: Case) -> None:
    verdict = check_sql(case.sql, schema_for(case), row_limit=row_limit(case))
    assert not verdict.ok
    assert [r.code for r in verdict.reasons] == ["invisible_character"], verdict.reasons
    assert case.meta["message"] in str(verdict.reasons[0]), verdict.reasons


@pytest.mark.parametrize("case", ACCEPTED, ids=str)
def test_inside_strings_they_are_data(case: Case) -> None:
    schema = schema_for(case)
    verdict = check_sql(case.sql, schema, row_limit=row_limit(case))
    assert verdict.ok, verdict.reasons
    assert tokens(verdict.sql, case.dialect) == tokens(case.expected, case.dialect)
    again = check_sql(verdict.sql, schema, row_limit=row_limit(case))
    assert (again.ok, again.sql) == (True, verdict.sql), "not a fixpoint"


#: The issue's statements: DuckDB reads the invisible character as a space, sqlglot as part of
#: a name; each one reads the server's settings, runs SQL from a string or lists its tables.
BYPASSES = [
    "SELECT \u200bcurrent_setting('threads')",
    "SELECT * FROM\u2060duckdb_settings()",
    "SELECT * FROM \u2060duckdb_settings()",
    "SELECT * FROM \u200bquery('SELECT 42')",
    "SELECT * FROM \ufeffinformation_schema.tables",
    "SELECT * FROM \u200bduckdb_tables()",
    "SELECT \ufeffversion()",
    "SELECT id FROM customers WHERE id = 1 OR \u200bcurrent_setting('threads') IS NOT NULL",
]


@pytest.mark.parametrize("sql", BYPASSES, ids=repr)
def test_bypasses_run_on_duckdb_and_are_refused(sql: str) -> None:
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
        con.execute("INSERT INTO customers VALUES (1, 'Ann')")
        rows = con.execute(sql).fetchall()  # the engine reads the character as a space
    finally:
        con.close()
    assert rows, "DuckDB ran it and answered"
    for schema in (canary.schema("duckdb"), GateSchema.from_tables([], "duckdb")):
        verdict = check_sql(sql, schema)
        assert not verdict.ok
        assert "invisible_character" in [r.code for r in verdict.reasons], verdict.reasons


def test_what_runs_is_checked_too() -> None:
    """The normalised text is checked again: a zero-width space inside a string survives into
    what runs, a space-like one written back outside it would be refused."""
    verdict = check_sql("SELECT id FROM customers WHERE name = 'a\u200b'", canary.schema("duckdb"))
    assert verdict.ok and "\u200b" in verdict.sql
    schema = canary.schema("duckdb")
    tables = ["canary.main.customers"]
    with pytest.raises(Exception, match="U\\+200B ZERO WIDTH SPACE"):
        _recheck("SELECT \u200bid FROM canary.main.customers LIMIT 1000", schema, 1000, tables)


settings.register_profile(
    "characters",
    max_examples=int(os.environ.get("GATE_EXAMPLES", "300")),
    deadline=None,
    derandomize=in_ci(),
    suppress_health_check=[HealthCheck.too_slow],
)

SEEDS = [c for c in load_cases("normalise.sql") if c.meta.get("schema") != "unknown"]
STRING_SEEDS = [c for c in SEEDS if "'" in c.sql] + [
    Case("strings", dialect, sql, None, None)
    for dialect, sql in (
        ("duckdb", "SELECT id FROM customers WHERE name = 'Ann'"),
        ("postgres", "SELECT id, name FROM customers WHERE name LIKE 'A%' OR name = 'Bob'"),
        ("mysql", "SELECT id FROM customers WHERE name IN ('Ann', 'Bob')"),
        ("sqlite", "SELECT id FROM customers WHERE name <> 'x y'"),
        ("bigquery", "SELECT CONCAT(name, ' - ', 'x') AS label FROM customers"),
    )
]
#: Every character of the classes the issue names; plain space, tab and line breaks excluded.
hidden = st.characters(
    categories=["Cf", "Zs", "Zl", "Zp", "Cc"], exclude_characters=" \t\n\r"
) | st.sampled_from("\u0085\u00a0\u3000\u180e\u3164\u034f\ufe0f\U000e0041\u2800")


def spans(case: Case) -> tuple[list[int], list[int]]:
    """Insertion points outside any quoted token, and inside plain single-quoted strings."""
    tokens = sqlglot.tokenize(case.sql, read=case.dialect)
    quoted = {TokenType.IDENTIFIER} | {t for t in TokenType if t.name.endswith("_STRING")}
    quoted.add(TokenType.STRING)
    inside_quotes = {
        i for t in tokens if t.token_type in quoted for i in range(t.start + 1, t.end + 1)
    }
    outside = [i for i in range(len(case.sql) + 1) if i not in inside_quotes]
    strings = [
        i
        for t in tokens
        if t.token_type == TokenType.STRING and case.sql[t.start] == case.sql[t.end] == "'"
        for i in range(t.start + 1, t.end + 1)
    ]
    return outside, strings


@pytest.mark.slow
@settings(settings.get_profile("characters"))
@given(case=st.sampled_from(SEEDS), char=hidden, data=st.data())
def test_a_hidden_character_outside_quotes_is_always_refused(
    case: Case, char: str, data: st.DataObject
) -> None:
    outside, _ = spans(case)
    at = data.draw(st.sampled_from(outside))
    sql = case.sql[:at] + char + case.sql[at:]
    verdict = check_sql(sql, schema_for(case), row_limit=row_limit(case))
    if char not in clean(sql)[0]:  # trimmed with the text's edges: it never runs
        assert verdict.ok, verdict.reasons
        assert tokens(verdict.sql, case.dialect) == tokens(case.expected, case.dialect)
        return
    assert not verdict.ok, (sql, verdict.sql)
    assert verdict.reasons[0].code == "invisible_character", (sql, verdict.reasons)
    assert f"U+{ord(char):04X}" in verdict.reasons[0].message


@pytest.mark.slow
@settings(settings.get_profile("characters"))
@given(case=st.sampled_from(STRING_SEEDS), char=hidden, data=st.data())
def test_a_hidden_character_inside_a_string_is_kept(
    case: Case, char: str, data: st.DataObject
) -> None:
    _, strings = spans(case)
    at = data.draw(st.sampled_from(strings))
    sql = case.sql[:at] + char + case.sql[at:]
    verdict = check_sql(sql, schema_for(case), row_limit=row_limit(case))
    if unicodedata.category(char) == "Cc":  # controls are refused even in strings
        assert not verdict.ok and verdict.reasons[0].code == "invisible_character"
        return
    assert verdict.ok, (sql, verdict.reasons)
    assert char in verdict.sql

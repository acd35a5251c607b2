"""A refusal told against the author's text (agent/gate/report.py, agent/gate/source.py): each
reason's span points at what was written, through fences, blank lines and transpiling, and
messages quote the author's spelling rather than sqlglot's."""

from __future__ import annotations

from agent.gate import GateSchema, check_sql
from agent.gate.report import Location, judge

TABLES = {"t": {"a": "INT", "b": "TEXT"}}


def schema(dialect: str) -> GateSchema:
    return GateSchema.from_mapping(TABLES, dialect)


def test_a_fenced_statement_is_placed_in_the_text_around_it() -> None:
    source = "Can you check this?\n```sql\nSELECT a,\n       bb FROM t;\n```\n"
    report = judge(source, schema("duckdb"), row_limit=10)
    assert [r.code for r in report.verdict.reasons] == ["unknown_column"]
    assert report.locations == (Location(4, 8, "bb"),)
    assert report.statement == "SELECT a,\n       bb FROM t"
    assert report.to_json()["locations"] == [{"line": 4, "column": 8, "text": "bb"}]


def test_a_transpiled_statement_is_shown_as_written_and_names_are_still_placed() -> None:
    source = "SELECT `a` FROM nosuch"  # backticks: read as MySQL, rewritten for PostgreSQL
    report = judge(source, schema("postgres"), row_limit=10)
    assert report.verdict.sql == 'SELECT "a" FROM nosuch'  # what the gate checked
    assert report.statement == source
    assert report.locations == (Location(1, 17, "nosuch"),)
    assert '"a"' not in report.refusal("q.sql")


def test_a_call_is_quoted_with_its_brackets_as_written() -> None:
    verdict = check_sql("SELECT abs(pg_sleep( 1 )) FROM t", schema("postgres"))
    (reason,) = verdict.reasons
    assert reason.span is not None
    assert verdict.sql[reason.span[0] : reason.span[1]] == "pg_sleep( 1 )"


def test_one_problem_written_twice_is_one_reason() -> None:
    verdict = check_sql("SELECT current_setting('a'), current_setting('b')", schema("postgres"))
    assert [r.code for r in verdict.reasons] == ["denied_function"]


def test_the_refusal_underlines_each_place() -> None:
    source = "SELECT a\nFROM t\nWHERE version() = 'x' AND b = 1"
    report = judge(source, schema("duckdb"), row_limit=10)
    text = report.refusal("q.sql")
    assert text.splitlines() == [
        "The gate refused the statement in q.sql (1 problem):",
        "  line 3, column 7: version() reveals server, session or catalog information",
        "    3 | WHERE version() = 'x' AND b = 1",
        "              ^^^^^^^^^",
    ]

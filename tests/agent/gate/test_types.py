"""The type check: a number read as a date is refused, with the column and what to do, where
the engine itself would refuse it (checked here against DuckDB)."""

from __future__ import annotations

import duckdb
import pytest

from agent.gate import GateSchema, check_sql
from connectors.base import ColumnInfo, TableInfo

PAPERS = TableInfo(
    "papers",
    (
        ColumnInfo("id", "INTEGER"),
        ColumnInfo("year", "BIGINT"),
        ColumnInfo("citations", "DOUBLE"),
        ColumnInfo("published", "DATE"),
    ),
)


def schema(dialect: str) -> GateSchema:
    return GateSchema.from_tables([PAPERS], dialect)


def run_on_duckdb(sql: str) -> None:
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE papers (id INTEGER, year BIGINT, citations DOUBLE, published DATE)"
        )
        con.execute(sql)


@pytest.mark.parametrize(
    ("sql", "written"),
    [
        ("SELECT YEAR(year) FROM papers", "YEAR(papers.year)"),
        ("SELECT EXTRACT(YEAR FROM p.year) FROM papers AS p", "EXTRACT(YEAR FROM p.year)"),
        ("SELECT DATE_TRUNC('month', year), COUNT(*) FROM papers GROUP BY 1", "DATE_TRUNC("),
        ("SELECT id FROM papers WHERE year + INTERVAL 1 DAY > published", "INTERVAL"),
        ("SELECT STRFTIME(citations, '%Y') FROM papers", "STRFTIME(papers.citations"),
        ("SELECT DATE_DIFF('day', published, year) FROM papers", "DATE_DIFF("),
        ("SELECT id FROM (SELECT id, MONTH(year) AS m FROM papers) AS t", "MONTH(papers.year)"),
    ],
)
def test_a_number_read_as_a_date_is_refused_with_the_column_and_what_to_do(
    sql: str, written: str
) -> None:
    with pytest.raises(duckdb.BinderException, match="No function matches"):
        run_on_duckdb(sql)  # what the warehouse would have said after approval
    verdict = check_sql(sql, schema("duckdb"))
    [reason] = verdict.reasons
    assert reason.code == "number_as_date"
    assert written in reason.message
    assert "a number: if it holds a year" in reason.message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT year, COUNT(*) FROM papers WHERE year >= 2020 GROUP BY year",
        "SELECT YEAR(published), published - INTERVAL 3 DAY, year - 1 FROM papers",
        "SELECT DATE_DIFF('day', published, CURRENT_DATE) FROM papers",
    ],
)
def test_numbers_used_as_numbers_and_dates_as_dates_pass(sql: str) -> None:
    run_on_duckdb(sql)
    verdict = check_sql(sql, schema("duckdb"))
    assert verdict.ok, verdict.reasons


@pytest.mark.parametrize(
    ("dialect", "refused"),
    [("postgres", True), ("bigquery", True), ("mysql", False), ("sqlite", False)],
)
def test_only_engines_that_refuse_a_number_as_a_date_are_checked(
    dialect: str, refused: bool
) -> None:
    verdict = check_sql("SELECT EXTRACT(YEAR FROM year) FROM papers", schema(dialect))
    assert [r.code for r in verdict.reasons] == (["number_as_date"] if refused else [])


def test_postgres_to_char_of_a_number_passes() -> None:
    """TO_CHAR formats numbers as well as dates in PostgreSQL (sqlglot reads it as a date
    format); STRFTIME of a number is refused on DuckDB above."""
    verdict = check_sql("SELECT TO_CHAR(citations, '999D99') FROM papers", schema("postgres"))
    assert verdict.ok, verdict.reasons

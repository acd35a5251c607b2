"""The ranking measure: an ORDER BY expression the outermost SELECT does not return is added to
it by the gate, listed among its fixes, in every dialect the gate writes; what the rule must leave
alone stays as it was; and a second pass changes nothing."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from agent.gate import GateSchema, Verdict, check_sql
from agent.gate.measures import add_ranking_measures
from connectors.base import ColumnInfo, TableInfo
from tests.fixtures.looker import recorded
from tests.support import canary

DIALECTS = ("duckdb", "postgres", "bigquery", "mysql", "sqlite", "snowflake")


def schema(dialect: str) -> GateSchema:
    """The canary's tables (customers, orders, users) as the dialect's connector lists them."""
    if dialect != "snowflake":
        return canary.schema(dialect)
    tables = [
        TableInfo(f"CANARY.PUBLIC.{t.upper()}", tuple(ColumnInfo(c.upper(), ty) for c, ty in cols))
        for t, cols in canary.COLUMNS.items()
    ]
    return GateSchema.from_tables(tables, "snowflake")


def source(sql: str, dialect: str) -> str:
    """`sql` with BigQuery's tables under their dataset (the canary's are `canary.customers`)."""
    if dialect != "bigquery":
        return sql
    for table in canary.COLUMNS:
        sql = sql.replace(f"FROM {table}", f"FROM canary.{table}")
        sql = sql.replace(f"JOIN {table}", f"JOIN canary.{table}")
    return sql


def checked(sql: str, dialect: str, gate: GateSchema | None = None) -> Verdict:
    """The gate's verdict, which must be accepted and a fixpoint: checked again, the same text
    and no fix (the scheduled run's condition)."""
    gate = gate or schema(dialect)
    verdict = check_sql(source(sql, dialect), gate)
    assert verdict.ok, verdict.reasons
    again = check_sql(verdict.sql, gate)
    assert (again.ok, again.sql, again.fixes) == (True, verdict.sql, ()), "not a fixpoint"
    return verdict


def outputs(verdict: Verdict, dialect: str) -> list[str]:
    """The select list of the verdict's SQL, each written on its own."""
    tree = sqlglot.parse_one(verdict.sql, read=dialect)
    assert isinstance(tree, exp.Select)
    return [p.sql(dialect) for p in tree.expressions]


def measures(verdict: Verdict) -> list[str]:
    return [f for f in verdict.fixes if f.startswith("added the ")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_which_name_has_the_most_orders_returns_the_count(dialect: str) -> None:
    sql = "SELECT name FROM customers GROUP BY name ORDER BY COUNT(*) DESC LIMIT 1"
    verdict = checked(sql, dialect)
    assert outputs(verdict, dialect) == ["name", "COUNT(*) AS count"]
    assert measures(verdict) == ["added the ranking measure COUNT(*) AS count to the result"]
    assert verdict.sql.rstrip().endswith("LIMIT 1")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_sum_over_a_join_is_named_from_its_function_and_column(dialect: str) -> None:
    sql = (
        "SELECT c.name FROM customers AS c JOIN orders AS o ON o.customer_id = c.id"
        " GROUP BY c.name ORDER BY SUM(o.amount) DESC LIMIT 3"
    )
    verdict = checked(sql, dialect)
    added = outputs(verdict, dialect)[-1]
    assert added.lower() == "sum(o.amount) as sum_amount"
    assert measures(verdict) == [f"added the ranking measure {added} to the result"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_top_n_rows_by_a_column_show_it_and_a_list_ordered_for_reading_does_not(
    dialect: str,
) -> None:
    verdict = checked("SELECT name FROM customers ORDER BY id DESC LIMIT 5", dialect)
    assert [o.lower() for o in outputs(verdict, dialect)] == ["name", "id"]
    assert [m.lower() for m in measures(verdict)] == ["added the ranking measure id to the result"]
    # no LIMIT of its own, or one at the row cap or above (the gate writes its cap as one)
    for sql in (
        "SELECT name FROM customers ORDER BY id DESC",
        "SELECT name FROM customers ORDER BY id DESC LIMIT 1000",
        "SELECT name FROM customers ORDER BY id DESC LIMIT 5000",
    ):
        assert measures(checked(sql, dialect)) == [], sql


def test_without_a_row_cap_any_limit_makes_a_top_n() -> None:
    tree = sqlglot.parse_one("SELECT name FROM customers ORDER BY id LIMIT 5000")
    assert isinstance(tree, exp.Query)
    assert add_ranking_measures(tree, "duckdb", None) == [
        "added the ranking measure id to the result"
    ]
    assert check_sql(tree.sql(), schema("duckdb"), row_limit=None).fixes == ()


#: Statements whose ORDER BY the rule must leave as it is, and why, each run as a top 3.
UNCHANGED = {
    "by position": "SELECT name, COUNT(*) FROM customers GROUP BY name ORDER BY 2 DESC",
    "by output name": "SELECT name, COUNT(*) AS n FROM customers GROUP BY name ORDER BY n DESC",
    "the same expression": "SELECT name, COUNT(*) FROM customers GROUP BY name ORDER BY COUNT(*)",
    "the column, qualified": "SELECT name FROM customers AS c ORDER BY c.name",
    "the column, unqualified": "SELECT c.name FROM customers AS c ORDER BY name",
    "DISTINCT": "SELECT DISTINCT name FROM customers ORDER BY id",
    "a star": "SELECT * FROM customers ORDER BY id",
    "a table's star": "SELECT c.* FROM customers AS c ORDER BY c.id",
    "a set operation": "SELECT name FROM customers UNION SELECT username FROM users ORDER BY 1",
    "chance": "SELECT name FROM customers ORDER BY RAND()",
    "a window": "SELECT name FROM customers ORDER BY ROW_NUMBER() OVER (ORDER BY id)",
    "a subquery": "SELECT name FROM customers AS c ORDER BY (SELECT COUNT(*) FROM orders)",
    "a constant": "SELECT name FROM customers ORDER BY 'x'",
    "an ungrouped column": "SELECT name FROM customers GROUP BY name ORDER BY MAX(id), email",
    "an aggregate in a query that groups nothing": "SELECT name FROM customers ORDER BY MAX(id)",
    "an output alias inside an expression": "SELECT name, id AS k FROM customers ORDER BY k + 1",
    "where nulls sort": "SELECT name FROM customers ORDER BY CASE WHEN name IS NULL THEN 1"
    " ELSE 0 END, name",
    "a function of the row": "SELECT name FROM customers ORDER BY LENGTH(name)",
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("why", UNCHANGED)
def test_what_the_rule_leaves_alone(why: str, dialect: str) -> None:
    sql = UNCHANGED[why] + " LIMIT 3"
    if why == "chance" and dialect in ("postgres", "sqlite", "duckdb", "snowflake"):
        sql = sql.replace("RAND()", "RANDOM()")
    if why == "an ungrouped column":  # MAX(id) is added, the column is not
        verdict = checked(sql, dialect)
        assert [m.lower() for m in measures(verdict)] == [
            "added the ranking measure max(id) as max_id to the result"
        ]
        return
    verdict = check_sql(source(sql, dialect), schema(dialect))
    assert measures(verdict) == [], verdict.sql


def test_the_pure_function_leaves_a_set_operation_and_order_by_all_alone() -> None:
    union = sqlglot.parse_one("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1")
    assert isinstance(union, exp.Query) and add_ranking_measures(union, "duckdb", 1000) == []
    every = sqlglot.parse_one("SELECT a FROM t ORDER BY ALL", read="duckdb")
    assert isinstance(every, exp.Query) and add_ranking_measures(every, "duckdb", 1000) == []
    snowflake = sqlglot.parse_one("SELECT a FROM t ORDER BY ALL", read="snowflake")
    assert (
        isinstance(snowflake, exp.Query)
        and add_ranking_measures(snowflake, "snowflake", 1000) == []
    )


def test_group_by_all_gets_only_aggregates() -> None:
    """DuckDB's GROUP BY ALL groups by every other column: a column added would regroup."""
    tree = sqlglot.parse_one(
        "SELECT name FROM t GROUP BY ALL ORDER BY COUNT(*) DESC, email LIMIT 3", read="duckdb"
    )
    assert isinstance(tree, exp.Select)
    assert add_ranking_measures(tree, "duckdb", 1000) == [
        "added the ranking measure COUNT(*) AS count to the result"
    ]
    assert [p.sql("duckdb") for p in tree.expressions] == ["name", "COUNT(*) AS count"]


def test_the_name_is_new_to_the_statement() -> None:
    """No output name is taken twice, and no name the statement reads, so nothing it refers to
    changes meaning (an unqualified ORDER BY name would read a new alias first)."""
    verdict = checked(
        "SELECT name AS count FROM customers GROUP BY name ORDER BY COUNT(*) DESC", "duckdb"
    )
    assert outputs(verdict, "duckdb") == ["name AS count", "COUNT(*) AS count_2"]
    verdict = checked(
        "WITH sum_amount AS (SELECT customer_id, amount FROM orders)"
        " SELECT customer_id FROM sum_amount GROUP BY customer_id ORDER BY SUM(amount)",
        "postgres",
    )
    assert outputs(verdict, "postgres")[-1] == "SUM(amount) AS sum_amount_2"
    verdict = checked(
        "SELECT UPPER(name) AS name FROM customers AS c ORDER BY c.name LIMIT 3", "duckdb"
    )
    assert outputs(verdict, "duckdb") == ["UPPER(name) AS name", "c.name AS name_2"]


def test_grouped_columns_however_grouped_and_several_terms_in_order() -> None:
    verdict = checked(
        "SELECT UPPER(name) AS n FROM customers GROUP BY name"
        " ORDER BY COUNT(*) DESC, name, COUNT(*), SUM(id) LIMIT 10",
        "duckdb",
    )
    assert outputs(verdict, "duckdb") == [
        "UPPER(name) AS n",
        "COUNT(*) AS count",
        "name",
        "SUM(id) AS sum_id",
    ]
    assert len(measures(verdict)) == 3
    verdict = checked(
        "SELECT customer_id, COUNT(*) AS k FROM orders GROUP BY 1"
        " ORDER BY customer_id % 10 LIMIT 5",
        "sqlite",
    )
    assert outputs(verdict, "sqlite")[-1] == "customer_id % 10 AS customer_id_2"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_arithmetic_over_a_rows_columns_is_a_measure(dialect: str) -> None:
    sql = "SELECT o.id FROM orders AS o ORDER BY o.amount * o.customer_id DESC LIMIT 5"
    verdict = checked(sql, dialect)
    assert outputs(verdict, dialect)[-1] == "o.amount * o.customer_id AS amount_customer_id"


def test_count_distinct_and_case_names() -> None:
    verdict = checked(
        "SELECT o.customer_id FROM orders AS o GROUP BY o.customer_id"
        " ORDER BY COUNT(DISTINCT o.ordered_at) DESC LIMIT 5",
        "postgres",
    )
    added = "COUNT(DISTINCT o.ordered_at) AS count_distinct_ordered_at"
    assert outputs(verdict, "postgres")[-1] == added


def test_a_schema_unknown_statement_gets_it_too() -> None:
    verdict = checked(
        "SELECT region FROM sales GROUP BY region ORDER BY SUM(amount) DESC LIMIT 1",
        "duckdb",
        GateSchema.from_tables([], "duckdb"),
    )
    assert outputs(verdict, "duckdb") == ["region", "SUM(amount) AS sum_amount"]


def test_a_looker_measure_is_returned_inside_aggregate() -> None:
    verdict = checked(
        "SELECT `users.state` FROM `thelook`.`order_items` GROUP BY `users.state`"
        " ORDER BY AGGREGATE(`order_items.count`) DESC LIMIT 1",
        "looker",
        GateSchema.from_tables(recorded.tables(), "looker"),
    )
    assert measures(verdict) == [
        "added the ranking measure AGGREGATE(`order_items.count`) AS `order_items_count`"
        " to the result"
    ]

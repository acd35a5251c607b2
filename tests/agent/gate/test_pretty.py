"""The gate writes an accepted statement with sqlglot's pretty printer in the warehouse's dialect
(issue 17 item 3): a WITH query reads as its parts, one clause a line, and that very text is
what is shown, hashed and run. Only whitespace between tokens changes; strings keep theirs."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema, check_sql
from agent.gate.check import _stable
from agent.gate.render import same_tokens
from connectors import open_connector
from tests.fixtures.looker import recorded
from tests.support import canary
from tests.support.sql_text import one_line, tokens

#: A WITH query with a join and GROUP BY, written the way a model writes it: one line.
SPENT = (
    "with spent as (select customer_id, sum(amount) as total, count(*) as n from orders "
    "where ordered_at >= '2026-01-01' group by customer_id) "
    "select c.name, s.total, s.n from customers c join spent s on s.customer_id = c.id "
    "where c.email <> '' order by s.total desc"
)

SPENT_DUCKDB = """WITH spent AS (
  SELECT
    customer_id,
    SUM(amount) AS total,
    COUNT(*) AS n
  FROM canary.main.orders
  WHERE
    ordered_at >= '2026-01-01'
  GROUP BY
    customer_id
)
SELECT
  c.name,
  s.total,
  s.n
FROM canary.main.customers AS c
JOIN spent AS s
  ON s.customer_id = c.id
WHERE
  c.email <> ''
ORDER BY
  s.total DESC
LIMIT 1000"""

#: How each dialect names the canary's tables, and spells SUM, in the pretty text.
WRITTEN = {
    "duckdb": ("canary.main.", "SUM"),
    "postgres": ("public.", "SUM"),
    "mysql": ("querybot_gate_canary.", "SUM"),
    "sqlite": ("main.", "SUM"),
    "bigquery": ("`querybot-demo`.canary.", "sum"),
}


def test_a_with_query_is_written_one_clause_a_line() -> None:
    verdict = check_sql(SPENT, canary.schema("duckdb"))
    assert verdict.ok, verdict.reasons
    assert verdict.sql == SPENT_DUCKDB
    again = check_sql(verdict.sql, canary.schema("duckdb"))
    assert (again.ok, again.sql, again.fixes) == (True, verdict.sql, ()), "not a fixpoint"


@pytest.mark.parametrize("dialect", sorted(WRITTEN))
def test_each_dialect_writes_its_own_pretty_text(dialect: str) -> None:
    verdict = check_sql(SPENT, canary.schema(dialect))
    assert verdict.ok, verdict.reasons
    lines = verdict.sql.splitlines()
    prefix, total = WRITTEN[dialect]
    assert f"  FROM {prefix}orders" in lines and f"    {total}(amount) AS total," in lines
    assert [line for line in lines if not line.startswith(" ")] == [
        "WITH spent AS (",
        ")",
        "SELECT",
        f"FROM {prefix}customers AS c",
        "JOIN spent AS s",
        "WHERE",
        "ORDER BY",
        "LIMIT 1000",
    ], verdict.sql
    assert "  GROUP BY" in lines and "  ON s.customer_id = c.id" in lines
    # the same statement as before, word for word: only the whitespace between words moved
    flat = check_sql(one_line(verdict.sql), canary.schema(dialect))
    assert tokens(flat.sql, dialect) == tokens(verdict.sql, dialect)


def test_the_pretty_text_runs_and_returns_what_the_one_line_text_returns(
    duckdb_canary: canary.DuckDBCanary,
) -> None:
    verdict = check_sql(SPENT, canary.schema("duckdb"))
    connector = open_connector(duckdb_canary.spec, data_dir=duckdb_canary.directory)
    try:
        pretty = connector.run(verdict.sql, max_rows=100, timeout_s=10)
        flat = connector.run(one_line(verdict.sql), max_rows=100, timeout_s=10)
    finally:
        connector.close()
    assert pretty.rows == flat.rows
    assert [row[0] for row in pretty.rows] == ["Ada", "Grace"]
    assert pretty.columns == ["name", "total", "n"]


def test_line_breaks_inside_a_string_are_data_and_kept() -> None:
    sql = "SELECT id FROM customers WHERE name = 'two\n  lines' OR email LIKE '%\n%'"
    verdict = check_sql(sql, canary.schema("duckdb"))
    assert verdict.ok, verdict.reasons
    assert "name = 'two\n  lines' OR email LIKE '%\n%'" in verdict.sql
    assert verdict.sql.startswith("SELECT\n  id\nFROM canary.main.customers\nWHERE\n")


def test_looker_sql_is_pretty_with_backticks_and_no_semicolon() -> None:
    schema = GateSchema.from_tables(recorded.tables(), "looker")
    verdict = check_sql(
        "SELECT `order_items.status` AS status, AGGREGATE(`order_items.count`) AS items "
        "FROM `thelook`.`order_items` GROUP BY `order_items.status` ORDER BY items DESC;",
        schema,
    )
    assert verdict.ok, verdict.reasons
    assert verdict.sql == (
        "SELECT\n"
        "  `order_items.status` AS `status`,\n"
        "  AGGREGATE(`order_items.count`) AS `items`\n"
        "FROM `thelook`.`order_items`\n"
        "GROUP BY\n"
        "  `order_items.status`\n"
        "ORDER BY\n"
        "  `items` DESC\n"
        "LIMIT 1000"
    )


def test_a_pretty_text_that_does_not_read_back_as_itself_falls_back_to_one_line() -> None:
    schema = canary.schema("duckdb")
    table = ["canary.main.customers"]
    unstable = "SELECT\n  id\nFROM   canary.main.customers"  # re-rendered with one space
    flat = "SELECT id FROM canary.main.customers"
    assert _stable((unstable, flat), schema, None, table) == flat
    stable = "SELECT\n  id\nFROM canary.main.customers"
    assert _stable((stable, flat), schema, None, table) == stable


def test_only_whitespace_between_tokens_counts_as_the_same_statement() -> None:
    assert same_tokens("SELECT\n  a\nFROM t", "SELECT a FROM t", "duckdb")
    assert not same_tokens("SELECT 'a\n b' FROM t", "SELECT 'a b' FROM t", "duckdb")
    assert not same_tokens("SELECT a FROM t", "SELECT b FROM t", "duckdb")
    assert not same_tokens('SELECT "a" FROM t', "SELECT a FROM t", "duckdb")

"""Which messages are SQL a person pasted (judged by the gate as written) and which are questions
in words (for the model): agent/screen/pasted.py, on both sides, in every dialect the bot reads."""

from __future__ import annotations

import pytest

from agent.screen.pasted import pasted_sql, unwrapped

DIALECTS = ["duckdb", "postgres", "bigquery", "mysql", "sqlite", "looker"]

#: SQL of every kind, any case, fenced or not, one statement or several.
SQL = [
    "SELECT * FROM ordrs",
    "select 1+1",
    "DROP TABLE orders",
    "drop table if exists orders",
    "select 1; select 2",
    "drop table orders; drop table customers",
    "select * from orders; drop table orders",
    "WITH a AS (SELECT 1) SELECT * FROM a",
    "with x as (select * from t) select * from x",
    "insert into t values (1)",
    "insert into t select * from s",
    "update t set a=1",
    "delete from t",
    "DELETE FROM orders WHERE id = 1",
    "delete from orders;",
    "create table x (a int)",
    "create view v as select 1",
    "alter table t add column b int",
    "truncate table orders",
    "grant select on t to u",
    "explain select 1",
    "explain analyze select * from orders",
    "select now()",
    "select 1",
    "select true",
    "select null",
    "SELECT CURRENT_TIMESTAMP",
    "select current_date",
    "SELECT region FROM sales;",
    "select count(*) from orders where status = 'x'",
    "Select customers from orders",
    "select name from customers",
    "sElEcT * fRoM orders",
    "select a.x from t a",
    "select 'what' as q",
    "select * from orders -- why is this slow?",
    "select region, sum(amount) from sales group by region",
    "SELECT 1 UNION ALL SELECT 2",
    "(select 1)",
    "select * from t limit 10 offset 5",
    "SELECT 1 AS last_value",
    "select 1 from dual",
    "select count(*) from orders where date > '2024-01-01'",
    "SELECT * FROM sales WHERE amount > 100",
    "SELECT\n  region,\n  SUM(amount) AS total\nFROM sales\nGROUP BY region",
    "SELECT * FROM orders\nWHERE status = 'open'\n",
    "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE o.total > 100 ORDER BY 1 DESC NULLS LAST",
    "merge into t using s on t.a=s.a when matched then update set b=1",
    "set search_path = x",
    "call proc()",
    "`SELECT 1`",
    "```sql\nselect 1\n```",
    "```SELECT * FROM orders```",
    "```sql select * from orders```",
    "```\nselect 1\n```\n```\nselect 2\n```",
    "  \n```sql\nSELECT region FROM sales;\n```\n ",
]

#: Questions in words, many starting with a SQL keyword, and words that parse as SQL.
PROSE = [
    "select the top customers",
    "select the top 10 customers by revenue",
    "Select customers who ordered twice",
    "SELECT the best region",
    "Select the 3 biggest orders",
    "select top 5 regions by sales",
    "select revenue",
    "select customers",
    "select region, revenue",
    "select all orders from last week",
    "select sales from last month",
    "select orders from March",
    "select * please",
    "select count of orders",
    "select sum of revenue",
    "select revenue for 2024",
    "Select revenue in 2024 please",
    "select region where revenue > 100",
    "select all",
    "select top 10",
    "show me revenue by region",
    "show me the sales",
    "show me the top 5 products",
    "show me orders (by region)",
    "show me `orders`",
    "show revenue",
    "show orders",
    "show tables",
    "show",
    "describe the orders table",
    "describe orders",
    "Describe customers table",
    "describe the data",
    "explain why sales dropped",
    "explain this query",
    "Explain the result",
    "update me on sales last month",
    "update the chart",
    "update: what about last month?",
    "delete duplicates from my view?",
    "delete the filter and rerun",
    "delete",
    "drop in sales last month?",
    "drop it",
    "drop",
    "drop the last question",
    "Drop the cancelled orders and sum the rest",
    "insert coin",
    "Insert a row for me",
    "create a chart of sales",
    "create a dashboard",
    "set up a report",
    "set the region to North",
    "use the orders table",
    "use orders",
    "with the new data, what is revenue?",
    "with regards to sales?",
    "analyze churn",
    "summarize sales",
    "grant me access",
    "merge these two",
    "call the customer",
    "copy the last query",
    "truncate to 2 decimals",
    "replace north with south",
    "values by month",
    "pragma",
    "begin",
    "commit",
    "vacuum",
    "what is revenue by region?",
    "Which region had the most revenue last month?",
    "How many orders were placed in March 2024?",
    "what's the revenue?",
    "how many orders",
    "revenue by region",
    "revenue",
    "orders?",
    "top 10 customers",
    "list customers",
    "count orders",
    "total sales",
    "hello",
    "thanks!",
    "ok",
    "2024",
    "1+1",
    "now()",
    "sum(amount)",
    "revenue > 100",
    "count(*) of orders",
    "sum(amount) by region",
    "orders where status = 'shipped'",
    "sales by region, please",
    "and by month?",
    "same but for the South",
    "compare 2023 and 2024 revenue",
    "run this: SELECT * FROM orders",
    "why does ```select 1``` fail?",
    "SELECT * FROM orders WHERE id = ?",
    "",
    "```\n```",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("text", SQL)
def test_sql_is_recognised(text: str, dialect: str) -> None:
    assert pasted_sql(text, dialect) is not None


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("text", PROSE)
def test_questions_in_words_go_to_the_model(text: str, dialect: str) -> None:
    assert pasted_sql(text, dialect) is None


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("duckdb", "values (1)"),
        ("duckdb", "attach 'x.db'"),
        ("duckdb", "pragma table_info(t)"),
        ("postgres", "SELECT x::int FROM t"),
        ("mysql", "SELECT x::int FROM t"),  # a neighbour's SQL, which the gate transpiles
        ("bigquery", "SELECT * FROM `proj.ds.t`"),
        ("mysql", "SELECT * FROM `orders`"),
    ],
)
def test_sql_of_one_dialect_or_its_neighbour(dialect: str, text: str) -> None:
    assert pasted_sql(text, dialect) is not None


def test_the_sql_handed_on_is_the_code_without_its_fences() -> None:
    assert pasted_sql("```sql\nSELECT 1;\n```", "duckdb") == "SELECT 1;"
    assert pasted_sql("```SELECT 1```", "duckdb") == "SELECT 1"
    assert pasted_sql("`select 1`", "duckdb") == "select 1"
    # several blocks are several statements, for the gate to refuse rather than pick one
    assert pasted_sql("```sql\nSELECT 1\n```\n```\nSELECT 2\n```", "duckdb") == (
        "SELECT 1;\nSELECT 2"
    )
    assert pasted_sql("  SELECT 1  ", "duckdb") == "SELECT 1"


def test_words_around_a_code_block_make_a_question() -> None:
    assert unwrapped("why does this fail? ```select 1```") is None
    assert unwrapped("```select 1``` is slow, why?") is None
    assert unwrapped("```select 1```") == "select 1"


def test_prose_leaves_nothing_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """sqlglot logs a warning when it falls back to keeping a statement as text; the person's
    words must not end up in the log for that."""
    with caplog.at_level("DEBUG"):
        assert pasted_sql("show me revenue by region", "duckdb") is None
    assert "show me revenue" not in caplog.text

"""GateSchema: building it, resolving table names, allow lists, and the verdict's names."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema, check_sql
from connectors.base import ColumnInfo, TableInfo
from tests.support import canary
from tests.support.sql_text import one_line


def table(name: str, *columns: str) -> TableInfo:
    return TableInfo(name, tuple(ColumnInfo(c, "INTEGER") for c in columns))


def test_tables_and_columns_are_reported_fully_qualified() -> None:
    verdict = check_sql(
        "SELECT c.name, SUM(o.amount) FROM customers AS c JOIN main.orders AS o "
        "ON o.customer_id = c.id GROUP BY 1",
        canary.schema("duckdb"),
    )
    assert verdict.ok
    assert verdict.tables == ("canary.main.customers", "canary.main.orders")
    assert set(verdict.columns) == {
        "canary.main.customers.name",
        "canary.main.customers.id",
        "canary.main.orders.amount",
        "canary.main.orders.customer_id",
    }


def test_star_expands_to_every_column_read() -> None:
    verdict = check_sql("SELECT * FROM users", canary.schema("sqlite"))
    assert verdict.columns == ("main.users.id", "main.users.username", "main.users.password")


def test_a_short_name_in_two_schemas_is_ambiguous() -> None:
    schema = GateSchema.from_tables(
        [table("sales.orders", "id"), table("archive.orders", "id")], "postgres"
    )
    verdict = check_sql("SELECT id FROM orders", schema)
    assert [r.code for r in verdict.reasons] == ["ambiguous_table"]
    assert verdict.reasons[0].suggestion == "archive.orders, sales.orders"
    assert check_sql("SELECT id FROM archive.orders", schema).tables == ("archive.orders",)


def test_allow_list_keeps_tables_and_datasets() -> None:
    tables = [
        table("p.sales.orders", "id"),
        table("p.sales.refunds", "id"),
        table("p.hr.pay", "id"),
    ]
    by_dataset = GateSchema.from_tables(tables, "bigquery", allowed=["sales"])
    assert [e.name for e in by_dataset.entries] == ["p.sales.orders", "p.sales.refunds"]
    by_table = GateSchema.from_tables(tables, "bigquery", allowed=["p.hr.pay", "orders"])
    assert [e.name for e in by_table.entries] == ["p.sales.orders", "p.hr.pay"]
    verdict = check_sql("SELECT id FROM sales.refunds", by_table)
    assert [r.code for r in verdict.reasons] == ["unknown_table"]


def test_from_mapping_accepts_every_nesting() -> None:
    flat = GateSchema.from_mapping({"orders": {"id": "INT"}}, "sqlite")
    assert one_line(check_sql("SELECT id FROM orders", flat).sql) == (
        "SELECT id FROM orders LIMIT 1000"
    )
    nested = GateSchema.from_mapping({"demo": {"main": {"orders": {"id": "INT"}}}}, "duckdb")
    assert check_sql("SELECT id FROM orders", nested).tables == ("demo.main.orders",)
    with pytest.raises(ValueError, match="same 1-3 parts"):
        GateSchema.from_mapping({"a": {"id": "INT"}, "b": {"c": {"id": "INT"}}}, "duckdb")


def test_case_sensitive_names_are_quoted_where_the_engine_needs_it() -> None:
    schema = GateSchema.from_tables([table("public.sbCustomer", "sbCustId")], "postgres")
    verdict = check_sql("SELECT sbcustid FROM sbcustomer", schema)
    assert verdict.ok and verdict.fixes == ("re-quoted identifiers",)
    assert one_line(verdict.sql) == 'SELECT "sbCustId" FROM public."sbCustomer" LIMIT 1000'
    assert verdict.tables == ("public.sbCustomer",)


def test_engine_types_sqlglot_cannot_read_do_not_break_the_schema() -> None:
    info = TableInfo("main.t", (ColumnInfo("a", "USER-DEFINED"), ColumnInfo("b", "STRUCT(x INT")))
    assert check_sql("SELECT a, b FROM t", GateSchema.from_tables([info], "duckdb")).ok


def test_unknown_schema_still_enforces_safety_and_warns() -> None:
    schema = GateSchema.from_tables([], "duckdb")
    assert schema.empty
    verdict = check_sql("SELECT * FROM anything", schema)
    assert verdict.ok and verdict.tables == ("anything",) and verdict.warnings
    assert not check_sql("SELECT * FROM read_csv('x.csv')", schema).ok


def test_a_column_of_another_table_names_that_table_and_the_join() -> None:
    schema = GateSchema.from_tables(
        [
            table("shop.order_items", "order_id", "product_id", "quantity"),
            table("shop.products", "product_id", "product_name", "price"),
        ],
        "duckdb",
    )
    verdict = check_sql("SELECT oi.product_name, oi.quantity FROM order_items AS oi", schema)
    [reason] = verdict.reasons
    assert reason.code == "unknown_column"
    assert "column of another table: shop.products.product_name" in reason.message
    assert "join shop.products on product_id" in reason.message
    assert "shop.order_items has: order_id, product_id, quantity" in reason.message
    # a name no table has still gets the closest one of the statement's own tables
    verdict = check_sql("SELECT quantiti FROM order_items", schema)
    assert verdict.reasons[0].suggestion == "quantity"
    assert "another table" not in verdict.reasons[0].message


def test_a_column_read_through_the_wrong_alias_is_read_from_the_joined_table_that_has_it() -> None:
    schema = GateSchema.from_tables(
        [
            table("shop.sales", "customer_id", "amount"),
            table("shop.customers", "customer_id", "name"),
        ],
        "duckdb",
    )
    verdict = check_sql(
        "SELECT s.name, SUM(s.amount) FROM sales AS s "
        "JOIN customers AS c ON c.customer_id = s.customer_id GROUP BY 1",
        schema,
    )
    assert verdict.ok, verdict.reasons
    assert one_line(verdict.sql).startswith("SELECT c.name, SUM(s.amount) FROM shop.sales AS s")
    assert "read s.name from the joined table that has it" in verdict.fixes
    assert "shop.customers.name" in verdict.columns
    # a column moved twice is named once among the fixes
    verdict = check_sql(
        "SELECT s.name FROM sales AS s JOIN customers AS c USING (customer_id) GROUP BY s.name",
        schema,
    )
    assert verdict.ok, verdict.reasons
    assert "read s.name from the joined table that has it" in verdict.fixes
    # without an alias the table's own name is the qualifier
    verdict = check_sql("SELECT sales.name FROM sales JOIN customers USING (customer_id)", schema)
    assert verdict.ok and one_line(verdict.sql).startswith("SELECT customers.name FROM")


@pytest.mark.parametrize(
    "sql",
    [
        # the owner is not joined: nothing to point at
        "SELECT s.name FROM sales AS s",
        # two joined tables have it: which one is meant is not the code's guess
        "SELECT s.name FROM sales AS s JOIN customers AS c USING (customer_id) "
        "JOIN notes AS n USING (customer_id)",
        # the owner is in the outer query, not in the FROM the column is read in
        "SELECT c.name FROM customers AS c WHERE EXISTS "
        "(SELECT 1 FROM sales AS s WHERE s.customer_id = c.customer_id AND s.name = 'x')",
    ],
)
def test_a_column_read_through_the_wrong_alias_without_one_joined_owner_names_its_table(
    sql: str,
) -> None:
    schema = GateSchema.from_tables(
        [
            table("shop.sales", "customer_id", "amount"),
            table("shop.customers", "customer_id", "name"),
            table("shop.notes", "customer_id", "name"),
        ],
        "duckdb",
    )
    verdict = check_sql(sql, schema)
    [reason] = verdict.reasons
    assert reason.code in {"unknown_column", "ambiguous_column"}
    assert "shop.customers" in reason.message
    assert not verdict.fixes


def test_an_unknown_column_no_table_has_lists_the_columns_of_the_table_it_was_read_from() -> None:
    schema = GateSchema.from_tables(
        [
            table("shop.sales", "customer_id", "amount"),
            table("shop.customers", "customer_id", "customer_name"),
        ],
        "duckdb",
    )
    verdict = check_sql(
        "SELECT c.name FROM sales AS s JOIN customers AS c USING (customer_id)", schema
    )
    [reason] = verdict.reasons
    assert reason.code == "unknown_column"
    assert "shop.customers has: customer_id, customer_name" in reason.message
    assert "shop.sales has" not in reason.message, "only the table it was read through"
    # unqualified: every table the statement reads
    [reason] = check_sql("SELECT visitors FROM sales", schema).reasons
    assert reason.message.endswith("; shop.sales has: customer_id, amount")


JOINED = [
    table("shop.sales", "customer_id", "amount"),
    table("shop.customers", "customer_id", "name"),
    table("shop.notes", "customer_id", "name"),
]


@pytest.mark.parametrize(
    ("sql", "start"),
    [
        (
            "SELECT customer_id, SUM(amount) FROM sales AS s "
            "JOIN customers AS c ON s.customer_id = c.customer_id GROUP BY customer_id",
            "SELECT s.customer_id, SUM(amount) FROM shop.sales AS s",
        ),
        # the preserved side of a LEFT JOIN, whichever side of `=` it is written on
        (
            "SELECT customer_id FROM customers AS c LEFT JOIN sales AS s "
            "ON s.customer_id = c.customer_id",
            "SELECT c.customer_id FROM shop.customers AS c",
        ),
        # tied through a third table, and by a WHERE of a comma join
        (
            "SELECT customer_id FROM sales AS s JOIN customers AS c "
            "ON s.customer_id = c.customer_id JOIN notes AS n ON n.customer_id = c.customer_id",
            "SELECT s.customer_id FROM shop.sales AS s",
        ),
        (
            "SELECT customer_id FROM sales, customers "
            "WHERE sales.customer_id = customers.customer_id AND customer_id > 3",
            "SELECT sales.customer_id FROM shop.sales, shop.customers WHERE",
        ),
    ],
)
def test_a_column_the_join_makes_equal_in_its_tables_is_qualified_with_the_first(
    sql: str, start: str
) -> None:
    verdict = check_sql(sql, GateSchema.from_tables(JOINED, "duckdb"))
    assert verdict.ok, verdict.reasons
    assert one_line(verdict.sql).startswith(start)
    assert "qualified customer_id, equal in the tables it joins" in verdict.fixes


@pytest.mark.parametrize(
    "sql",
    [
        # equal only where the OR's first branch holds
        "SELECT customer_id FROM sales AS s JOIN customers AS c "
        "ON s.customer_id = c.customer_id OR s.amount > 0",
        # a RIGHT or FULL join keeps rows where one side is NULL
        "SELECT customer_id FROM sales AS s RIGHT JOIN customers AS c "
        "ON s.customer_id = c.customer_id",
        "SELECT customer_id FROM sales AS s FULL JOIN customers AS c "
        "ON s.customer_id = c.customer_id",
        # joined on another column: the two differ
        "SELECT name FROM customers AS c JOIN notes AS n ON n.customer_id = c.customer_id",
        # the third table is not tied by the join column
        "SELECT customer_id FROM sales AS s JOIN customers AS c "
        "ON s.customer_id = c.customer_id CROSS JOIN notes AS n",
    ],
)
def test_a_column_the_join_does_not_make_equal_stays_ambiguous(sql: str) -> None:
    verdict = check_sql(sql, GateSchema.from_tables(JOINED, "duckdb"))
    [reason] = verdict.reasons
    assert reason.code == "ambiguous_column", reason
    assert not verdict.fixes

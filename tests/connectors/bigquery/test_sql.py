"""What a statement reads: one statement only, allow-listed datasets, unfiltered partitions."""

from __future__ import annotations

import pytest

from connectors.base import PermissionDenied, QueryFailed
from connectors.bigquery.sql import (
    Layout,
    Names,
    check_datasets,
    parse,
    reads_every_column,
    unfiltered_partitions,
)

NAMES = Names("proj", ("proj", "sales"))
ALLOWED = frozenset({("proj", "sales"), ("proj", "archive"), ("shared-data", "ref")})
LAYOUTS = {
    ("proj", "sales", "orders"): Layout("placed_on", ("region",)),
    ("proj", "sales", "events"): Layout("_PARTITIONTIME"),
    ("proj", "sales", "customers"): Layout(None, ("country",)),
}


def unfiltered(sql: str) -> list[str]:
    return [name for name, _ in unfiltered_partitions(parse(sql), LAYOUTS, NAMES)]


# -- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sql", ["SELECT 1; SELECT 2", "SELECT 1; DROP TABLE sales.orders"])
def test_more_than_one_statement_fails_closed(sql: str) -> None:
    with pytest.raises(QueryFailed, match="one statement"):
        parse(sql)


def test_unparsable_sql_fails_closed() -> None:
    with pytest.raises(QueryFailed, match="does not parse") as caught:
        parse("SELECT FROM WHERE (")
    assert caught.value.retryable_by_repair


def test_trailing_semicolon_is_one_statement() -> None:
    assert parse("SELECT 1;").sql("bigquery") == "SELECT 1"


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT * INTO sales.copy FROM sales.orders", "contains INTO"),
        ("SELECT * FROM orders FOR UPDATE", "contains LOCK"),
        ("WITH d AS (DELETE FROM orders WHERE TRUE) SELECT 1", "contains DELETE"),
        ("SELECT * FROM EXTERNAL_QUERY('us.conn', 'SELECT 1')", "uses EXTERNAL_QUERY"),
        (
            "SELECT id FROM orders WHERE id IN (SELECT x FROM EXTERNAL_QUERY('c', 'q'))",
            "uses EXTERNAL_QUERY",
        ),
        ("SELECT * FROM ML.PREDICT(MODEL sales.m, TABLE sales.orders)", "uses ML.PREDICT"),
        ("SELECT AI.GENERATE('tell me the secrets')", "uses AI.GENERATE"),
        ("SELECT KEYS.KEYSET_CHAIN('gcp-kms://k', b'x')", "uses KEYS.KEYSET_CHAIN"),
        ("SELECT sales.remote_fn(region) FROM orders", "uses sales.remote_fn"),
        ("SELECT `proj.sales.remote_fn`(region) FROM orders", "uses `proj.sales.remote_fn`"),
        ("SELECT * FROM sales.tvf(1)", "uses sales.tvf(1)"),
        ("SELECT * FROM read_text('/etc/passwd')", "uses read_text"),
        ("(SELECT 1) UNION ALL (SELECT x FROM EXTERNAL_QUERY('c', 'q'))", "uses EXTERNAL_QUERY"),
    ],
)
def test_queries_that_write_or_call_out_are_refused(sql: str, named: str) -> None:
    """BigQuery has no read-only session: these never become a job."""
    with pytest.raises(PermissionDenied) as caught:
        parse(sql)
    assert named in caught.value.message
    assert "UNNEST" in caught.value.hint


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT SAFE.DIVIDE(1, 2), NET.HOST('https://x.example/a')",
        "SELECT HLL_COUNT.MERGE(sketch) FROM orders",
        "SELECT id, tag FROM orders, UNNEST(tags) AS tag",
        "SELECT * FROM UNNEST([1, 2])",
        "SELECT o.id FROM orders AS o JOIN customers AS c ON o.id = c.id AND c.id > 1",
        "SELECT STRUCT(1 AS a).a, JSON_QUERY(j, '$.a') FROM orders",
    ],
)
def test_plain_reads_and_builtin_functions_pass(sql: str) -> None:
    parse(sql)


# -- names and the allow-list -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM `proj.sales.orders`", ("proj", "sales", "orders")),
        ("SELECT * FROM `proj`.sales.orders", ("proj", "sales", "orders")),
        ("SELECT * FROM archive.orders", ("proj", "archive", "orders")),
        ("SELECT * FROM orders", ("proj", "sales", "orders")),
        ("SELECT * FROM `shared-data.ref.rates`", ("shared-data", "ref", "rates")),
    ],
)
def test_names_resolve_like_a_job_with_a_default_dataset(
    sql: str, expected: tuple[str, str, str]
) -> None:
    from sqlglot import exp

    table = parse(sql).find(exp.Table)
    assert table is not None
    assert NAMES.resolve(table) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM orders",
        "SELECT * FROM sales.orders JOIN `proj.archive.orders` USING (id)",
        "SELECT * FROM `shared-data.ref.rates`",
        "WITH o AS (SELECT * FROM sales.orders) SELECT * FROM o",
        "SELECT * FROM sales.INFORMATION_SCHEMA.TABLES",
    ],
)
def test_allowed_datasets_pass(sql: str) -> None:
    check_datasets(parse(sql), ALLOWED, NAMES)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT * FROM hr.salaries", "proj.hr.salaries"),
        ("SELECT * FROM `other-proj.sales.orders`", "other-proj.sales.orders"),
        ("SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS", "proj.region-us."),
        ("SELECT * FROM orders WHERE id IN (SELECT id FROM hr.people)", "proj.hr.people"),
        ("SELECT * FROM `shared-data`.sales.orders", "shared-data.sales.orders"),
    ],
)
def test_other_datasets_are_refused(sql: str, named: str) -> None:
    with pytest.raises(PermissionDenied) as caught:
        check_datasets(parse(sql), ALLOWED, NAMES)
    assert named in caught.value.message
    assert "proj.sales" in caught.value.hint


def test_dataset_table_must_be_allowed_in_both_candidate_projects() -> None:
    """Default dataset in another project: `ref.x` could mean proj.ref or shared-data.ref."""
    names = Names("proj", ("shared-data", "ref"))
    with pytest.raises(PermissionDenied, match=r"proj\.ref\.rates"):
        check_datasets(parse("SELECT * FROM ref.rates"), ALLOWED, names)
    check_datasets(parse("SELECT * FROM sales.orders"), frozenset({("proj", "sales")}), NAMES)


# -- partition filters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM sales.orders",
        "SELECT count(*) FROM orders WHERE region = 'EU'",
        "SELECT * FROM orders o JOIN orders p ON o.id = p.id WHERE p.placed_on > '2026-01-01'",
        "SELECT * FROM orders WHERE id IN (SELECT id FROM sales.orders)",
    ],
)
def test_partitioned_table_without_a_partition_filter(sql: str) -> None:
    assert unfiltered(sql) == ["proj.sales.orders"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM sales.orders WHERE placed_on >= '2026-01-01'",
        "SELECT * FROM `proj.sales.orders` AS o WHERE o.PLACED_ON = CURRENT_DATE()",
        "SELECT * FROM customers c JOIN orders o ON o.id = c.id AND o.placed_on > '2026-01-01'",
        "WITH o AS (SELECT * FROM orders) SELECT * FROM o WHERE placed_on > '2026-01-01'",
        "SELECT * FROM customers",
        "SELECT * FROM archive.orders",
    ],
)
def test_filtered_or_unpartitioned_tables_are_fine(sql: str) -> None:
    assert unfiltered(sql) == []


@pytest.mark.parametrize("column", ["_PARTITIONTIME", "_PARTITIONDATE"])
def test_ingestion_time_partitions_accept_either_pseudo_column(column: str) -> None:
    assert unfiltered("SELECT * FROM events") == ["proj.sales.events"]
    assert unfiltered(f"SELECT * FROM events WHERE {column} >= '2026-01-01'") == []


def test_star_reads_every_column() -> None:
    assert reads_every_column(parse("SELECT * FROM orders"))
    assert reads_every_column(parse("SELECT o.* FROM orders o"))
    assert not reads_every_column(parse("SELECT id, COUNT(*) FROM orders GROUP BY id"))

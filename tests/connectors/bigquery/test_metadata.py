"""The metadata query's rows (one per field path) as tables, columns and layouts."""

from __future__ import annotations

from typing import Any

from connectors.bigquery.metadata import MAX_NESTED_FIELDS, assemble, metadata_sql
from connectors.bigquery.sql import Layout


def row(table: str, column: str | None, position: int | None = 1, **extra: Any) -> dict[str, Any]:
    base = {
        "table_name": table,
        "table_description": None,
        "column_name": column,
        "ordinal_position": position,
        "column_type": "STRING",
        "is_partitioning_column": "NO",
        "clustering_ordinal_position": None,
        "field_path": column,
        "field_type": "STRING",
        "description": None,
    }
    return base | extra


def test_one_query_joins_the_four_views_of_one_dataset() -> None:
    sql = metadata_sql("my-proj", "sales")
    for view in ("TABLES", "TABLE_OPTIONS", "COLUMNS", "COLUMN_FIELD_PATHS"):
        assert f"`my-proj.sales`.INFORMATION_SCHEMA.{view}" in sql
    assert "COLUMN_FIELD_PATHS" not in metadata_sql("my-proj", "sales", field_paths=False)


def test_description_literals_are_unquoted() -> None:
    rows = [
        row("a", "x", table_description='"Orders \\"paid\\" only\\nper day"'),
        row("b", "x", table_description="'single quoted'"),
        row("c", "x", table_description="bare"),
    ]
    tables = {t.short_name: t for t in assemble("p", "d", rows).tables}
    assert tables["a"].description == 'Orders "paid" only\nper day'
    assert tables["b"].description == "single quoted"
    assert tables["c"].description == "bare"


def test_clustering_columns_in_their_order() -> None:
    rows = [
        row("t", "a", 1, clustering_ordinal_position=2),
        row("t", "b", 2, clustering_ordinal_position=1),
        row("t", "c", 3, is_partitioning_column="YES", column_type="DATE"),
    ]
    metadata = assemble("p", "d", rows)
    assert metadata.layouts[("p", "d", "t")] == Layout("c", ("b", "a"))
    (table,) = metadata.tables
    assert table.description == "Partitioned by c: filter on it to read less. Clustered by b, a."


def test_a_table_without_visible_columns_is_listed() -> None:
    (table,) = assemble("p", "d", [row("empty_view", None, None)]).tables
    assert (table.name, table.columns) == ("p.d.empty_view", ())


def test_long_nested_field_lists_are_cut() -> None:
    rows = [row("t", "s", column_type="STRUCT<...>", field_path="s")]
    rows += [row("t", "s", column_type="STRUCT<...>", field_path=f"s.f{i:03d}") for i in range(50)]
    (column,) = assemble("p", "d", rows).tables[0].columns
    assert column.description.startswith("Fields: s.f000 STRING; s.f001 STRING;")
    assert column.description.endswith(f"s.f{MAX_NESTED_FIELDS - 1:03d} STRING; and 10 more.")

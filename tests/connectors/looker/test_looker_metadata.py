"""Looker's metadata as tables and columns, from rows shaped as Looker documents them."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema
from connectors.base import ColumnInfo
from connectors.looker.metadata import (
    DIMENSION,
    MEASURE,
    assemble,
    field_column,
    is_measure,
    truthy,
)
from tests.fixtures.looker import recorded


def test_models_are_schemas_explores_tables_and_fields_view_dot_field_columns() -> None:
    tables = {t.name: t for t in recorded.tables()}
    assert sorted(tables) == ["thelook.order_items", "thelook.users"]  # ledger: all hidden
    names = [c.name for c in tables["thelook.order_items"].columns]
    assert names == [
        "order_items.count",
        "order_items.created_date",
        "order_items.created_month",
        "order_items.id",
        "order_items.sale_price",
        "order_items.status",
        "order_items.total_sale_price",
        "users.count",
        "users.country",
        "users.state",
    ]


def test_hidden_fields_are_left_out() -> None:
    every = {c.name for t in recorded.tables() for c in t.columns}
    assert not {"order_items.inventory_item_id", "users.ssn", "users.email"} & every


def test_label_description_and_category_reach_the_description() -> None:
    orders = next(t for t in recorded.tables() if t.name == "thelook.order_items")
    by_name = {c.name: c for c in orders.columns}
    total = by_name["order_items.total_sale_price"]
    assert total.description.startswith(MEASURE)
    assert "Order Items Total Sale Price: Sum of the sale price" in total.description
    assert "type sum" in total.description and "also known as total_revenue" in total.description
    status = by_name["order_items.status"]
    assert status.description.startswith(DIMENSION) and "Cancelled, Returned" in status.description
    assert "dimension group created" in by_name["order_items.created_month"].description
    assert orders.description == "Orders: One row per item sold, with its order and buyer"


def test_types_come_from_the_jdbc_type_code() -> None:
    orders = next(t for t in recorded.tables() if t.name == "thelook.order_items")
    types = {c.name: c.type for c in orders.columns}
    assert types["order_items.count"] == "BIGINT"
    assert types["order_items.created_date"] == "DATE"
    assert types["order_items.sale_price"] == "DOUBLE"


def test_measures_are_known_to_the_gate_schema() -> None:
    schema = GateSchema.from_tables(recorded.tables(), "looker")
    assert schema.measures == {
        "order_items.count",
        "order_items.total_sale_price",
        "users.count",
    }
    dims = [c for t in recorded.tables() for c in t.columns if not is_measure(c)]
    assert dims and all(c.description.startswith(DIMENSION) for c in dims)


def test_a_model_list_keeps_only_those_models() -> None:
    tables, columns = recorded.rows()
    assert assemble(tables, columns, ["finance"]) == []
    assert {t.name for t in assemble(tables, columns, ["thelook"])} == {
        "thelook.order_items",
        "thelook.users",
    }


@pytest.mark.parametrize("value", [True, "TRUE", "true", "YES", 1])
def test_hidden_flags_in_any_form_hide(value: object) -> None:
    row = {"COLUMN_NAME": "v.f", "DATA_TYPE": 12, "HIDDEN": value}
    assert truthy(value) and field_column(row) is None


def test_standard_columns_stand_in_for_looker_ones() -> None:
    row = {
        "COLUMN_NAME": "orders.total",
        "TYPE_NAME": "DECIMAL",
        "REMARKS": "Sum of amounts",
        "IS_GENERATEDCOLUMN": "YES",
        "HIDDEN": None,
    }
    column = field_column(row)
    assert column == ColumnInfo("orders.total", "DECIMAL", f"{MEASURE}. Sum of amounts")
    assert is_measure(column)

"""The key map (agent/catalog/keys.py): which columns are keys of a table, read from names,
profiles and the team's documentation, and which key pairs relate two tables."""

from __future__ import annotations

from agent.catalog.documentation import Documentation, JoinKey, TableDoc
from agent.catalog.keys import key_map
from agent.catalog.snapshot import CatalogSnapshot, table_key
from connectors.base import ColumnInfo, ColumnProfile, TableInfo, TableProfile


def table(name: str, *columns: str) -> TableInfo:
    return TableInfo(f"wh.main.{name}", tuple(ColumnInfo(c, "INTEGER") for c in columns))


SHOP = (
    table("customers", "id", "name", "region_id"),
    table("regions", "region_id", "region_name"),
    table("orders", "order_id", "customer_id", "region_id"),
    table("order_items", "order_item_id", "order_id", "product_id"),
    table("sales", "order_item_id", "order_id", "customer_id", "amount"),
    table("events", "event_name", "customer_id"),
    table("categories", "category_id", "name"),
    table("Products", "ProductId", "category_id"),
)


def snapshot(**kwargs: object) -> CatalogSnapshot:
    return CatalogSnapshot(SHOP, "duckdb", **kwargs)  # type: ignore[arg-type]


def test_keys_from_names_a_bare_id_or_the_singular_table_name_and_id() -> None:
    keys = key_map(snapshot())
    assert keys.keys("wh.main.customers") == ("id",)
    assert keys.keys("wh.main.orders") == ("order_id",)
    assert keys.keys("wh.main.order_items") == ("order_item_id",)
    assert keys.keys("wh.main.categories") == ("category_id",)  # categories -> category
    assert keys.keys("wh.main.Products") == ("ProductId",)  # names split however written
    # no column named after the table: nothing known
    assert keys.keys("wh.main.sales") == ()
    assert keys.keys("wh.main.events") == ()
    assert keys.keys("wh.main.nowhere") == ()
    assert keys.is_key("wh.main.orders", "ORDER_ID") and not keys.is_key("wh.main.orders", "id")


def test_keys_from_profiles_every_row_a_different_value() -> None:
    profiles = {
        "wh.main.sales": TableProfile(
            4,
            {
                "order_item_id": ColumnProfile(4),
                "order_id": ColumnProfile(3),
                "customer_id": ColumnProfile(None),
            },
        ),
        # one row: every column holds one value per row, which says nothing
        "wh.main.events": TableProfile(1, {"event_name": ColumnProfile(1)}),
    }
    keys = key_map(snapshot(profiles=profiles))
    assert keys.keys("wh.main.sales") == ("order_item_id",)
    assert keys.keys("wh.main.events") == ()


def test_keys_and_links_from_the_documentation() -> None:
    relations = ('"wh"."main"."events"', '"wh"."main"."customers"', '"wh"."main"."sales"')
    documented = Documentation(
        tables={table_key(r): TableDoc(r) for r in relations},
        joins=(
            JoinKey('"wh"."main"."events"', "customer_id", "wh.main.customers", "id", "entity c"),
            JoinKey("main.sales", "AMOUNT", "main.events", "EVENT_NAME", "relationships test"),
        ),
    )
    keys = key_map(snapshot(documentation=documented))
    assert keys.keys("wh.main.events") == ("event_name",)  # the `to` side, as spelled
    assert keys.links("wh.main.sales", "wh.main.events") == (
        JoinKey("wh.main.sales", "amount", "wh.main.events", "event_name", "relationships test"),
    )
    [link] = keys.links("wh.main.customers", "wh.main.events")
    assert str(link) == "events.customer_id = customers.id" and link.source == "entity c"


def test_links_a_column_named_as_the_other_tables_key() -> None:
    keys = key_map(snapshot())
    # sales.order_id holds orders' key; sales.customer_id is named after customers, keyed `id`
    assert [str(link) for link in keys.links("wh.main.sales", "wh.main.orders")] == [
        "sales.order_id = orders.order_id"
    ]
    assert [str(link) for link in keys.links("wh.main.customers", "wh.main.sales")] == [
        "sales.customer_id = customers.id"
    ]
    # both ways at once, each pair once
    assert [str(link) for link in keys.links("wh.main.orders", "wh.main.order_items")] == [
        "order_items.order_id = orders.order_id"
    ]
    assert [str(link) for link in keys.links("wh.main.Products", "wh.main.categories")] == [
        "Products.category_id = categories.category_id"
    ]
    # a shared column that is a key of neither relates nothing; nor does a bare id, or a table
    # with itself
    assert keys.links("wh.main.orders", "wh.main.events") == ()
    assert keys.links("wh.main.customers", "wh.main.categories") == ()
    assert keys.links("wh.main.orders", "wh.main.orders") == ()
    assert keys.referenced("wh.main.orders", "region_id") == {("wh.main.regions", "region_id")}
    assert keys.referenced("wh.main.events", "event_name") == frozenset()


def test_one_map_per_snapshot_and_a_new_one_with_new_profiles() -> None:
    first = snapshot()
    assert key_map(first) is key_map(first)
    profiled = first.with_profiles({"wh.main.sales": TableProfile(2, {"amount": ColumnProfile(2)})})
    assert key_map(profiled) is not key_map(first)
    assert key_map(profiled).keys("wh.main.sales") == ("amount",)
    assert key_map(first).keys("wh.main.sales") == ()

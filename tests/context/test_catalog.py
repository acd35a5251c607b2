"""Value profiles from the live tables, and the catalog's background refresh."""

from __future__ import annotations

from pathlib import Path

from agent.catalog import Catalog, CatalogSnapshot, ProfileLimits, profile_table
from connectors.duckdb import DuckDBConnector


def test_profile_lists_low_cardinality_values_and_samples_the_rest(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    try:
        customers = connector.describe("customers")
        profile = profile_table(
            connector, customers, ProfileLimits(complete_values=3, top_values=2)
        )
    finally:
        connector.close()
    assert profile.row_count == 4
    region = profile.columns["region"]
    assert region.complete and region.values == ("North", "California", "South")
    names = profile.columns["customer_name"]
    assert not names.complete and names.distinct == 4 and len(names.values) == 2
    assert profile.columns["customer_id"].values == ()  # numbers: counts only


def test_first_snapshot_comes_at_once_profiles_follow_in_the_background(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    published: list[CatalogSnapshot] = []
    try:
        catalog = Catalog(connector, on_refresh=published.append)
        first = catalog.snapshot()
        assert {t.short_name for t in first.tables} == {"customers", "orders"}
        assert catalog.wait_idle()
        current = catalog.snapshot()
        assert current is not first and current.profile("shop.main.customers") is not None
        assert published == [first, current]
    finally:
        connector.close()


def test_a_stale_snapshot_is_served_while_a_new_one_is_read(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    try:
        catalog = Catalog(connector, ttl_s=0.0, profile=False)
        first = catalog.snapshot()
        assert catalog.snapshot() is first  # stale: served as is, refresh started
        assert catalog.wait_idle()
        assert catalog.snapshot() is not first
    finally:
        connector.close()

"""The catalog's snapshots: built at start in the background, published once per change."""

from __future__ import annotations

import threading
from pathlib import Path

from agent.catalog.profiling import ProfileLimits, profile_table
from agent.catalog.snapshot import Catalog, CatalogSnapshot
from connectors.base import TableProfile
from connectors.duckdb.connector import DuckDBConnector
from tests.agent import context_fixtures
from tests.support.sent import record_runs

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent


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
        # the profiles changed, the tables did not: the gate schema is not built again
        assert current.gate_schema is first.gate_schema
    finally:
        connector.close()


def test_start_builds_everything_in_the_background_before_the_first_question(
    shop: Path,
) -> None:
    connector = DuckDBConnector(shop)
    built: list[tuple[CatalogSnapshot, str]] = []
    try:
        catalog = Catalog(
            connector, on_refresh=lambda s: built.append((s, threading.current_thread().name))
        )
        catalog.start()
        assert catalog.wait_idle()
        assert [name for _, name in built] == ["catalog-refresh", "catalog-refresh"]
        current = catalog.snapshot()  # the first question's: built already, nothing to wait for
        assert current is built[-1][0] and current.profile("shop.main.orders") is not None
        assert len(built) == 2
    finally:
        connector.close()


def test_a_question_during_start_waits_for_the_table_list_instead_of_reading_it(
    shop: Path,
) -> None:
    connector = DuckDBConnector(shop)
    reading, release = threading.Event(), threading.Event()
    reads: list[str] = []
    real = connector.list_tables

    def list_tables() -> list:
        reads.append(threading.current_thread().name)
        reading.set()
        release.wait(timeout=30)
        return real()

    connector.list_tables = list_tables  # type: ignore[method-assign]
    try:
        catalog = Catalog(connector)
        catalog.start()
        assert reading.wait(timeout=30)
        answers: list[CatalogSnapshot] = []
        question = threading.Thread(target=lambda: answers.append(catalog.snapshot()))
        question.start()
        release.set()
        question.join(timeout=30)
        assert catalog.wait_idle()
        assert len(answers) == 1 and reads == ["catalog-refresh"]
    finally:
        connector.close()


def test_a_refresh_that_finds_nothing_changed_publishes_nothing(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    published: list[CatalogSnapshot] = []
    try:
        catalog = Catalog(connector, ttl_s=0.0, on_refresh=published.append)
        current = catalog.refresh()
        assert len(published) == 2  # the table list, then the profiles
        assert catalog.snapshot() is current  # stale: served as is, a refresh started
        assert catalog.wait_idle()
        assert catalog.refresh() is current and len(published) == 2
    finally:
        catalog.wait_idle()
        connector.close()


def test_new_profiles_of_the_same_tables_share_the_gate_schema(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    try:
        first = CatalogSnapshot(tuple(connector.list_tables()), "duckdb")
    finally:
        connector.close()
    schema = first.gate_schema
    second = first.with_profiles({"shop.main.orders": TableProfile(3)})
    assert second.gate_schema is schema and second.by_key == first.by_key
    assert second.profile("shop.main.orders") == TableProfile(3) and first.profiles == {}


def test_scans_read_at_most_max_scan_rows_and_list_no_values_of_a_cut_table(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    sent = record_runs(connector)
    try:
        customers = connector.describe("customers")
        profile = profile_table(connector, customers, ProfileLimits(max_scan_rows=3))
    finally:
        connector.close()
    assert sent and all("LIMIT 3)" in sql for sql in sent)
    assert profile.row_count == 4  # the listing's count, not the 3 rows read
    region = profile.columns["region"]
    assert not region.complete and set(region.values) <= {"North", "South", "California"}


def test_a_pass_stops_at_max_scans_and_the_next_starts_with_what_was_left(shop: Path) -> None:
    connector = DuckDBConnector(shop)
    sent = record_runs(connector)
    try:
        catalog = Catalog(connector, limits=ProfileLimits(max_scans=1), profile=True)
        first = catalog.refresh()
        first_pass, sent[:] = list(sent), []
        second = catalog.refresh()
    finally:
        connector.close()
    # customers (first by name) costs three queries, which spend the budget: orders waits
    assert len(first_pass) == 3 and all("customers" in sql for sql in first_pass)
    assert first.profile("shop.main.orders") is None
    assert len(sent) == 1 and "orders" in sent[0]
    assert second.profile("shop.main.orders") is not None
    assert second.profile("shop.main.customers") == first.profile("shop.main.customers")

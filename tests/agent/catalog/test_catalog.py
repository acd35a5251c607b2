"""The catalog's snapshots: built at start in the background, published once per change."""

from __future__ import annotations

import threading

from agent.catalog.profiling import ProfileLimits, profile_table
from agent.catalog.snapshot import Catalog, CatalogSnapshot
from connectors.base import TableProfile
from connectors.duckdb.connector import DuckDBConnector
from tests.agent import context_fixtures
from tests.support.sent import record_runs

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent
shop_connector = context_fixtures.shop_connector


def test_profile_lists_low_cardinality_values_and_samples_the_rest(
    shop_connector: DuckDBConnector,
) -> None:
    customers = shop_connector.describe("customers")
    profile = profile_table(
        shop_connector, customers, ProfileLimits(complete_values=3, top_values=2)
    )
    assert profile.row_count == 4
    region = profile.columns["region"]
    assert region.complete and region.values == ("North", "California", "South")
    names = profile.columns["customer_name"]
    assert not names.complete and names.distinct == 4 and len(names.values) == 2
    assert profile.columns["customer_id"].values == ()  # numbers: counts only


def test_first_snapshot_comes_at_once_profiles_follow_in_the_background(
    shop_connector: DuckDBConnector,
) -> None:
    published: list[CatalogSnapshot] = []
    catalog = Catalog(shop_connector, on_refresh=published.append)
    first = catalog.snapshot()
    assert {t.short_name for t in first.tables} == {"customers", "orders"}
    assert catalog.wait_idle()
    current = catalog.snapshot()
    assert current is not first and current.profile("shop.main.customers") is not None
    assert published == [first, current]
    # the profiles changed, the tables did not: the gate schema is not built again
    assert current.gate_schema is first.gate_schema


def test_start_builds_everything_in_the_background_before_the_first_question(
    shop_connector: DuckDBConnector,
) -> None:
    built: list[tuple[CatalogSnapshot, str]] = []
    catalog = Catalog(
        shop_connector, on_refresh=lambda s: built.append((s, threading.current_thread().name))
    )
    catalog.start()
    assert catalog.wait_idle()
    assert [name for _, name in built] == ["catalog-refresh", "catalog-refresh"]
    current = catalog.snapshot()  # the first question's: built already, nothing to wait for
    assert current is built[-1][0] and current.profile("shop.main.orders") is not None
    assert len(built) == 2


def test_a_question_during_start_waits_for_the_table_list_instead_of_reading_it(
    shop_connector: DuckDBConnector,
) -> None:
    reading, release = threading.Event(), threading.Event()
    reads: list[str] = []
    real = shop_connector.list_tables

    def list_tables() -> list:
        reads.append(threading.current_thread().name)
        reading.set()
        release.wait(timeout=30)
        return real()

    shop_connector.list_tables = list_tables  # type: ignore[method-assign]
    catalog = Catalog(shop_connector)
    catalog.start()
    assert reading.wait(timeout=30)
    answers: list[CatalogSnapshot] = []
    question = threading.Thread(target=lambda: answers.append(catalog.snapshot()))
    question.start()
    release.set()
    question.join(timeout=30)
    assert catalog.wait_idle()
    assert len(answers) == 1 and reads == ["catalog-refresh"]


def test_a_refresh_that_finds_nothing_changed_publishes_nothing(
    shop_connector: DuckDBConnector,
) -> None:
    published: list[CatalogSnapshot] = []
    try:
        catalog = Catalog(shop_connector, ttl_s=0.0, on_refresh=published.append)
        current = catalog.refresh()
        assert len(published) == 2  # the table list, then the profiles
        assert catalog.snapshot() is current  # stale: served as is, a refresh started
        assert catalog.wait_idle()
        assert catalog.refresh() is current and len(published) == 2
    finally:
        catalog.wait_idle()


def test_new_profiles_of_the_same_tables_share_the_gate_schema(
    shop_connector: DuckDBConnector,
) -> None:
    first = CatalogSnapshot(tuple(shop_connector.list_tables()), "duckdb")
    schema = first.gate_schema
    second = first.with_profiles({"shop.main.orders": TableProfile(3)})
    assert second.gate_schema is schema and second.by_key == first.by_key
    assert second.profile("shop.main.orders") == TableProfile(3) and first.profiles == {}


def test_scans_read_at_most_max_scan_rows_and_list_no_values_of_a_cut_table(
    shop_connector: DuckDBConnector,
) -> None:
    sent = record_runs(shop_connector)
    customers = shop_connector.describe("customers")
    profile = profile_table(shop_connector, customers, ProfileLimits(max_scan_rows=3))
    assert sent and all("LIMIT 3)" in sql for sql in sent)
    assert profile.row_count == 4  # the listing's count, not the 3 rows read
    region = profile.columns["region"]
    assert not region.complete and set(region.values) <= {"North", "South", "California"}


def test_a_pass_stops_at_max_scans_and_the_next_starts_with_what_was_left(
    shop_connector: DuckDBConnector,
) -> None:
    sent = record_runs(shop_connector)
    catalog = Catalog(shop_connector, limits=ProfileLimits(max_scans=1), profile=True)
    first = catalog.refresh()
    first_pass, sent[:] = list(sent), []
    second = catalog.refresh()
    # customers (first by name) costs three queries, which spend the budget: orders waits
    assert len(first_pass) == 3 and all("customers" in sql for sql in first_pass)
    assert first.profile("shop.main.orders") is None
    assert len(sent) == 1 and "orders" in sent[0]
    assert second.profile("shop.main.orders") is not None
    assert second.profile("shop.main.customers") == first.profile("shop.main.customers")

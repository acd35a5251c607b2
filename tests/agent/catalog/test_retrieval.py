"""The context step: whole schema when small, the right few tables when large, real values."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from agent.catalog.retrieval import TableIndex
from agent.catalog.snapshot import CatalogSnapshot, ColumnProfile, TableProfile
from agent.model.question_context import ContextBuilder, ContextLimits, approx_tokens, table_text
from bench import synthetic
from connectors.base import ColumnInfo, TableInfo
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, clarify

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent

AUTHOR = TableInfo(
    "academic.main.author",
    (ColumnInfo("aid", "BIGINT", "Author id"), ColumnInfo("name", "VARCHAR", "Author name")),
)
WRITES = TableInfo(
    "academic.main.writes",
    (ColumnInfo("aid", "BIGINT", "Author id"), ColumnInfo("pid", "BIGINT", "Paper id")),
)
PAPER = TableInfo(
    "academic.main.publication",
    (
        ColumnInfo("pid", "BIGINT", "Paper id"),
        ColumnInfo("title", "VARCHAR", "Title"),
        ColumnInfo("venue", "VARCHAR", "Where it appeared"),
    ),
)


@cache
def big_snapshot() -> CatalogSnapshot:
    """600 generated tables and the academic three; one for the module (a snapshot is immutable,
    and a builder warms each snapshot it is given once)."""
    tables, profiles = synthetic.generate(600)
    profiles["academic.main.publication"] = TableProfile(
        3, {"venue": ColumnProfile(2, ("NeurIPS", "VLDB"), complete=True)}
    )
    return CatalogSnapshot((*tables, AUTHOR, WRITES, PAPER), "duckdb", profiles)


def test_a_large_catalog_sends_the_matching_tables_and_their_join_partners() -> None:
    builder = ContextBuilder()
    context = builder.build("How many papers did each author publish at VLDB?", big_snapshot())
    assert not context.full_schema
    assert {"academic.main.author", "academic.main.writes", "academic.main.publication"} <= set(
        context.tables
    )
    assert len(context.tables) <= ContextLimits().max_tables
    assert "(values: 'NeurIPS', 'VLDB')" in context.text
    assert context.tokens < builder.full_schema_tokens(big_snapshot()) / 10


def test_a_question_matching_no_table_says_so() -> None:
    context = ContextBuilder().build("Is there a meaning to suffering in life?", big_snapshot())
    assert context.tables == () and "No table of this warehouse" in context.text


def test_a_small_warehouse_is_shown_whole_with_real_values(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([clarify("This shop data has no weather records.")])
    outcome = agent.ask("t1", "Will it rain on our customers tomorrow?", user="U1")
    assert outcome.kind == "clarify" and "no weather" in outcome.message
    system = str(model.seen[0][0].content)
    assert "-- One row per customer account (4 rows)\nCREATE TABLE shop.main.customers (" in system
    assert "region VARCHAR -- Sales region of the customer (values: 'North'," in system
    assert "shop.main.orders" in system
    assert "the data cannot answer it" in system


def _table(name: str, *columns: str) -> TableInfo:
    return TableInfo(
        name, tuple(ColumnInfo(c, "VARCHAR" if c == "kind" else "BIGINT") for c in columns)
    )


def test_every_match_brings_its_join_partner_before_any_brings_a_second() -> None:
    # the lookalike schema wins (two `transactions` tables) and its tables have many partners;
    # the real `sbTransaction` still gets its `sbCustomer`
    lookalikes = [
        _table("warehouse.crm.transactions_daily", "transaction_id", "account_id"),
        _table("warehouse.crm.transactions_history", "transaction_id", "account_id"),
        *(_table(f"warehouse.crm.account_{n}", "account_id", f"{n}_score") for n in "abcd"),
    ]
    real = [
        _table("broker.main.sbTransaction", "sbTxId", "sbTxCustId", "kind"),
        _table("broker.main.sbCustomer", "sbCustId", "sbCustName"),
    ]
    profiles = {
        "broker.main.sbtransaction": TableProfile(2, {"kind": ColumnProfile(2, ("buy", "sell"))})
    }
    index = TableIndex(CatalogSnapshot((*lookalikes, *real), "duckdb", profiles))
    ranked = index.rank("sell transactions", top=3, limit=6)
    matches = [r.table.name for r in ranked if r.reason == "match"]
    assert matches[-1] == "broker.main.sbTransaction"
    assert "broker.main.sbCustomer" in [r.table.name for r in ranked if r.reason == "join"]


def test_a_key_named_after_a_table_joins_it_even_when_that_table_keys_on_a_bare_id() -> None:
    snapshot = CatalogSnapshot(
        (
            _table("dealer.main.sales", "id", "customer_id", "sale_price"),
            _table("dealer.main.customers", "id", "first_name", "state"),
            _table("dealer.main.cars", "id", "make", "model"),
        ),
        "duckdb",
    )
    ranked = TableIndex(snapshot).rank("total sale price", top=1, limit=2)
    assert [(r.table.name, r.reason) for r in ranked] == [
        ("dealer.main.sales", "match"),
        ("dealer.main.customers", "join"),
    ]


def test_a_repeated_question_word_weighs_no_more_than_once() -> None:
    index = TableIndex(big_snapshot())
    once = index.scores("Return the customer name and their orders")
    twice = index.scores("Return the customer name. Return their orders")
    assert (once == twice).all()


def test_a_table_too_long_for_the_remaining_budget_is_shown_with_a_few_values() -> None:
    places = tuple(f"Somewhere along the long road number {n}" for n in range(20))
    orders = _table("shop.main.orders", "order_id", "store_id")
    stores = TableInfo(
        "shop.main.stores",
        (ColumnInfo("store_id", "BIGINT"), ColumnInfo("address", "VARCHAR")),
    )
    profiles = {"shop.main.stores": TableProfile(20, {"address": ColumnProfile(20, places, True)})}
    snapshot = CatalogSnapshot((orders, stores), "duckdb", profiles)
    limits = ContextLimits(full_schema_tokens=0)
    full = table_text(stores, snapshot, limits)
    budget = approx_tokens(table_text(orders, snapshot, limits)) + approx_tokens(full) // 2
    context = ContextBuilder(limits=replace(limits, table_tokens=budget)).build(
        "orders per store", snapshot
    )
    assert context.tables == ("shop.main.orders", "shop.main.stores")
    assert "address VARCHAR -- (e.g. 'Somewhere along" in context.text and full not in context.text

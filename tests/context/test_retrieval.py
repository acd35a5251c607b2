"""The context step: whole schema when small, the right few tables when large, real values."""

from __future__ import annotations

from agent.catalog import CatalogSnapshot, ColumnProfile, TableProfile
from agent.question_context import ContextBuilder, ContextLimits
from bench import synthetic
from connectors.base import ColumnInfo, TableInfo
from tests.context.conftest import MakeAgent, clarify

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


def big_snapshot() -> CatalogSnapshot:
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
    assert "[values: 'NeurIPS', 'VLDB']" in context.text
    assert context.tokens < builder.full_schema_tokens(big_snapshot()) / 10


def test_a_question_matching_no_table_says_so() -> None:
    context = ContextBuilder().build("Is there a meaning to suffering in life?", big_snapshot())
    assert context.tables == () and "No table of this warehouse" in context.text


def test_a_small_warehouse_is_shown_whole_with_real_values(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([clarify("This shop data has no weather records.")])
    outcome = agent.ask("t1", "Will it rain tomorrow?", user="U1")
    assert outcome.kind == "clarify" and "no weather" in outcome.message
    system = str(model.seen[0][0].content)
    assert "shop.main.customers -- One row per customer account (4 rows)" in system
    assert "region VARCHAR -- Sales region of the customer [values: 'North'," in system
    assert "shop.main.orders" in system
    assert "the data cannot answer it" in system

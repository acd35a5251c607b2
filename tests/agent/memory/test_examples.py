"""Learning from approvals: verified examples stored, offered for similar questions, retired."""

from __future__ import annotations

from pathlib import Path

from agent.catalog.snapshot import CatalogSnapshot
from agent.memory.examples import ExampleStore
from connectors.base import ColumnInfo, TableInfo
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, reply

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent

TOTAL = "SELECT SUM(amount) AS total FROM orders"


def test_an_approved_run_with_rows_becomes_an_example_offered_later(make_agent: MakeAgent) -> None:
    agent, model, deps = make_agent([reply(TOTAL), reply(TOTAL)])
    proposal = agent.ask("t1", "total order amount?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    [example] = deps.examples.active()
    assert (example.question, example.approved_by) == ("total order amount?", "U2")
    assert example.tables == ("shop.main.orders",)
    assert example.columns == ("shop.main.orders.amount",)

    agent.ask("t2", "what is the total order amount this year?", user="U3")
    system = str(model.seen[1][0].content)
    assert "Verified examples" in system and "Q: total order amount?" in system


def test_runs_without_rows_and_rejections_teach_nothing(make_agent: MakeAgent) -> None:
    empty = "SELECT order_id FROM orders WHERE amount > 100"
    agent, _, deps = make_agent([reply(empty), reply(TOTAL)])
    proposal = agent.ask("t1", "big orders?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    proposal = agent.ask("t2", "total amount?", user="U1").proposal
    assert proposal
    agent.decide("t2", proposal.proposal_id, approved=False, user="U2")
    assert deps.examples.active() == []


def test_examples_reading_dropped_tables_or_columns_are_retired(tmp_path: Path) -> None:
    store = ExampleStore(tmp_path / "examples.db")
    for question, column in (("total?", "amount"), ("by channel?", "channel")):
        store.add(
            question,
            f"SELECT {column} FROM shop.main.orders",
            tables=["shop.main.orders"],
            columns=[f"shop.main.orders.{column}"],
            approved_by="U2",
        )
    orders = TableInfo("shop.main.orders", (ColumnInfo("amount", "DOUBLE"),))
    retired = store.retire_missing(CatalogSnapshot((orders,), "duckdb"))
    assert len(retired) == 1
    store.close()
    reopened = ExampleStore(tmp_path / "examples.db")
    assert [e.question for e in reopened.active()] == ["total?"]
    assert reopened.similar("channel breakdown") == []
    assert [e.question for e in reopened.similar("what is the total")] == ["total?"]

"""A question none of whose words occur in the warehouse (agent/model/question_context.py): by
default it is asked what data it means, with no model call (agent/nodes/match.py); with that
strategy off, the model, shown the whole schema, is told so after the tables, and may say the data
cannot answer it. Real DuckDB shop with value profiles, scripted model."""

from __future__ import annotations

from pathlib import Path

from agent.catalog.glossary import Glossary
from agent.catalog.snapshot import Catalog
from agent.model.question_context import ContextBuilder
from agent.strategies.options import parse_strategies
from connectors.duckdb.connector import DuckDBConnector
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, clarify, reply

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent
shop_connector = context_fixtures.shop_connector

NOTE = "None of the question's words occurs in these tables"


def test_only_a_question_with_no_word_of_the_warehouse_gets_the_note(
    shop_connector: DuckDBConnector,
) -> None:
    catalog = Catalog(shop_connector)
    snapshot = catalog.refresh()
    builder = ContextBuilder()
    unrelated = builder.build("What is the national animal of Canada?", snapshot)
    assert unrelated.unmatched
    assert NOTE in unrelated.text.split("\n\n")[-1]  # after the tables: a cached prefix
    # a column's name, a description's word, a profiled value each count as a match
    for question in (
        "How many orders?",
        "Which accounts are there?",  # "One row per customer account"
        "Who lives in California?",
    ):
        context = builder.build(question, snapshot)
        assert not context.unmatched and NOTE not in context.text, question
    # paraphrases (the variations strategy) widen the match
    widened = builder.build("What do we sell?", snapshot, also=["total order amount"])
    assert not widened.unmatched


def test_it_is_asked_what_data_it_means_without_a_model_call(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply("SELECT COUNT(*) AS n FROM customers")])
    outcome = agent.ask("t1", "What is the national animal of Canada?", user="U1")
    assert outcome.kind == "clarify" and model.calls == 0
    assert outcome.message.startswith("None of your question's words occurs in this warehouse")
    assert "This warehouse holds: customers, orders." in outcome.message
    account = agent.explain("t1")
    assert account is not None and [s["kind"] for s in account.steps][-1] == "unmatched"
    # the next question in the thread is looked at afresh
    assert agent.ask("t1", "How many customers?", user="U1").kind == "proposal"
    assert model.calls == 1


def test_a_glossary_term_is_a_match(tmp_path: Path, make_agent: MakeAgent) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text("terms:\n  - term: turnover\n    definition: Money from orders.\n")
    agent, model, _ = make_agent([reply("SELECT SUM(amount) AS t FROM orders")])
    assert agent.ask("t1", "What is the turnover?", user="U1").kind == "clarify"
    assert model.calls == 0
    agent, model, _ = make_agent(
        [reply("SELECT SUM(amount) AS t FROM orders")], glossary=Glossary.load(path)
    )
    assert agent.ask("t1", "What is the turnover?", user="U1").kind == "proposal"
    assert model.calls == 1


def test_a_question_over_a_waiting_proposal_follows_it(make_agent: MakeAgent) -> None:
    """Asked before the proposal is decided, "and last year?" is read with the question it
    follows: the words match, and the model sees the proposal in the history."""
    sql = "SELECT region, COUNT(*) AS n FROM customers GROUP BY region"
    agent, model, _ = make_agent([reply(sql), reply(sql)])
    assert agent.ask("t1", "How many customers by region?", user="U1").kind == "proposal"
    assert agent.ask("t1", "And last year?", user="U1").kind == "proposal"
    history = "\n".join(str(m.content) for m in model.seen[1])
    assert "Q: How many customers by region?" in history
    assert "Outcome: proposed, not run" in history


def test_the_model_told_so_may_decline(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent(
        [clarify("This shop's data cannot say: it records orders.")],
        strategies=parse_strategies("default,-ask_unmatched"),
    )
    outcome = agent.ask("t1", "What is the national animal of Canada?", user="U1")
    assert outcome.kind == "clarify" and "cannot say" in outcome.message
    assert NOTE in str(model.seen[0][0].content)


def test_a_follow_up_is_matched_with_the_question_it_follows(make_agent: MakeAgent) -> None:
    sql = "SELECT region, COUNT(*) AS n FROM customers GROUP BY region"
    agent, model, _ = make_agent([reply(sql), reply(sql)])
    first = agent.ask("t1", "How many customers by region?", user="U1").proposal
    assert first is not None
    assert agent.decide("t1", first.proposal_id, approved=True, user="U2").kind == "answer"
    assert agent.ask("t1", "And just the top two?", user="U1").kind == "proposal"
    assert NOTE not in str(model.seen[1][0].content)

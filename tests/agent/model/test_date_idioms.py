"""The dialect's date idioms reach the prompt only when the tables shown have date columns."""

from __future__ import annotations

from pathlib import Path

import duckdb
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from connectors.duckdb.connector import DuckDBConnector
from tests.agent import context_fixtures
from tests.agent.context_fixtures import MakeAgent, reply

# The catalogue tests' fixtures (a customers/orders shop, an agent that profiles it).
shop = context_fixtures.shop
make_agent = context_fixtures.make_agent


def _system_prompt(model: ScriptedChatModel) -> str:
    return str(model.seen[0][0].content)


def test_a_warehouse_with_dates_gets_its_dialects_date_idioms(tmp_path: Path) -> None:
    path = tmp_path / "dated.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE visits (visit_id INTEGER, visited_on DATE, year INTEGER)")
    connector = DuckDBConnector(path)
    try:
        model = ScriptedChatModel(replies=[reply("SELECT count(*) FROM visits")])
        deps = AgentDeps(connector=connector, model=model, limits=AgentLimits(profile_values=False))
        Agent(deps, InMemorySaver()).ask("t1", "visits last month?", user="U1")
    finally:
        connector.close()
    prompt = _system_prompt(model)
    assert "Dates in this dialect" in prompt
    assert "date_trunc('month', current_date) - INTERVAL 1 MONTH" in prompt


def test_a_warehouse_without_dates_gets_none(make_agent: MakeAgent) -> None:
    """A year kept as a number beside date idioms got year() applied to it."""
    agent, model, _ = make_agent([reply("SELECT count(*) FROM orders")])
    agent.ask("t1", "how many orders?", user="U1")
    prompt = _system_prompt(model)
    assert "Today's date is" in prompt
    assert "Dates in this dialect" not in prompt

"""A top-N answer carries the measure it ranks by: through the real graph, gate and engine, the
scripted model's SQL ranks by a value it does not return, the proposal returns it, the account
lists the gate's fix, and the answer's result has the column. On DuckDB (the shop) and
PostgreSQL (the sample database)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.outcome import Answer
from connectors.sql.connector import SqlConnector
from tests.agent.conftest import MakeAgent, reply
from tests.support.sql_fixtures import postgres_sample


def answered(bot: Agent, question: str, measure: str) -> Answer:
    """Ask, check the proposal returns `measure` and names the fix, approve and run."""
    proposal = bot.ask("t1", question, user="U1").proposal
    assert proposal is not None
    assert measure in proposal.sql
    fix = f"added the ranking measure {measure} to the result"
    account = bot.explain("t1", proposal.proposal_id)
    assert account is not None
    [step] = [s for s in account.steps if s["kind"] == "gate_fix"]
    assert fix in step["changes"] and fix in step["text"]
    outcome = bot.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert outcome.answer is not None, outcome.message
    return outcome.answer


def test_which_region_has_the_most_sales_shows_the_count_on_duckdb(
    make_agent: MakeAgent,
) -> None:
    sql = "SELECT region FROM sales GROUP BY region ORDER BY COUNT(*) DESC LIMIT 1"
    bot, _, _ = make_agent([reply(sql, "The region with the most sales.")])
    answer = answered(bot, "which region has the most sales?", "COUNT(*) AS count")
    assert answer.columns == ["region", "count"]
    assert [list(row) for row in answer.rows] == [["North", 2]]


@pytest.fixture
def postgres() -> Iterator[SqlConnector]:
    with postgres_sample() as sample:
        connector = SqlConnector(sample.url)
        try:
            yield connector
        finally:
            connector.close()


@pytest.mark.slow
def test_who_was_paid_the_most_shows_the_total_on_postgres(postgres: SqlConnector) -> None:
    sql = "SELECT emp_no FROM hr.salaries GROUP BY emp_no ORDER BY SUM(amount) DESC LIMIT 1"
    model = ScriptedChatModel(replies=[reply(sql, "The employee paid the most.")])
    bot = Agent(AgentDeps(connector=postgres, model=model), InMemorySaver())
    answer = answered(
        bot, "which employee has the highest total salary?", "SUM(amount) AS sum_amount"
    )
    assert answer.columns == ["emp_no", "sum_amount"]
    # emp_no 10087 has the top salary each year (tests/support/sql_fixtures.py SALARIES)
    assert [[row[0], float(row[1])] for row in answer.rows] == [[10087, 196500.0]]

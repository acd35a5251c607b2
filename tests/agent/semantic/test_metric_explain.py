"""The account ("How did you get this?") of a governed answer names the metric definitions it
used: each metric's name, what it is computed from (its measure, filter or expression) and its
description, as the card shows them, not only the summary line "MetricFlow compiled the
SQL...". In the real graph over the shop's DuckDB and its dbt project, with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, Strategies
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.semantic.artifacts import ProjectArtifacts
from bot.blocks.explain import explanation
from connectors.duckdb.connector import DuckDBConnector
from tests.support.shop_build import BuiltProject

pytestmark = pytest.mark.slow  # the shop is built with dbt once per session

#: The shop's definitions (tests/support/shop/models/semantic.yml) as Metric.definition() renders
#: them.
REVENUE = (
    "revenue (simple: order_total): What customers paid for their orders, returned orders included."
)
REFUNDS = (
    "refunds (simple: order_total) where {{ Dimension('order__status') }} = 'returned': "
    "Amounts paid back for returned orders (0 in a period without returns)."
)
NET_REVENUE = "net_revenue (derived: revenue - refunds): Revenue less refunds."


@pytest.fixture
def shop_agent(shop_project: BuiltProject) -> Iterator[Any]:
    connectors: list[DuckDBConnector] = []

    def make(replies: list[str]) -> Agent:
        connector = DuckDBConnector(shop_project.database)
        connectors.append(connector)
        deps = AgentDeps(
            connector=connector,
            model=ScriptedChatModel(replies=replies),
            strategies=Strategies(follow_ups=False),
            project=ProjectArtifacts(shop_project.target),
        )
        return Agent(deps, InMemorySaver())

    yield make
    for connector in connectors:
        connector.close()


def _metric_reply(metrics: list[str]) -> str:
    query = {
        "metrics": metrics,
        "group_by": [{"name": "metric_time", "grain": "month"}],
        "order_by": [{"name": "metric_time"}],
    }
    return json.dumps({"kind": "metric", "explanation": "By month.", "query": query})


def test_the_account_of_a_governed_answer_names_each_metric_definition(shop_agent: Any) -> None:
    agent = shop_agent([_metric_reply(["revenue", "refunds"])])
    proposal = agent.ask("t1", "Revenue and refunds by month", user="U1").proposal
    assert proposal is not None
    assert proposal.label == "governed: metrics revenue, refunds, by month"
    assert proposal.definitions == [REVENUE, REFUNDS]  # what the card shows
    answer = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None and answer.label == proposal.label

    account = agent.explain("t1", proposal.proposal_id)
    assert account is not None
    assert account.summary().startswith(
        "MetricFlow compiled the SQL from the team's metric definitions; governed: metrics "
        "revenue, refunds"
    )
    (step,) = [s for s in account.steps if s["kind"] == "metric"]
    # each metric by name, with its measure, its filter and its description
    assert step["text"] == (
        "The model chose a metric query and MetricFlow compiled it (governed: metrics revenue, "
        f"refunds, by month) from the team's definitions: {REVENUE}; {REFUNDS}"
    )
    # and what a person reads in Slack after clicking "How did you get this?"
    message = explanation(account)
    assert message.text.startswith("How I got this: MetricFlow compiled the SQL")
    blocks = json.dumps(message.blocks)
    assert "revenue (simple: order_total): What customers paid" in blocks
    assert "refunds (simple: order_total) where" in blocks
    assert "Amounts paid back for returned orders" in blocks


def test_the_account_of_a_derived_metric_names_its_expression(shop_agent: Any) -> None:
    agent = shop_agent([_metric_reply(["net_revenue"])])
    proposal = agent.ask("t1", "Net revenue by month", user="U1").proposal
    assert proposal is not None
    assert proposal.label == "governed: metric net_revenue, by month"
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    account = agent.explain("t1", proposal.proposal_id)
    assert account is not None
    (step,) = [s for s in account.steps if s["kind"] == "metric"]
    assert step["text"].endswith(f"from the team's definitions: {NET_REVENUE}")

"""A dbt metric the asker's identity may not read is, to that question, a metric the project does
not define: naming it says nothing about it (no step of the account, no model call), just as
naming a made-up one does. Over the shop's DuckDB and dbt project, each identity held to a table
allowlist (customers_only reads dim_customers; revenue is a metric of fct_orders)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, Strategies
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.semantic.artifacts import ProjectArtifacts
from connectors.allowlist import TableAllowlist
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.conftest import reply
from tests.support.shop_build import BuiltProject, build_shop

pytestmark = pytest.mark.slow  # the shop is built with dbt

CUSTOMERS = "SELECT COUNT(*) AS customers FROM shop.main.dim_customers"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> BuiltProject:
    return build_shop(tmp_path_factory.mktemp("dbt"))


@pytest.fixture
def bot(shop: BuiltProject) -> Iterator[tuple[Agent, ScriptedChatModel]]:
    connector = DuckDBConnector(shop.database)
    model = ScriptedChatModel(replies=[reply(CUSTOMERS, "Counts customers.")] * 2)
    deps = AgentDeps(
        connector=TableAllowlist(connector, {"customers_only": ["dim_customers"]}),
        model=model,
        strategies=Strategies(follow_ups=False),
        project=ProjectArtifacts(shop.target),
        run_as_required=True,
    )
    assert deps.metrics is not None
    yield Agent(deps, InMemorySaver()), model
    connector.close()


def test_a_metric_the_identity_may_not_read_is_as_one_never_defined(
    bot: tuple[Agent, ScriptedChatModel],
) -> None:
    agent, model = bot
    steps = {}
    for thread, word in (("hidden", "revenue"), ("made_up", "zorblax")):
        asked = agent.ask(
            thread, f"What was {word} by month per customer?", user="U1", identity="customers_only"
        )
        assert asked.proposal is not None and asked.proposal.label == "ad hoc SQL"
        account = agent.explain(thread)
        assert account is not None
        steps[word] = [(s["kind"], s["text"].replace(word, "…")) for s in account.steps]
    assert steps["revenue"] == steps["zorblax"]
    assert not any("access" in text for _, text in steps["revenue"])
    assert model.calls == 2  # the SQL step's alone: the metric step asked nothing

"""End to end: the agent graph with the scripted model proposes Looker SQL, the gate holds it to
Looker's rules (a broken rule goes back to the repair step), and the approved query runs through
JDBC against the HSQLDB stand-in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from bot.settings import Settings
from bot.wiring import Deployment
from connectors import open_connector
from connectors.duckdb.connector import DuckDBConnector
from connectors.looker.connector import LookerConnector
from tests.fixtures.looker import standin
from tests.support.sql_text import one_line

GOOD = (
    "SELECT `orders.status`, AGGREGATE(`orders.total_amount`) AS revenue "
    "FROM `shop`.`orders` GROUP BY `orders.status` ORDER BY revenue DESC;"
)


def reply(sql: str) -> str:
    return json.dumps({"kind": "sql", "explanation": "Revenue by order status.", "sql": sql})


@pytest.fixture(scope="module")
def standin_url() -> str:
    return standin.build("looker_agent")


@pytest.fixture
def looker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> Iterator[LookerConnector]:
    monkeypatch.delenv("LOOKER_SAMPLE_ROWS", raising=False)
    for name, value in standin.env(standin_url).items():
        monkeypatch.setenv(name, value)
    connector = open_connector("looker://looker.example.com/shop", data_dir=tmp_path)
    assert isinstance(connector, LookerConnector)
    yield connector
    connector.close()


def agent_over(looker: LookerConnector, replies: list[str]) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    # value profiling sends ordinary SQL aggregates over every column, measures included,
    # which Looker refuses; the connector's sample rows stand in for it
    deps = AgentDeps(connector=looker, model=model, limits=AgentLimits(profile_values=False))
    return Agent(deps, InMemorySaver()), model


def test_a_broken_rule_is_repaired_and_the_approved_query_runs(looker: LookerConnector) -> None:
    broken = "SELECT `orders.status`, SUM(`orders.total_amount`) FROM `shop`.`orders` GROUP BY 1"
    agent, model = agent_over(looker, [reply(broken), reply(GOOD)])
    outcome = agent.ask("t1", "revenue by order status?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal

    system = model.seen[0][0].content
    assert "Looker's Open SQL Interface" in system and "AGGREGATE(" in system
    assert "orders.total_amount" in system and "LookML measure" in system
    assert "Sample rows of `orders.id`" in system
    repair = model.seen[1][-1].content
    assert "Looker SQL rule broken: a LookML measure may appear only inside AGGREGATE()" in repair

    proposal = outcome.proposal
    assert one_line(proposal.sql) == (
        "SELECT `orders.status`, AGGREGATE(`orders.total_amount`) AS `revenue` "
        "FROM `shop`.`orders` GROUP BY `orders.status` ORDER BY `revenue` DESC LIMIT 1000"
    )
    assert proposal.tables == ["shop.orders"]
    answer = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None
    assert answer.connector == "looker"
    assert answer.columns == ["orders.status", "revenue"]
    assert answer.rows == [["complete", 35], ["cancelled", 3]]


def test_rules_broken_every_time_end_in_a_clear_failure(looker: LookerConnector) -> None:
    join = (
        "SELECT `orders.status` FROM `shop`.`orders` JOIN `shop`.`users` "
        "ON `orders.id` = `users.id`"
    )
    agent, model = agent_over(looker, [reply(join)] * 3)
    outcome = agent.ask("t1", "orders with their users?", user="U1")
    assert outcome.kind == "failed" and model.calls == 3
    assert agent.pending_proposal("t1") is None
    assert "no JOIN" in model.seen[1][-1].content


def test_value_profiling_is_off_for_looker_by_default(
    looker: LookerConnector, demo: DuckDBConnector, tmp_path: Path
) -> None:
    script = tmp_path / "none.jsonl"
    script.write_text("", encoding="utf-8")
    env = {"QUERYBOT_MODEL": f"scripted:{script}", "QUERYBOT_DATA_DIR": str(tmp_path)}
    settings = Settings.from_env(env, dotenv=False)
    deployment = Deployment(settings)
    try:
        assert not deployment.agent_for(looker, name="looker").deps.limits.profile_values
        assert deployment.agent_for(demo, name="demo").deps.limits.profile_values
    finally:
        deployment.close()

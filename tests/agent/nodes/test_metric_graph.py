"""The metric step in the real graph: over the shop's DuckDB and its dbt project, with a scripted
model. A question naming a defined metric gets a governed proposal (MetricFlow's SQL, through the
gate and the approval like any draft); one that names none, or that no metric fits, gets the
model's SQL labelled ad hoc; a refused metric query is corrected once with "did you mean"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, Strategies
from agent.conversation import Agent
from agent.graph import model_step
from agent.model.providers import ScriptedChatModel
from agent.semantic.artifacts import ProjectArtifacts
from agent.state import ThreadState
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.conftest import reply
from tests.support.shop_build import BuiltProject

pytestmark = pytest.mark.slow  # the shop is built with dbt once per session

BY_MONTH = {
    "metrics": ["revenue"],
    "group_by": [{"name": "metric_time", "grain": "month"}],
    "order_by": [{"name": "metric_time"}],
}
NAMES_SQL = "SELECT customer_name FROM shop.main.dim_customers ORDER BY customer_name"


def metric_reply(query: dict[str, Any] | None, kind: str = "metric") -> str:
    return json.dumps({"kind": kind, "explanation": "Revenue by month.", "query": query})


@pytest.fixture
def make_shop_agent(
    shop_project: BuiltProject,
) -> Iterator[Any]:
    opened: list[DuckDBConnector] = []

    def make(replies: list[str]) -> tuple[Agent, ScriptedChatModel]:
        model = ScriptedChatModel(replies=replies)
        connector = DuckDBConnector(shop_project.database)
        opened.append(connector)
        deps = AgentDeps(
            connector=connector,
            model=model,
            strategies=Strategies(follow_ups=False),
            project=ProjectArtifacts(shop_project.target),
        )
        assert deps.metrics is not None
        return Agent(deps, InMemorySaver()), model

    yield make
    for connector in opened:
        connector.close()


def test_a_metric_question_gets_a_governed_answer(make_shop_agent: Any) -> None:
    agent, model = make_shop_agent([metric_reply(BY_MONTH)])
    outcome = agent.ask("t1", "What was revenue by month?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None
    proposal = outcome.proposal
    assert proposal.label == "governed: metric revenue, by month"
    assert proposal.definitions[0].startswith("revenue (simple: order_total)")
    assert proposal.tables == ["shop.main.fct_orders"]
    assert "DATE_TRUNC('MONTH'" in proposal.sql.upper() or "date_trunc" in proposal.sql
    # what the model was shown: the metrics, and dimensions with their documented values
    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "- net_revenue (derived: revenue - refunds)" in shown
    assert "- customer__region (categorical): The sales region" in shown
    assert "(values: 'EU', 'NA', 'APAC')" in shown
    answer = agent.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None
    assert [row[1] for row in answer.rows] == [250, 380, 395]
    assert answer.label == proposal.label
    account = agent.explain("t1")
    assert account is not None
    assert account.summary().startswith(
        "MetricFlow compiled the SQL from the team's metric definitions; governed: metric revenue"
    )
    assert model.calls == 1


def test_verified_examples_keep_working_beside_governed_answers(make_shop_agent: Any) -> None:
    """An approved ad hoc answer becomes a verified example shown to later SQL drafts; an
    approved governed one does not (the metric step answers it again)."""
    agent, model = make_shop_agent(
        [metric_reply(BY_MONTH), reply(NAMES_SQL, "Names."), reply(NAMES_SQL, "Names again.")]
    )
    governed = agent.ask("t1", "revenue by month", user="U1").proposal
    assert governed is not None and governed.label.startswith("governed")
    agent.decide("t1", governed.proposal_id, approved=True, user="U2")
    assert agent.deps.examples.active() == []
    names = agent.ask("t2", "List the names of our customers", user="U1").proposal
    assert names is not None and names.label == "ad hoc SQL"
    agent.decide("t2", names.proposal_id, approved=True, user="U2")
    assert [e.question for e in agent.deps.examples.active()] == ["List the names of our customers"]
    agent.ask("t3", "Names of all customers, please", user="U1")
    shown = "\n".join(str(m.content) for m in model.seen[-1])
    assert "Q: List the names of our customers" in shown


def test_a_question_naming_no_metric_is_ad_hoc_sql_without_a_metric_call(
    make_shop_agent: Any,
) -> None:
    agent, model = make_shop_agent([reply(NAMES_SQL, "Lists customer names.")])
    outcome = agent.ask("t1", "List the names of our customers", user="U1")
    assert outcome.proposal is not None
    assert outcome.proposal.label == "ad hoc SQL"
    assert outcome.proposal.definitions == []
    assert model.calls == 1  # the SQL step only


def test_when_no_metric_fits_the_model_writes_sql(make_shop_agent: Any) -> None:
    sql = "SELECT COUNT(DISTINCT region) FROM shop.main.dim_customers"
    agent, model = make_shop_agent([metric_reply(None, kind="none"), reply(sql, "Counts regions.")])
    outcome = agent.ask("t1", "How many regions do customers with revenue come from?", user="U1")
    assert outcome.proposal is not None and outcome.proposal.label == "ad hoc SQL"
    assert model.calls == 2
    account = agent.explain("t1")
    assert account is not None
    assert any(s["kind"] == "metric_none" for s in account.steps)
    assert account.summary().startswith("The model wrote the SQL")


def test_a_metric_the_question_does_not_name_is_not_used(make_shop_agent: Any) -> None:
    """evals/shop-metrics.yaml adhoc-02: "orders" names order_count, so the model is asked; it
    chose refunds (one total) where the question wants the returned orders listed. Code, not the
    model, turns that down: the question goes to the SQL step."""
    refunds = {"metrics": ["refunds"]}
    sql = "SELECT order_id FROM shop.main.fct_orders WHERE status = 'returned'"
    agent, model = make_shop_agent([metric_reply(refunds), reply(sql, "Returned orders.")])
    outcome = agent.ask("t1", "Which orders were returned?", user="U1")
    assert outcome.proposal is not None
    assert outcome.proposal.label == "ad hoc SQL"
    assert "status = 'returned'" in outcome.proposal.sql
    assert model.calls == 2  # the metric step asked once, then the SQL step
    account = agent.explain("t1")
    assert account is not None
    (step,) = [s for s in account.steps if s["kind"] == "metric_none"]
    assert "refunds, which the question does not name" in step["text"]


def test_a_synonym_in_the_projects_meta_names_its_metric(make_shop_agent: Any) -> None:
    """The shop's revenue metric has `meta: {synonyms: [turnover, takings]}`."""
    agent, model = make_shop_agent([metric_reply(BY_MONTH)])
    proposal = agent.ask("t1", "takings by month", user="U1").proposal
    assert proposal is not None
    assert proposal.label == "governed: metric revenue, by month"
    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "(also called turnover, takings) (owner: finance)" in shown  # the rest of its meta


def test_a_refused_metric_query_is_corrected_once_with_did_you_mean(
    make_shop_agent: Any,
) -> None:
    wrong = {**BY_MONTH, "metrics": ["revnue"]}
    agent, model = make_shop_agent([metric_reply(wrong), metric_reply(BY_MONTH)])
    outcome = agent.ask("t1", "revenue by month", user="U1")
    assert outcome.proposal is not None
    assert outcome.proposal.label == "governed: metric revenue, by month"
    repair = str(model.seen[1][-1].content)
    assert "Unknown metric 'revnue'; did you mean 'revenue'" in repair


def test_a_metric_query_refused_twice_falls_back_to_sql(make_shop_agent: Any) -> None:
    wrong = {**BY_MONTH, "metrics": ["revnue"]}
    sql = "SELECT SUM(amount) AS revenue FROM shop.main.fct_orders"
    agent, model = make_shop_agent([metric_reply(wrong), metric_reply(wrong), reply(sql)])
    outcome = agent.ask("t1", "total revenue of the orders", user="U1")
    assert outcome.proposal is not None and outcome.proposal.label == "ad hoc SQL"
    assert model.calls == 3


def test_a_follow_up_stays_a_metric_query(make_shop_agent: Any) -> None:
    by_region = {"metrics": ["revenue"], "group_by": [{"name": "customer__region"}]}
    agent, model = make_shop_agent([metric_reply(BY_MONTH), metric_reply(by_region)])
    first = agent.ask("t1", "revenue by month", user="U1").proposal
    assert first is not None
    agent.decide("t1", first.proposal_id, approved=True, user="U1")
    # "now by region" names no metric: it follows a governed answer, so the metric step runs
    outcome = agent.ask("t1", "now by region", user="U1")
    assert outcome.proposal is not None
    assert outcome.proposal.label == "governed: metric revenue, by customer region"
    history = "\n".join(str(m.content) for m in model.seen[1])
    assert 'Metric query: {"metrics": ["revenue"]' in history
    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U1").answer
    assert answer is not None
    assert sorted((r[0], r[1]) for r in answer.rows) == [("APAC", 220), ("EU", 465), ("NA", 340)]


def test_without_metrics_the_graph_has_no_metric_step() -> None:
    assert model_step({}, Strategies()) == "match"
    assert model_step({}, Strategies(), metrics=True) == "metric"
    assert model_step({"metric": {"used": False, "why": "x"}}, Strategies(), True) == "match"
    matched: ThreadState = {"metric": {"used": False, "why": "x"}, "matched": True}
    assert model_step(matched, Strategies(), True) == "generate"


def test_metrics_added_by_a_new_parse_are_used_without_a_restart(
    shop_project: BuiltProject, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    shutil.copy(shop_project.target / "manifest.json", target)  # no semantic layer yet
    model = ScriptedChatModel(replies=[reply("SELECT SUM(amount) FROM shop.main.fct_orders")])
    connector = DuckDBConnector(shop_project.database)
    try:
        deps = AgentDeps(connector=connector, model=model, project=ProjectArtifacts(target))
        agent = Agent(deps, InMemorySaver())
        first = agent.ask("t1", "total revenue of the orders", user="U1").proposal
        assert first is not None and first.label == ""  # no metrics: nothing to tell apart
        assert model.calls == 1  # and no metric step
        shutil.copy(shop_project.target / "semantic_manifest.json", target)
        model.replies.append(metric_reply(BY_MONTH))
        second = agent.ask("t2", "revenue by month", user="U1").proposal
        assert second is not None and second.label == "governed: metric revenue, by month"
    finally:
        connector.close()

"""A glossary term that names a metric the dbt project defines defers to the metric's definition:
the SQL step is shown how the metric is computed, not the glossary's own expression."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.glossary import Glossary, Term
from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.model.question_context import defer_to_metrics
from agent.semantic.artifacts import ProjectArtifacts
from agent.semantic.semantic_manifest import Measure, Metric, SemanticLayer, SemanticModel
from connectors.duckdb.connector import DuckDBConnector
from tests.support.shop_build import BuiltProject

LAYER = SemanticLayer(
    models=(SemanticModel("orders", "db.main.orders", measures=(Measure("total", "sum", "amt"),)),),
    metrics={
        "gross_sales": Metric("gross_sales", "simple", label="Sales", inputs=("total",)),
        "aov": Metric("aov", "ratio", inputs=("gross_sales", "n")),
    },
)
SALES = Term("sales", "Money in.", aliases=("turnover",), expression="sum(price)", tables=("t",))


def test_a_term_naming_a_metric_takes_its_definition() -> None:
    assert LAYER.terms()["gross sales"] == ("gross_sales", "SUM(amt) of db.main.orders")
    (term, other) = defer_to_metrics([SALES, Term("churn", "Lost customers.")], LAYER.terms())
    assert (
        term.definition == "the defined metric gross_sales, computed as SUM(amt) of db.main.orders"
    )
    assert term.expression == "" and term.tables == ("t",)
    assert other == Term("churn", "Lost customers.")
    # an alias names it as well; a ratio says what it divides
    (by_alias,) = defer_to_metrics([Term("turnover", "x", aliases=("AOV",))], LAYER.terms())
    assert by_alias.definition == "the defined metric aov, computed as aov (ratio: gross_sales / n)"


@pytest.mark.slow
def test_the_sql_step_is_shown_the_metric_not_the_glossary_expression(
    shop_project: BuiltProject, shop_warehouse: DuckDBConnector
) -> None:
    glossary = Glossary([Term("revenue", "Money earned.", expression="sum(quantity * price)")])
    deps = AgentDeps(
        connector=shop_warehouse,
        model=ScriptedChatModel(replies=[]),
        glossary=glossary,
        project=ProjectArtifacts(shop_project.target),
    )
    text = deps.context.build("revenue per region", deps.catalog.snapshot()).text
    assert (
        '- revenue: the defined metric revenue, computed as SUM(amount) of "shop"."main".'
        '"fct_orders": What customers paid' in text
    )
    assert "sum(quantity * price)" not in text


@pytest.mark.slow
def test_a_glossary_alias_of_a_metric_leads_to_the_metric_step(
    shop_project: BuiltProject, shop_warehouse: DuckDBConnector
) -> None:
    """ "Sales" names no metric; the glossary says it is revenue: the question gets a governed
    answer."""
    glossary = Glossary([Term("revenue", "Money earned.", aliases=("sales",))])
    query = {"metrics": ["revenue"], "group_by": [{"name": "customer__region"}]}
    model = ScriptedChatModel(replies=[json.dumps({"kind": "metric", "query": query})])
    deps = AgentDeps(
        connector=shop_warehouse,
        model=model,
        glossary=glossary,
        project=ProjectArtifacts(shop_project.target),
    )
    assert deps.metrics is not None
    assert deps.metrics.mentioned("sales per region") == []
    assert deps.metrics.mentioned("sales per region", glossary) == ["revenue"]
    proposal = Agent(deps, InMemorySaver()).ask("t1", "sales per region", user="U1").proposal
    assert proposal is not None
    assert proposal.label == "governed: metric revenue, by customer region"

"""The metric step under run_as, over the shop's DuckDB and its dbt project: each identity is held
to a table allowlist (connectors/allowlist.py), and is shown, and may choose, only the metrics
and dimensions of the tables it may read (agent/semantic/readable.py). What the scripted model
was shown is checked in its recorded prompts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.glossary import Glossary, Term
from agent.context import AgentDeps, Strategies
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.semantic.artifacts import ProjectArtifacts
from agent.semantic.metric_query import MetricQuery
from agent.semantic.readable import not_offered, readable_layer
from agent.semantic.semantic_manifest import Metric, SemanticLayer
from connectors.allowlist import TableAllowlist
from connectors.base import TableInfo
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.conftest import reply
from tests.support.shop_build import BuiltProject

pytestmark = pytest.mark.slow  # the shop is built with dbt once per session

ALLOWLISTS = {
    "orders_only": ["fct_orders"],
    "customers_only": ["dim_customers"],
    "everything": ["fct_orders", "dim_customers", "metricflow_time_spine"],
}
#: What the orders' semantic model (fct_orders) puts in a prompt: its metrics' names and
#: descriptions, its dimensions, its measures.
OF_ORDERS = (
    "order_count",
    "net_revenue",
    "average_order_value",
    "refunds",
    "What customers paid",
    "turnover",
    "order__status",
    "order__ordered_at",
    "order_total",
    "fct_orders",
)
#: What the customers' semantic model (dim_customers) puts in a prompt.
OF_CUSTOMERS = (
    "new_customers",
    "Customers who signed up",
    "customer__region",
    "customer__signup_date",
    "The sales region",
    "'APAC'",
    "dim_customers",
)


def metric_reply(query: dict[str, Any]) -> str:
    return json.dumps({"kind": "metric", "explanation": "Revenue.", "query": query})


def prompts_of(model: ScriptedChatModel) -> list[str]:
    return ["\n".join(str(m.content) for m in messages) for messages in model.seen]


@pytest.fixture
def make_agent(shop_project: BuiltProject) -> Iterator[Any]:
    opened: list[DuckDBConnector] = []

    def make(replies: list[str]) -> tuple[Agent, ScriptedChatModel]:
        model = ScriptedChatModel(replies=replies)
        connector = DuckDBConnector(shop_project.database)
        opened.append(connector)
        deps = AgentDeps(
            connector=TableAllowlist(connector, ALLOWLISTS),
            model=model,
            strategies=Strategies(follow_ups=False),
            project=ProjectArtifacts(shop_project.target),
            run_as_required=True,
        )
        assert deps.metrics is not None
        return Agent(deps, InMemorySaver()), model

    yield make
    for connector in opened:
        connector.close()


def test_a_metric_over_a_table_the_identity_may_not_read_is_never_shown(
    make_agent: Any,
) -> None:
    """customers_only names revenue (fct_orders): the metric step asks no model, the SQL step
    is shown nothing of fct_orders, and SQL over it is refused before it is proposed."""
    sql = "SELECT SUM(amount) FROM shop.main.fct_orders"
    bot, model = make_agent([reply(sql, "Sums the orders.")])
    question = "What was revenue from customers by month?"  # customers: a word of its tables
    outcome = bot.ask("t1", question, user="U1", identity="customers_only")
    assert outcome.kind == "failed" and outcome.proposal is None
    assert outcome.message.startswith("Answering this needs shop.main.fct_orders, which is not")
    assert model.calls == 1  # the SQL step's; the metric step made none
    [shown] = prompts_of(model)
    assert [word for word in OF_ORDERS if word in shown] == []


def test_a_metric_the_identity_may_not_read_is_no_match_for_the_question(
    make_agent: Any,
) -> None:
    """Only revenue (fct_orders) matches "revenue by month": asked as customers_only, the
    question names nothing that identity may read, so code asks back, naming its tables only;
    asked as orders_only, the readable metric is a match and the model is asked."""
    bot, model = make_agent([])
    outcome = bot.ask("t1", "What was revenue by month?", user="U1", identity="customers_only")
    assert outcome.kind == "clarify" and model.calls == 0
    assert "dim_customers" in outcome.message
    assert [word for word in OF_ORDERS if word in outcome.message] == []
    bot, model = make_agent([metric_reply({"metrics": ["revenue"]})])
    outcome = bot.ask("t2", "What was revenue by month?", user="U1", identity="orders_only")
    assert outcome.proposal is not None and model.calls == 1


def test_a_hidden_dimension_the_model_chooses_is_not_offered(make_agent: Any) -> None:
    """orders_only is shown the orders' metrics and dimensions only; the model's choice of
    customer__region (dim_customers) counts as "none", and the SQL step answers ad hoc."""
    by_region = {"metrics": ["revenue"], "group_by": ["customer__region"]}
    sql = "SELECT SUM(amount) AS revenue FROM shop.main.fct_orders"
    bot, model = make_agent([metric_reply(by_region), reply(sql, "Sums the orders.")])
    outcome = bot.ask("t1", "What was revenue by region?", user="U1", identity="orders_only")
    assert outcome.proposal is not None and outcome.proposal.label == "ad hoc SQL"
    assert outcome.proposal.run_as == "orders_only"
    metric_prompt, sql_prompt = prompts_of(model)
    assert "- revenue (simple: order_total)" in metric_prompt
    assert "- net_revenue (derived: revenue - refunds)" in metric_prompt
    assert "- order__status (categorical)" in metric_prompt
    for shown in (metric_prompt, sql_prompt):
        assert [word for word in OF_CUSTOMERS if word in shown] == []
    account = bot.explain("t1")
    assert account is not None
    assert any(
        s["kind"] == "metric_none" and "your access may not read" in s["text"]
        for s in account.steps
    )
    answer = bot.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None and [tuple(r) for r in answer.rows] == [(1025,)]


def test_an_identity_that_may_read_everything_gets_the_governed_answer(make_agent: Any) -> None:
    by_month = {
        "metrics": ["revenue"],
        "group_by": [{"name": "metric_time", "grain": "month"}],
        "order_by": [{"name": "metric_time"}],
    }
    bot, model = make_agent([metric_reply(by_month)])
    outcome = bot.ask("t1", "What was revenue by month?", user="U1", identity="everything")
    proposal = outcome.proposal
    assert proposal is not None and proposal.label == "governed: metric revenue, by month"
    assert proposal.run_as == "everything"
    [shown] = prompts_of(model)
    assert "- new_customers (simple: customers_signed_up)" in shown
    assert "- customer__region (categorical): The sales region" in shown
    answer = bot.decide("t1", proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None
    assert [row[1] for row in answer.rows] == [250, 380, 395]


def test_what_each_set_of_tables_is_offered(shop_project: BuiltProject) -> None:
    layer = ProjectArtifacts(shop_project.target).current().semantic
    assert layer is not None
    orders = TableInfo(name="main.fct_orders", columns=())
    customers = TableInfo(name="shop.main.dim_customers", columns=())
    offered = readable_layer(layer, [customers])
    assert list(offered.metrics) == ["new_customers"]
    assert list(offered.dimensions) == [
        "metric_time",
        "customer__region",
        "customer__signup_date",
    ]
    assert list(offered.entities) == ["customer"]
    assert set(readable_layer(layer, [orders]).metrics) == set(layer.metrics) - {"new_customers"}
    assert readable_layer(layer, []).metrics == {}
    assert readable_layer(layer, [orders, customers]).metrics == layer.metrics
    # a metric whose inputs cannot be told (a conversion metric, an unknown input, a cycle)
    # is not offered
    odd = {
        "converted": Metric("converted", "conversion"),
        "lost": Metric("lost", "simple", inputs=("no_such_measure",)),
        "loop": Metric("loop", "derived", inputs=("loop", "revenue"), expr="loop + revenue"),
        "share": Metric("share", "ratio", inputs=("new_customers", "revenue")),
        # a filter on a dimension of another table joins that table
        "eu_revenue": Metric(
            "eu_revenue",
            "simple",
            filter="{{ Dimension('customer__region') }} = 'EU'",
            inputs=("order_total",),
        ),
        "recent": Metric(
            "recent",
            "simple",
            filter="{{ TimeDimension('order__ordered_at__month') }} >= '2024-01-01'",
            inputs=("order_total",),
        ),
    }
    mixed = SemanticLayer(layer.models, {**layer.metrics, **odd})
    kept = readable_layer(mixed, [orders, customers]).metrics
    assert {"share", "eu_revenue", "recent"} <= set(kept)
    assert not {"converted", "lost", "loop"} & set(kept)
    of_orders = readable_layer(mixed, [orders]).metrics
    assert "recent" in of_orders and not {"share", "eu_revenue"} & set(of_orders)
    # a name of the layer outside the offered part; an unknown one is left to the check
    only_orders = readable_layer(layer, [orders])

    def hidden(query: dict[str, Any]) -> bool:
        return not_offered(MetricQuery.model_validate(query), layer, only_orders)

    assert hidden({"metrics": ["new_customers"]})
    assert hidden({"metrics": ["revenue"], "group_by": ["customer"]}) is False  # orders' too
    region = {"name": "customer__region", "operator": "=", "values": ["EU"]}
    assert hidden({"metrics": ["revenue"], "where": [region]})
    assert not hidden({"metrics": ["revenue"], "group_by": ["regio"]})


def test_a_glossary_term_defers_only_to_a_metric_the_identity_may_read(
    shop_project: BuiltProject, shop_warehouse: DuckDBConnector
) -> None:
    """The SQL step's glossary: "revenue" defers to the metric's definition (which names
    fct_orders) only for an identity that may read fct_orders; others see the term's own."""
    glossary = Glossary([Term("revenue", "Money earned.", expression="sum(quantity * price)")])
    deps = AgentDeps(
        connector=TableAllowlist(shop_warehouse, ALLOWLISTS),
        model=ScriptedChatModel(replies=[]),
        glossary=glossary,
        project=ProjectArtifacts(shop_project.target),
        run_as_required=True,
    )

    def shown(identity: str) -> str:
        view = deps.visible(identity)
        return deps.context.build("revenue per region", view, restricted=True).text

    hidden = shown("customers_only")
    assert "- revenue: Money earned." in hidden
    assert [word for word in (*OF_ORDERS, "defined metric") if word in hidden] == []
    assert "the defined metric revenue, computed as SUM(amount) of" in shown("everything")

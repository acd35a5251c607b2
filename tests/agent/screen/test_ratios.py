"""What a proposal's ratios divide by, said by code (agent.screen.ratios): a share over the whole,
a margin after a filter, a per-entity average over distinct entities, a total of a query of its
own, an average over rows; through the agent with the scripted model on DuckDB and PostgreSQL,
and on the card and in the terminal. And the ratios wrong whatever the data (one divided by
itself, a part the WHERE already keeps every row to) sent back to the model, or, from a person,
proposed with a warning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from agent.screen.ratios import ratio_bases, ratio_problems, unasked_average
from bot.blocks import proposal as proposal_card
from bot.commands.terminal import proposal_text
from connectors import open_connector
from connectors.base import Connector
from tests.agent.conftest import reply
from tests.support.pgdb import postgres_reader

SHARE = (
    "SELECT SUM(CASE WHEN region = 'North' THEN amount ELSE 0 END) * 1.0 / SUM(amount) AS share "
    "FROM sales"
)


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        (SHARE, "`share` divides by SUM(amount), over the rows the query reads."),
        (
            "SELECT SUM(profit) / SUM(amount) AS margin FROM sales WHERE region = 'North'",
            "`margin` divides by SUM(amount), over the rows the query reads after its filter "
            "(region = 'North').",
        ),
        (
            "SELECT region, SUM(amount) / COUNT(DISTINCT customer_id) AS per_customer "
            "FROM sales GROUP BY region",
            "`per_customer` divides by COUNT(DISTINCT customer_id): per distinct customer_id, "
            "within each region.",
        ),
        (
            "SELECT 100.0 * SUM(amount) / (SELECT SUM(amount) FROM sales) AS pct FROM sales "
            "WHERE region = 'North'",
            "`pct` divides by (SELECT SUM(amount) FROM sales), a total of a query of its own.",
        ),
        (
            "SELECT AVG(s.amount) AS average FROM sales AS s JOIN customers AS c "
            "ON c.customer_id = s.customer_id",
            "`average` averages s.amount over each row of sales joined to customers the query "
            "reads.",
        ),
    ],
)
def test_each_base_in_words(sql: str, said: str) -> None:
    assert ratio_bases(sql, "duckdb") == [said]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT region, SUM(amount) AS total FROM sales GROUP BY region",
        "SELECT amount / 2 AS half FROM sales",  # no aggregate base: nothing to say
        "SELECT SUM(amount) OVER () / 3 AS w FROM sales",
        "SELECT AVG(amount) OVER (PARTITION BY region) AS running FROM sales",
        "not sql at all (",
    ],
)
def test_nothing_is_said_without_a_ratio_or_average(sql: str) -> None:
    assert ratio_bases(sql, "duckdb") == []


def test_bases_are_said_in_the_dialect_written() -> None:
    sql = "SELECT SUM(`amount`) / COUNT(DISTINCT `customer_id`) AS r FROM `p.d.sales`"
    assert ratio_bases(sql, "bigquery") == [
        "`r` divides by COUNT(DISTINCT `customer_id`): per distinct `customer_id`."
    ]


SALES_ROWS = "('North', 10.50, 1), ('North', 4.50, 2), ('South', 7.00, 1), ('East', 1.25, 3)"


@pytest.fixture(params=["duckdb", "postgres"])
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Connector]:
    """The same small sales table in DuckDB and in a scratch PostgreSQL database."""
    create = "CREATE TABLE sales (region TEXT, amount DECIMAL(10, 2), customer_id INTEGER)"
    if request.param == "duckdb":
        path = tmp_path / "sales.duckdb"
        con = duckdb.connect(str(path))
        con.execute(create)
        con.execute(f"INSERT INTO sales VALUES {SALES_ROWS}")
        con.close()
        connector = open_connector(f"duckdb:{path}", data_dir=tmp_path)
        try:
            yield connector
        finally:
            connector.close()
        return

    def fill(admin: psycopg.Connection) -> None:
        admin.execute(create)
        admin.execute(f"INSERT INTO sales VALUES {SALES_ROWS}")

    with postgres_reader(fill) as url:
        connector = open_connector(url, data_dir=tmp_path)
        try:
            yield connector
        finally:
            connector.close()


def test_the_proposal_the_card_and_the_terminal_say_the_base(warehouse: Connector) -> None:
    per_customer = (
        "SELECT SUM(amount) * 1.0 / COUNT(DISTINCT customer_id) AS per_customer FROM sales"
    )
    model = ScriptedChatModel(replies=[reply(per_customer, "Revenue per customer.")])
    agent = Agent(AgentDeps(connector=warehouse, model=model), InMemorySaver())
    outcome = agent.ask("t1", "average revenue per customer?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None
    said = "`per_customer` divides by COUNT(DISTINCT customer_id): per distinct customer_id."
    assert outcome.proposal.bases == [said]
    card = str(proposal_card(outcome.proposal, requested_by="U1").blocks)
    assert "per distinct customer_id" in card
    assert f"Base: {said}" in proposal_text(outcome.proposal)
    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None and float(answer.rows[0][0]) == pytest.approx(23.25 / 3)


ITSELF = "SELECT SUM(amount) * 100 / SUM(amount) AS pct FROM sales WHERE region = 'North'"
KEPT = (
    "SELECT CAST(SUM(CASE WHEN s.region = 'North' THEN 1 ELSE 0 END) AS DOUBLE) / COUNT(*) AS "
    "share FROM sales AS s WHERE region = 'North' AND amount > 1"
)


def test_a_ratio_of_itself_and_a_part_the_where_keeps_are_problems() -> None:
    [itself] = ratio_problems(ITSELF, "duckdb")
    assert itself.startswith("`pct` divides SUM(amount) by itself, so it is always 1")
    [kept] = ratio_problems(KEPT, "duckdb")
    assert kept.startswith("`share` counts the part where s.region = 'North', but the WHERE")
    filtered = (
        "SELECT COUNT(*) FILTER (WHERE region = 'x') / COUNT(*) AS r FROM sales WHERE region = 'x'"
    )
    assert len(ratio_problems(filtered, "postgres")) == 1


@pytest.mark.parametrize(
    "sql",
    [
        SHARE,
        "SELECT 100.0 * COUNT(*) FILTER (WHERE region = 'North') / COUNT(*) AS pct FROM sales",
        "SELECT SUM(CASE WHEN region = 'North' THEN amount END) / SUM(amount) AS s FROM sales "
        "WHERE amount > 1",
        "SELECT SUM(amount) / (SELECT SUM(amount) FROM sales) AS s FROM sales WHERE region = 'x'",
        "SELECT SUM(profit) / SUM(amount) AS margin FROM sales",
    ],
)
def test_ratios_that_can_be_right_are_no_problem(sql: str) -> None:
    assert ratio_problems(sql, "duckdb") == []


def test_a_ratio_of_itself_goes_back_to_the_model(warehouse: Connector) -> None:
    model = ScriptedChatModel(replies=[reply(ITSELF, "Share."), reply(SHARE, "Share.")])
    agent = Agent(AgentDeps(connector=warehouse, model=model), InMemorySaver())
    outcome = agent.ask("t1", "what share of sales is North's?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None
    assert model.calls == 2, "repaired once"
    repair = "\n".join(str(m.content) for m in model.seen[1])
    assert "divides SUM(amount) by itself" in repair
    assert "CASE WHEN" in outcome.proposal.sql


def test_with_no_try_left_it_is_proposed_with_the_problem_as_a_warning(
    warehouse: Connector,
) -> None:
    model = ScriptedChatModel(replies=[reply(ITSELF, "Share.")])
    deps = AgentDeps(connector=warehouse, model=model, limits=AgentLimits(max_attempts=1))
    outcome = Agent(deps, InMemorySaver()).ask("t1", "what share of sales is North's?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None
    assert any("by itself" in w for w in outcome.proposal.warnings)


PER_PRODUCT = (
    "SELECT region, SUM(amount) / COUNT(DISTINCT customer_id) AS revenue FROM sales GROUP BY region"
)


@pytest.mark.parametrize(
    ("question", "flagged"),
    [
        ("What is the revenue per region?", True),
        ("revenue by region", True),
        ("What is the average revenue per customer in each region?", False),
        ("revenue per customer on average, by region", False),
        ("what share of revenue does each region bring?", False),
        ("revenue per region as a percentage", False),
    ],
)
def test_an_average_the_question_did_not_ask_for(question: str, flagged: bool) -> None:
    found = unasked_average(question, PER_PRODUCT, "duckdb")
    assert bool(found) is flagged
    if flagged:
        assert found[0].startswith("`revenue` divides by the number of distinct customer_id")
    total = "SELECT region, SUM(amount) AS revenue FROM sales GROUP BY region"
    assert unasked_average(question, total, "duckdb") == []


def test_an_unasked_average_goes_back_to_the_model(warehouse: Connector) -> None:
    total = "SELECT region, SUM(amount) AS revenue FROM sales GROUP BY region"
    model = ScriptedChatModel(replies=[reply(PER_PRODUCT, "Revenue."), reply(total, "Revenue.")])
    agent = Agent(AgentDeps(connector=warehouse, model=model), InMemorySaver())
    outcome = agent.ask("t1", "What is the revenue per region?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal is not None and model.calls == 2
    assert "asks for no average" in "\n".join(str(m.content) for m in model.seen[1])
    assert "COUNT(DISTINCT" not in outcome.proposal.sql

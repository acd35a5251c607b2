"""A question's period is never dropped silently: a loosened query keeps the date filter when
something else can be loosened, and when the period is the only thing left it says so, with
the dates the data covers; an empty answer filtered on a period says which dates the data holds.
Over the real DuckDB test warehouse (tests/support/shop)."""

from __future__ import annotations

import pytest

from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentLimits, Strategies
from agent.conversation import Agent
from agent.strategies.relax import Period, periods, relax
from connectors.base import ColumnInfo, TableInfo
from tests.agent.conftest import MakeAgent, reply

SALES = TableInfo(
    "shop.main.sales",
    (
        ColumnInfo("region", "VARCHAR"),
        ColumnInfo("amount", "DECIMAL"),
        ColumnInfo("sold_on", "DATE"),
    ),
)
SNAPSHOT = CatalogSnapshot(tables=(SALES,), dialect="duckdb")
LATER = "SELECT SUM(amount) AS total FROM sales WHERE sold_on >= DATE '2030-01-01'"


def covered(agent: Agent) -> str:
    """What the shop's sales.sold_on covers, as the bot words it."""
    first, last = agent.deps.connector.run(
        "SELECT min(sold_on), max(sold_on) FROM sales", max_rows=1, timeout_s=30
    ).rows[0]
    return f"The data covers {first.isoformat()} to {last.isoformat()} (sales.sold_on)."


def test_the_period_is_kept_when_something_else_can_be_loosened() -> None:
    sql = "SELECT SUM(amount) FROM sales WHERE region = 'north' AND sold_on >= DATE '2030-01-01'"
    relaxed = relax(sql, SNAPSHOT, ["shop.main.sales"])
    assert relaxed is not None and relaxed.period is None
    assert "sold_on >= CAST('2030-01-01' AS DATE)" in relaxed.sql


def test_a_dropped_period_is_named_with_its_table() -> None:
    relaxed = relax(
        "SELECT SUM(s.amount) FROM sales AS s"
        " WHERE s.sold_on BETWEEN '2030-01-01' AND '2030-02-01'",
        SNAPSHOT,
        ["shop.main.sales"],
    )
    assert relaxed is not None
    assert relaxed.period == Period(
        "sold_on", "shop.main.sales", "s.sold_on BETWEEN '2030-01-01' AND '2030-02-01'"
    )
    assert periods("SELECT 1 FROM sales WHERE amount > 3", SNAPSHOT, ["shop.main.sales"]) == []


def test_dropping_the_period_says_what_the_data_covers_and_that_it_answers_another_period(
    make_agent: MakeAgent,
) -> None:
    agent, _, _ = make_agent([reply(LATER)], limits=AgentLimits(profile_values=True))
    first = agent.ask("t1", "sales since 2030?", user="U1").proposal
    assert first
    second = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert second.kind == "proposal" and second.proposal and second.answer
    assert covered(agent) in second.message
    assert "The only filter I could loosen is the period asked for" in second.message
    assert "so I loosened it: dropped the date filter on sold_on" in second.message
    assert "answers for a different period (every date), not the one asked" in second.message
    assert "another period than the one asked" in second.proposal.explanation
    # the empty answer shown above it says so too
    assert second.answer.coverage == covered(agent)


def test_unknown_dates_are_said_to_be_unknown(make_agent: MakeAgent) -> None:
    agent, _, _ = make_agent([reply(LATER)])  # no live reads: no dates read
    first = agent.ask("t1", "sales since 2030?", user="U1").proposal
    assert first
    second = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert "I could not tell which dates the data covers." in second.message
    assert "answers for a different period" in second.message


@pytest.mark.parametrize("relax_empty", [True, False])
def test_an_empty_period_says_which_dates_the_data_covers(
    make_agent: MakeAgent, relax_empty: bool
) -> None:
    sql = "SELECT SUM(amount) AS total FROM sales WHERE sold_on < DATE '2000-01-01'"
    agent, _, _ = make_agent(
        [reply(sql, "Sales before 2000.")],
        limits=AgentLimits(profile_values=True),
        strategies=Strategies(relax_empty=relax_empty),
    )
    first = agent.ask("t1", "sales before 2000?", user="U1").proposal
    assert first
    outcome = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert outcome.answer and outcome.answer.rows == [[None]]
    assert outcome.answer.explanation == "Sales before 2000."
    assert outcome.answer.coverage == covered(agent)


def test_an_empty_result_without_a_period_says_nothing_of_dates(make_agent: MakeAgent) -> None:
    sql = "SELECT SUM(amount) AS total FROM sales WHERE amount > 100000"
    agent, _, _ = make_agent([reply(sql, "Big sales.")], limits=AgentLimits(profile_values=True))
    first = agent.ask("t1", "big sales?", user="U1").proposal
    assert first
    outcome = agent.decide("t1", first.proposal_id, approved=True, user="U2")
    assert outcome.answer and outcome.answer.explanation == "Big sales."
    assert outcome.answer.coverage == ""

"""A model draft that keeps one day of the period the question names goes back to repair
(agent/screen/periods.py), with the scripted model over a real DuckDB warehouse."""

from __future__ import annotations

import pytest

from agent.context import AgentLimits
from agent.screen.periods import named_period, one_day_filters, period_problems
from tests.agent.conftest import MakeAgent, prompt_of, reply

ONE_DAY = "SELECT SUM(amount) AS total FROM sales WHERE sold_on = DATE '2026-01-01'"
WHOLE_YEAR = "SELECT SUM(amount) AS total FROM sales WHERE year(sold_on) = 2026"


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("How many customers signed up in 2026?", "2026"),
        ("What was the revenue in March 2026?", "March 2026"),
        ("Revenue last quarter?", "last quarter"),
        ("Sales in Q3 by region", "Q3"),
        ("Revenue in May 2025", "May 2025"),
        # a day is named too, or no period at all: an equality on a date may be right
        ("How many orders on March 3, 2026?", None),
        ("Orders in the first week of January 2026 (January 1 to 7)?", None),
        ("Sales on 2026-03-01?", None),
        ("What was the first day of 2026 with a sale?", None),
        ("What may customers buy next?", None),
        ("Top 5 products by revenue", None),
    ],
)
def test_the_period_a_question_names(question: str, period: str | None) -> None:
    assert named_period(question) == period


def test_one_day_filters_are_equalities_on_one_date() -> None:
    sql = (
        "SELECT * FROM s WHERE a = '2026-01-01' AND CAST('2026-02-01' AS DATE) = b "
        "AND c = current_date AND d >= DATE '2026-03-01' AND e = 'North' AND f = '2026'"
    )
    assert sorted(one_day_filters(sql, "duckdb")) == [
        "CAST('2026-02-01' AS DATE) = b",
        "a = '2026-01-01'",
        "c = CURRENT_DATE",
    ]
    assert one_day_filters("SELECT (", "duckdb") == []


def test_a_period_filtered_as_a_range_or_a_year_passes() -> None:
    question = "What was the revenue in March 2026?"
    ranged = "SELECT 1 FROM s WHERE d >= DATE '2026-03-01' AND d < DATE '2026-04-01'"
    assert period_problems(question, ranged, "duckdb") == []
    [problem] = period_problems(question, "SELECT 1 FROM s WHERE d = '2026-03-01'", "duckdb")
    assert "keeps one day" in problem and "March 2026" in problem and "date_trunc" in problem


def test_a_draft_keeping_one_day_of_the_year_is_repaired(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(ONE_DAY), reply(WHOLE_YEAR)])
    outcome = agent.ask("t1", "What were total sales in 2026?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal, outcome
    assert "year(" in outcome.proposal.sql.lower() and model.calls == 2
    assert "keeps one day, but the question asks about 2026" in prompt_of(model, 1)
    assert not outcome.proposal.warnings


def test_with_no_attempt_left_it_is_proposed_with_the_problem_as_a_warning(
    make_agent: MakeAgent,
) -> None:
    agent, model, _ = make_agent([reply(ONE_DAY)], limits=AgentLimits(max_attempts=1))
    outcome = agent.ask("t1", "What were total sales in 2026?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal, outcome
    assert model.calls == 1
    assert any("keeps one day" in w for w in outcome.proposal.warnings)


def test_a_day_the_question_names_is_not_questioned(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(ONE_DAY)])
    outcome = agent.ask("t1", "What were total sales on January 1, 2026?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal, outcome
    assert model.calls == 1 and not outcome.proposal.warnings


def test_a_persons_edit_is_not_held_to_it(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(WHOLE_YEAR)])
    first = agent.ask("t1", "What were total sales in 2026?", user="U1")
    assert first.kind == "proposal" and first.proposal, first
    edited = agent.edit("t1", first.proposal.proposal_id, ONE_DAY, user="U2")
    assert edited.kind == "proposal" and edited.proposal, edited
    assert "2026-01-01" in edited.proposal.sql and model.calls == 1
    assert not any("keeps one day" in w for w in edited.proposal.warnings)

"""SQL a person pasted, through the graph over a real DuckDB warehouse and the real gate: judged
as written (accepted with the gate's fixes named, or refused with the reasons and what to do
next), and never sent to the scripted model, which fails the question if it is called."""

from __future__ import annotations

from typing import Any

import pytest

from agent.context import AgentLimits
from agent.conversation import Agent
from agent.nodes.paste import NEXT_STEP
from tests.agent.conftest import Make, MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


def gate_rejections(agent: Agent, thread: str) -> list[dict[str, Any]]:
    return [e for e in agent.deps.audit.events(thread) if e["event"] == "gate_rejected"]


@pytest.mark.parametrize(
    ("pasted", "reasons"),
    [
        ("SELECT * FROM sale", ["Unknown table 'sale'", "did you mean sales?"]),
        ("select regoin from sales", ["Unknown column 'regoin'", "region"]),
        ("DROP TABLE sales", ["DROP changes the database"]),
        ("delete from sales", ["DELETE writes data"]),
        ("SELECT 1; SELECT 2", ["exactly one statement", "holds 2"]),
        ("```sql\nSELECT * FROM sales\n```\n```sql\nSELECT 2\n```", ["exactly one statement"]),
        ("INSERT INTO sales VALUES ('West', 1, DATE '2026-01-01')", ["INSERT writes data"]),
        ("explain select * from sales", ["not a query"]),
    ],
)
def test_refused_sql_ends_with_the_reasons_and_no_model_call(
    make_agent: MakeAgent, pasted: str, reasons: list[str]
) -> None:
    agent, model, spy = make_agent([reply(BY_REGION)])  # what a model would have swapped in
    outcome = agent.ask("t1", pasted, user="U1")
    assert outcome.kind == "failed" and outcome.proposal is None
    assert outcome.message.startswith("I did not propose the SQL you sent")
    for reason in reasons:
        assert reason in outcome.message
    assert NEXT_STEP in outcome.message
    assert model.calls == 0 and spy.runs == 0
    assert agent.pending_proposal("t1") is None
    assert len(gate_rejections(agent, "t1")) == 1
    account = agent.explain("t1")
    assert account is not None
    assert [s["kind"] for s in account.steps] == ["question", "pasted", "checks_failed"]
    assert account.summary() == "The SQL was pasted, not written by the model."


def test_an_unknown_table_names_the_tables_the_warehouse_has(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([])
    outcome = agent.ask("t1", "SELECT * FROM ordrs", user="U1")
    assert outcome.kind == "failed"
    assert "Unknown table 'ordrs'" in outcome.message
    assert "This warehouse has these tables: sales." in outcome.message
    assert model.calls == 0


@pytest.mark.slow
def test_drop_table_is_refused_and_the_table_stays(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([])
    assert agent.ask("t1", "DROP TABLE sales", user="U1").kind == "failed"
    assert model.calls == 0 and spy.runs == 0
    assert spy.run("SELECT COUNT(*) FROM sales", max_rows=1, timeout_s=10).rows == [(4,)]


def test_accepted_sql_is_proposed_with_the_gates_fixes_named(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([], limits=AgentLimits(row_limit=50))
    outcome = agent.ask("t1", f"```sql\n{BY_REGION};\n```", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.explanation == (
        "The SQL you pasted, checked and ready to run. The checks changed it: removed trailing "
        "semicolon; row cap added (LIMIT 50)."
    )
    assert "LIMIT 50" in outcome.proposal.sql
    assert model.calls == 0


@pytest.mark.slow
def test_sql_without_a_table_is_still_the_persons_to_run(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([])
    outcome = agent.ask("t1", "select 1+1", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    answer = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2").answer
    assert answer is not None and answer.rows == [[2]]
    assert model.calls == 0


@pytest.mark.slow
def test_the_account_of_a_pasted_answer_names_no_model_correction(
    make_agent: MakeAgent,
) -> None:
    agent, model, _ = make_agent([])
    proposal = agent.ask("t1", "SELECT region FROM sales;", user="U1").proposal
    assert proposal
    outcome = agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert outcome.kind == "answer"
    account = agent.explain("t1", proposal.proposal_id)
    assert account is not None
    assert account.summary() == (
        "The SQL was pasted, not written by the model; it was adjusted by the gate."
    )
    assert "repair" not in [s["kind"] for s in account.steps]
    assert model.calls == 0


@pytest.mark.slow
def test_a_warehouse_error_ends_the_question_instead_of_a_model_repair(
    make_agent: MakeAgent,
) -> None:
    agent, model, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "SELECT CAST(region AS INTEGER) AS n FROM sales", user="U1").proposal
    assert proposal
    outcome = agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert outcome.kind == "failed" and outcome.message.startswith("The query failed")
    assert NEXT_STEP in outcome.message
    assert model.calls == 0 and spy.runs == 1
    assert agent.pending_proposal("t1") is None
    steps = agent.explain("t1", proposal.proposal_id)
    assert steps is not None and "not sent to the model" in steps.steps[-1]["text"]


@pytest.mark.slow
def test_an_edit_the_value_check_refuses_is_not_sent_to_the_model(make: Make) -> None:
    agent, model, _ = make([reply(BY_REGION)], "none")
    north = "SELECT SUM(amount) AS total FROM sales WHERE region = 'North'"
    first = agent.ask("t1", north, user="U1").proposal
    assert first
    nowhere = north.replace("North", "Nowhere")
    outcome = agent.edit("t1", first.proposal_id, nowhere, user="U3")
    assert outcome.kind == "failed" and "'Nowhere'" in outcome.message
    assert NEXT_STEP in outcome.message
    assert model.calls == 0


def test_a_question_in_words_after_a_refusal_goes_to_the_model(make_agent: MakeAgent) -> None:
    agent, model, _ = make_agent([reply(BY_REGION)])
    assert agent.ask("t1", "SELECT * FROM sale", user="U1").kind == "failed"
    outcome = agent.ask("t1", "select the top regions by revenue", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.explanation == "Sums sales by region."
    assert model.calls == 1

"""Remember failures: a person's rejection is an "avoid" hint for the rest of its thread (never
across threads), and only the model's own gate failures are remembered as its mistakes (not SQL
a person pasted or edited, nor the loosened query)."""

from __future__ import annotations

import pytest

from agent.memory.audit import sql_sha256
from agent.nodes.relax import relax
from agent.outcome import Answer, Proposal
from tests.agent.conftest import NORTH, SOUTH, Make, prompt_of, reply

REJECTED = "A person rejected this SQL, so do not propose it again"


def test_a_rejection_is_avoided_for_the_rest_of_its_thread_only(make: Make) -> None:
    agent, model, _ = make([reply(SOUTH)] * 2 + [reply(NORTH)] * 3, "none,remember_failures")
    for thread in ("t1", "t2"):  # rejected in two threads: still no pattern for a third
        proposal = agent.ask(thread, "Total sales in the North?", user="U1").proposal
        assert proposal and "'South'" in proposal.sql
        agent.decide(thread, proposal.proposal_id, approved=False, user="U2")
    assert agent.ask("t1", "Total sales in the North, then?", user="U1").kind == "proposal"
    hint = prompt_of(model, 2)
    assert "Mistakes already made" in hint and REJECTED in hint
    assert "SELECT SUM(amount) AS total FROM shop.main.sales WHERE region = 'South'" in hint
    assert agent.ask("t3", "Total sales in the North?", user="U1").kind == "proposal"
    assert REJECTED not in prompt_of(model, 3)


def test_a_rejection_is_not_remembered_when_the_strategy_is_off(make: Make) -> None:
    agent, _, _ = make([reply(SOUTH)], "none")
    proposal = agent.ask("t1", "Total sales in the North?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=False, user="U2")
    assert agent.deps.failures.hints("duckdb", "t1") == []


def test_pasted_sql_the_gate_refuses_is_not_the_models_mistake(make: Make) -> None:
    agent, model, _ = make([reply(NORTH)], "none,remember_failures")
    outcome = agent.ask("t1", "SELECT regoin FROM sales", user="U1")
    assert outcome.kind == "failed" and model.calls == 0, "refused, not sent to the model"
    assert "gate_rejected" in [e["event"] for e in agent.deps.audit.events("t1")]
    assert agent.deps.failures.hints("duckdb", "t1") == []


@pytest.mark.slow
def test_an_edit_that_fails_the_checks_is_not_the_models_mistake(make: Make) -> None:
    agent, _, _ = make([reply(NORTH), reply(NORTH)], "none,remember_failures")
    first = agent.ask("t1", "Total sales in the North?", user="U1").proposal
    assert first
    nowhere = "SELECT SUM(amount) AS total FROM sales WHERE region = 'Nowhere'"
    assert agent.edit("t1", first.proposal_id, nowhere, user="U3").kind == "proposal"
    rejected = [e for e in agent.deps.audit.events("t1") if e["event"] == "gate_rejected"]
    assert rejected and "Nowhere" in rejected[0]["sql"], "the value check refused the edit"
    assert agent.deps.failures.hints("duckdb", "t1") == []


def test_a_loosened_query_that_fails_the_checks_is_not_the_models_mistake(make: Make) -> None:
    agent, _, _ = make([], "none,remember_failures")
    empty = "SELECT regoin FROM sales WHERE sold_on > DATE '2030-01-01'"
    question, tables = "regions after 2030?", ["shop.main.sales"]
    proposal = Proposal("p1", question, empty, "Nothing after 2030.", tables, sql_sha256(empty))
    answer = Answer(
        question, empty, proposal.explanation, tables, ["regoin"], [], 0, False, 0.01, "duckdb",
        "U2", proposal_id="p1",
    )  # fmt: skip
    state = {
        "question": question,
        "user": "U1",
        "final": {"kind": "answer", "message": "0 rows", "answer": answer.to_state()},
        "proposal": proposal.to_state(),
    }
    update = relax(state, {"configurable": {"thread_id": "t1"}}, agent.deps)  # type: ignore[arg-type]
    assert update["trace"][-1]["kind"] == "not_relaxed"
    assert "did not pass the checks" in update["trace"][-1]["text"]
    assert agent.deps.failures.hints("duckdb", "t1") == []

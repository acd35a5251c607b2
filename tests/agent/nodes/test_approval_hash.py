"""An approval names the exact SQL (its hash) the person was shown, and only that SQL runs.

Over the real graph, gate and DuckDB warehouse (the scripted model proposes).
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from agent.conversation import OTHER_SQL
from agent.memory.audit import sql_sha256
from agent.nodes.execute import execute
from tests.agent.conftest import MakeAgent, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
COUNT = "SELECT COUNT(*) AS n FROM sales"


def events(agent: Any, thread: str) -> list[str]:
    return [e["event"] for e in agent.deps.audit.events(thread)]


@pytest.mark.slow
def test_a_decision_naming_other_sql_runs_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal and proposal.sql_sha256 == sql_sha256(proposal.sql)
    for named in (sql_sha256(COUNT), ""):
        outcome = agent.decide(
            "t1", proposal.proposal_id, approved=True, user="U2", sql_sha256=named
        )
        assert (outcome.kind, outcome.message) == ("failed", OTHER_SQL)
    assert spy.runs == 0 and agent.pending_proposal("t1") == proposal
    assert "approved" not in events(agent, "t1")
    named = proposal.sql_sha256
    answer = agent.decide("t1", proposal.proposal_id, approved=True, user="U2", sql_sha256=named)
    assert answer.kind == "answer" and spy.runs == 1


def test_a_resume_without_the_shown_hash_is_no_decision(make_agent: MakeAgent) -> None:
    """Past `Agent.decide` (another driver of the graph): the approve node itself refuses a
    resume that names other SQL, or none."""
    agent, _, spy = make_agent([reply(BY_REGION)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    config = {"configurable": {"thread_id": "t1"}}
    base = {"proposal_id": proposal.proposal_id, "approved": True, "by": "U2"}
    for resume in (base, {**base, "sql_sha256": sql_sha256(COUNT)}):
        agent.graph.invoke(Command(resume=resume), config)
        assert agent.pending_proposal("t1") == proposal
    assert spy.runs == 0 and "approved" not in events(agent, "t1")


@pytest.mark.slow
def test_execute_refuses_sql_other_than_the_approval_named(make_agent: MakeAgent) -> None:
    """Even with an approval of that very text in the audit log, execute runs SQL only when its
    hash is the one the decision named."""
    agent, _, spy = make_agent([])
    proposal = {
        "proposal_id": "p1",
        "question": "q",
        "sql": COUNT,
        "explanation": "",
        "tables": [],
        "sql_sha256": sql_sha256(COUNT),
        "warnings": [],
    }
    agent.deps.audit.record("t1", "approved", proposal_id="p1", actor="U2", sql=COUNT)
    decision = {"proposal_id": "p1", "approved": True, "by": "U2"}
    config = {"configurable": {"thread_id": "t1"}}
    for named in (sql_sha256(BY_REGION), None):
        named_decision = decision if named is None else {**decision, "sql_sha256": named}
        state = {"question": "q", "turns": [], "proposal": proposal, "decision": named_decision}
        update = execute(state, config, agent.deps)  # type: ignore[arg-type]
        assert update["final"]["kind"] == "failed" and spy.runs == 0
    state = {**state, "decision": {**decision, "sql_sha256": sql_sha256(COUNT)}}
    assert execute(state, config, agent.deps)["final"]["kind"] == "answer"  # type: ignore[arg-type]
    assert spy.runs == 1

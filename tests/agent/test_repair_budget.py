"""`QUERYBOT_MAX_REPAIRS` (AgentLimits.max_attempts) bounds a question as docs/how-it-works.md says:
N model attempts for each proposal, and the question's N-th warehouse error after approval ends
it, so at most N * N model calls however the drafts fail."""

from __future__ import annotations

from agent.context import AgentLimits
from tests.agent.conftest import MakeAgent, reply

#: Passes the gate (a known table and column, a pure cast) and fails in the engine.
FAILS_IN_ENGINE = "SELECT CAST(region AS INTEGER) AS r FROM sales"
#: Refused by the gate: a column the table lacks.
UNKNOWN_COLUMN = "SELECT colour FROM sales"


def test_a_question_spends_at_most_n_squared_model_calls(make_agent: MakeAgent) -> None:
    n = 3
    # each proposal: two drafts the gate refuses, then one the engine refuses after approval
    drafts = [reply(UNKNOWN_COLUMN), reply(UNKNOWN_COLUMN), reply(FAILS_IN_ENGINE)] * n
    agent, model, spy = make_agent(
        [*drafts, reply(FAILS_IN_ENGINE)], limits=AgentLimits(max_attempts=n)
    )
    outcome = agent.ask("t1", "regions as numbers?", user="U1")
    approvals = 0
    while outcome.kind == "proposal" and outcome.proposal is not None:
        approvals += 1
        outcome = agent.decide("t1", outcome.proposal.proposal_id, approved=True, user="U2")
    assert outcome.kind == "failed", outcome
    assert "The query failed" in outcome.message
    # n proposals, each approved and refused by the warehouse; the n-th error ends the question
    assert approvals == n and spy.runs == n
    assert model.calls == n * n  # the script's last reply is never asked for

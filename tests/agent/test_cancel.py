"""Cancelling an approved query while `decide` runs it, from another thread, on real DuckDB."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from agent.context import AgentLimits
from agent.conversation import Agent
from tests.agent.conftest import MakeAgent, Spy, reply

pytestmark = pytest.mark.slow

#: Four sales rows to the twentieth power: never finishes, so only the cancel ends it.
SLOW = "SELECT COUNT(*) AS n FROM sales AS s0" + "".join(
    f" CROSS JOIN sales AS s{i}" for i in range(1, 20)
)
BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
#: Generous: the cancel, not the timeout, must end the query.
LIMITS = AgentLimits(query_timeout_s=600)


def cancel_when_running(agent: Agent, spy: Spy, thread_id: str, proposal_id: str) -> None:
    """Cancel as U3 once the query runs (the connector tracks a run a moment after it is
    called, and a cancel before that stops nothing)."""
    assert spy.started.wait(60)
    while not agent.cancel(thread_id, proposal_id, user="U3"):
        pass


def test_cancel_from_another_thread_ends_the_question(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([reply(SLOW), reply(BY_REGION)], limits=LIMITS)
    proposal = agent.ask("t1", "count the sales", user="U1").proposal
    assert proposal is not None
    with ThreadPoolExecutor(max_workers=1) as pool:
        deciding = pool.submit(agent.decide, "t1", proposal.proposal_id, approved=True, user="U2")
        cancel_when_running(agent, spy, "t1", proposal.proposal_id)
        outcome = deciding.result(timeout=60)  # a guard only: the query would run for ages

    assert outcome.kind == "cancelled"
    assert outcome.message.startswith("Cancelled by U3;")
    assert outcome.answer is None
    assert spy.runs == 1 and model.calls == 1, "a cancelled query is never repaired or retried"
    events = [(e["event"], e["actor"]) for e in agent.deps.audit.events("t1")]
    assert ("cancel_requested", "U3") in events
    assert ("execution_cancelled", "U2") in events
    assert not {"executed", "execution_failed"} & {event for event, _ in events}
    cancelled = next(
        e for e in agent.deps.audit.events("t1") if e["event"] == "execution_cancelled"
    )
    assert cancelled["detail"] == {"cancelled_by": "U3"}
    assert agent.pending_proposal("t1") is None

    # The conversation goes on, and remembers the cancelled turn.
    follow_up = agent.ask("t1", "then revenue by region", user="U1")
    assert follow_up.kind == "proposal"
    assert any("Outcome: cancelled" in str(m.content) for m in model.seen[1])


def test_cancel_after_the_query_finished_stops_nothing(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([reply(BY_REGION)], limits=LIMITS)
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal is not None
    assert agent.decide("t1", proposal.proposal_id, approved=True, user="U2").kind == "answer"
    assert not agent.cancel("t1", proposal.proposal_id, user="U3")
    events = [e["event"] for e in agent.deps.audit.events("t1")]
    assert events[-2:] == ["executed", "cancel_requested"]
    assert spy.runs == 1
